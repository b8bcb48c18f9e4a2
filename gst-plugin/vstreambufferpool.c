/* vstream GStreamer plugin: a buffer pool over V4L2 streaming I/O.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Every GstBuffer of the pool stands for one V4L2 buffer index, and the
 * pool keeps a record of each index (Slot): its state, what the driver
 * has of it, and a reference to its memory: one GstMemory, or one per
 * memory plane for formats that have a memory per colour plane (NV12M and
 * kin; obj->layout), which then travel together.  The states and what
 * moves an index between them are in docs/architecture.md ("The pool's
 * states"); every move is made by set_state(), under the pool's lock, and
 * wakes whatever waits.
 *
 * A driver buffer goes back to the driver only when nobody but the pool
 * references its memory: a shallow copy, a sub-buffer (gst_buffer_copy_region
 * shares the memory), a tee branch, a videorate duplicate or a GstSample
 * may all outlive the GstBuffer the pool handed out.  So a buffer coming
 * back gives up its memory; if the pool's reference is then the only one,
 * the memory goes straight back in and the buffer back to work, else the
 * buffer is parked until the memory is let go.  The pool looks at parked
 * buffers whenever a buffer comes back or one is acquired (and while
 * waiting for the driver), so the index returns within a frame of its
 * last user letting go.  A memory left out when the pool stops keeps its
 * mapping (see vstreamallocator.c).
 *
 * Capture: start queues every buffer and turns streaming on; acquire is
 * DQBUF; a buffer released by downstream is queued again.  When handing a
 * buffer out would leave the driver with none (downstream holds or
 * references all the others), the frame is copied and the buffer
 * re-queued at once, so capture never stalls on downstream.
 *
 * Capture in userptr mode borrows: each time a buffer goes to the driver
 * it takes a free buffer of the downstream pool (the "lender", see
 * gst_vstream_buffer_pool_set_lender()) and queues that memory, so the
 * frame is pushed in downstream's own buffer.  Borrowing never waits: with
 * no free buffer the driver fills the pool buffer's own memory instead.
 *
 * Output: upstream renders into acquired buffers (offered through
 * propose_allocation); render() queues them without a copy.  Foreign
 * buffers are imported (userptr, dmabuf-import) when their layout matches
 * the driver's, else copied into a pool buffer; so are all of them once
 * the driver could not pin upstream's memory (EFAULT).  acquire reclaims
 * finished buffers with DQBUF when the free queue is empty.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <gst/allocators/gstdmabuf.h>

#include "vstreambufferpool.h"
#include "vstreammplane.h"
#include "vstreamallocator.h"
#include "vstreamformats.h"

GST_DEBUG_CATEGORY_STATIC (gst_vstream_pool_debug);
#define GST_CAT_DEFAULT gst_vstream_pool_debug

/* Where a driver buffer index is (docs/architecture.md, "The pool's
 * states"). */
typedef enum
{
  SLOT_IDLE,                    /* not the driver's: the pool's buffer is
                                 * in the free queue or out (upstream
                                 * renders into it, downstream reads it) */
  SLOT_QUEUED,                  /* in the driver */
  SLOT_PARKED,                  /* back, but its memory is still
                                 * referenced elsewhere */
} SlotState;

#define FROM(state) (1u << (state))
static const gchar *const slot_state_names[] = { "idle", "queued", "parked" };

typedef struct
{
  SlotState state;
  GstBuffer *buf;               /* QUEUED: what the driver has, the pool's
                                 * own buffer or (an importing sink)
                                 * upstream's; PARKED: the buffer, without
                                 * its memory */
  GstMemory *mem[VIDEO_MAX_PLANES];     /* the index's memory, a reference
                                         * each (NULL once stopped) */
  GstMapInfo map[VIDEO_MAX_PLANES];     /* QUEUED userptr: what the driver
                                         * was given */
  gboolean mapped;
} Slot;

struct _GstVstreamBufferPool
{
  GstBufferPool parent;
  GstVstreamObject *obj;        /* a reference */
  GstVstreamAllocator *vallocator;      /* holds the queue's file */
  gint fd;                      /* the allocator's */
  GstAllocator *dmabuf;
  GstCaps *caps;
  guint32 memory;
  guint min_count;               /* what the device needs */
  guint count;                  /* what is asked for, then what REQBUFS made */
  guint next_index;
  gboolean output;
  GstVstreamLayout layout;      /* memory planes and their sizes when made;
                                 * the device's format moves on */
  gboolean import_refused;      /* output: the driver could not pin upstream's
                                 * memory once; copy from then on */

  /* io_lock: a QBUF (with the decision to make it) against STREAMOFF and
   * the taking back of queued buffers, so a buffer coming back from
   * downstream is queued wholly before a stop or sent to the free queue
   * after it, never queued after its buffers were taken back.  Taken
   * before lock, never while holding it; recursive, as qbuf() is called
   * under it and a buffer unreffed by streamoff() may come back. */
  GRecMutex io_lock;
  GMutex lock;                  /* slot[], n_queued, n_parked, returns,
                                 * streaming, flushing, lender */
  GCond returned;               /* returns changed */
  GstBufferPool *lender;
  Slot slot[VIDEO_MAX_FRAME];
  guint n_queued, n_parked;     /* slots in those states */
  guint returns;                /* counts state changes, STREAMON and
                                 * flushing: what a wait can use */
  gboolean streaming;
  gboolean flushing;            /* unlock(): stop waiting */

  GstPoll *poll;
  GstPollFD pollfd;
};

G_DEFINE_TYPE_WITH_CODE (GstVstreamBufferPool, gst_vstream_buffer_pool,
    GST_TYPE_BUFFER_POOL, GST_DEBUG_CATEGORY_INIT (gst_vstream_pool_debug,
        "vstreambufferpool", 0, "vstream buffer pool"));

static GQuark index_quark;
static GQuark loan_quark;       /* a pool buffer's borrowed downstream one */

static gint
buffer_index (GstBuffer * buf)
{
  return GPOINTER_TO_INT (gst_mini_object_get_qdata (GST_MINI_OBJECT (buf),
          index_quark)) - 1;
}

static void
set_buffer_index (GstBuffer * buf, gint index)
{
  gst_mini_object_set_qdata (GST_MINI_OBJECT (buf), index_quark,
      GINT_TO_POINTER (index + 1), NULL);
}

static guint32
pool_memory_type (GstVstreamObject * obj)
{
  switch (obj->mode) {
    case GST_VSTREAM_IO_USERPTR:
      return V4L2_MEMORY_USERPTR;
    case GST_VSTREAM_IO_DMABUF_IMPORT:
      return V4L2_MEMORY_DMABUF;
    default:
      return V4L2_MEMORY_MMAP;
  }
}

/* @field of @pool, read under the lock */
static guint
read_locked (GstVstreamBufferPool * pool, const guint * field)
{
  guint v;

  g_mutex_lock (&pool->lock);
  v = *field;
  g_mutex_unlock (&pool->lock);
  return v;
}

guint
gst_vstream_buffer_pool_queued (GstVstreamBufferPool * pool)
{
  return read_locked (pool, &pool->n_queued);
}

/* How many buffers the pool has (asks for, before it starts). */
guint
gst_vstream_buffer_pool_count (GstVstreamBufferPool * pool)
{
  return read_locked (pool, &pool->count);
}

static gboolean
is_streaming (GstVstreamBufferPool * pool)
{
  gboolean streaming;

  g_mutex_lock (&pool->lock);
  streaming = pool->streaming;
  g_mutex_unlock (&pool->lock);
  return streaming;
}

/* Wake wait_for_return(): something changed that may let it go on.
 * Under the lock. */
static void
wake_waiters (GstVstreamBufferPool * pool)
{
  pool->returns++;
  g_cond_broadcast (&pool->returned);
}

/*
 * Move @index to @to from one of the states in @from (FROM() bits); the
 * slot keeps @buf in QUEUED and PARKED.  Every move wakes the waits:
 * each may be what one waits for.  Under the lock.
 */
static void
set_state (GstVstreamBufferPool * pool, guint index, guint from, SlotState to,
    GstBuffer * buf)
{
  Slot *slot = &pool->slot[index];

  if (!(from & FROM (slot->state)))
    g_critical ("%s: buffer %u is %s, cannot become %s",
        GST_OBJECT_NAME (pool), index, slot_state_names[slot->state],
        slot_state_names[to]);
  pool->n_queued -= slot->state == SLOT_QUEUED;
  pool->n_parked -= slot->state == SLOT_PARKED;
  slot->state = to;
  slot->buf = to == SLOT_IDLE ? NULL : buf;
  pool->n_queued += to == SLOT_QUEUED;
  pool->n_parked += to == SLOT_PARKED;
  GST_LOG_OBJECT (pool, "buffer %u: %s", index, slot_state_names[to]);
  wake_waiters (pool);
}

static GstFlowReturn
device_error (GstVstreamBufferPool * pool, const gchar * what)
{
  GstVstreamObject *obj = pool->obj;

  if (errno == ENODEV || errno == ENXIO || errno == EPIPE)
    GST_VSTREAM_ELEMENT_ERROR (obj, RESOURCE, NOT_FOUND,
        ("Device '%s' has gone away.", obj->device),
        ("%s: %s", what, g_strerror (errno)));
  else
    GST_VSTREAM_ELEMENT_ERROR (obj, RESOURCE, FAILED,
        ("Device '%s' failed: %s.", obj->device, g_strerror (errno)),
        ("%s", what));
  return GST_FLOW_ERROR;
}

static gboolean
gst_vstream_buffer_pool_set_config (GstBufferPool * bpool,
    GstStructure * config)
{
  GstVstreamBufferPool *pool = GST_VSTREAM_BUFFER_POOL (bpool);
  GstVstreamObject *obj = pool->obj;
  GstCaps *caps;
  guint size, min, max, count;
  gboolean ok = TRUE;

  if (!gst_buffer_pool_config_get_params (config, &caps, &size, &min, &max))
    return FALSE;
  /* The count asked for is made (a peer that holds buffers asks for
   * more), the device's minimum at least; the driver decides the size.
   * Tell the caller if we changed the request. */
  count = CLAMP (min, pool->min_count, VIDEO_MAX_FRAME);
  if (size < obj->info.size || min > count || max != count) {
    gst_buffer_pool_config_set_params (config, caps ? caps : pool->caps,
        MAX (size, obj->info.size), count, count);
    ok = FALSE;
  }
  pool->count = count;
  if (!GST_BUFFER_POOL_CLASS (gst_vstream_buffer_pool_parent_class)->set_config
      (bpool, config))
    return FALSE;
  return ok;
}

/* Memory every driver can pin as USERPTR: plain, page-aligned. */
void
gst_vstream_buffer_pool_pinnable_params (GstAllocationParams * params)
{
  gst_allocation_params_init (params);
  params->align = sysconf (_SC_PAGESIZE) - 1;
}

/* Set up @config of @pool (any pool, usually a plain video pool) for
 * frames of @caps in pinnable memory, with video meta if @pool has it. */
void
gst_vstream_buffer_pool_config_pinnable (GstBufferPool * pool,
    GstStructure * config, GstCaps * caps, guint size, guint min, guint max)
{
  GstAllocationParams params;

  gst_buffer_pool_config_set_params (config, caps, size, min, max);
  gst_vstream_buffer_pool_pinnable_params (&params);
  gst_buffer_pool_config_set_allocator (config, NULL, &params);
  if (gst_buffer_pool_has_option (pool, GST_BUFFER_POOL_OPTION_VIDEO_META))
    gst_buffer_pool_config_add_option (config,
        GST_BUFFER_POOL_OPTION_VIDEO_META);
}

static GstFlowReturn
gst_vstream_buffer_pool_alloc_buffer (GstBufferPool * bpool,
    GstBuffer ** buffer, GstBufferPoolAcquireParams * params)
{
  GstVstreamBufferPool *pool = GST_VSTREAM_BUFFER_POOL (bpool);
  GstVstreamObject *obj = pool->obj;
  GstVideoInfo *info = &obj->info;
  GstMemory *mem[VIDEO_MAX_PLANES];
  GstBuffer *buf;
  guint index = pool->next_index;
  guint p;

  if (index >= pool->count)
    return GST_FLOW_EOS;
  for (p = 0; p < pool->layout.n_mem; p++) {
    if (pool->memory == V4L2_MEMORY_MMAP &&
        obj->mode == GST_VSTREAM_IO_DMABUF)
      mem[p] = gst_vstream_allocator_export (pool->vallocator, index, p,
          pool->dmabuf);
    else if (pool->memory == V4L2_MEMORY_MMAP)
      mem[p] = gst_vstream_allocator_wrap (pool->vallocator, index, p);
    else {
      /* userptr / dmabuf-import: pinnable process memory, used as the
       * capture target or as the copy target for unfit upstream buffers */
      GstAllocationParams params;

      gst_vstream_buffer_pool_pinnable_params (&params);
      mem[p] = gst_allocator_alloc (NULL, pool->layout.size[p], &params);
    }
    if (!mem[p]) {
      while (p--)
        gst_memory_unref (mem[p]);
      return GST_FLOW_ERROR;
    }
  }
  pool->next_index++;
  buf = gst_buffer_new ();
  g_mutex_lock (&pool->lock);
  for (p = 0; p < pool->layout.n_mem; p++) {
    /* a memory holds its plane (the meta's offsets count on it), not the
     * page-rounded rest of the driver buffer */
    if (mem[p]->size > pool->layout.size[p])
      gst_memory_resize (mem[p], 0, pool->layout.size[p]);
    pool->slot[index].mem[p] = gst_memory_ref (mem[p]);
    gst_buffer_append_memory (buf, mem[p]);
  }
  g_mutex_unlock (&pool->lock);
  if (GST_VIDEO_INFO_FORMAT (info) != GST_VIDEO_FORMAT_ENCODED)
    gst_buffer_add_video_meta_full (buf, GST_VIDEO_FRAME_FLAG_NONE,
        GST_VIDEO_INFO_FORMAT (info), GST_VIDEO_INFO_WIDTH (info),
        GST_VIDEO_INFO_HEIGHT (info), GST_VIDEO_INFO_N_PLANES (info),
        info->offset, info->stride);
  set_buffer_index (buf, index);
  *buffer = buf;
  return GST_FLOW_OK;
}

static gboolean layout_fits (GstVstreamBufferPool * pool, GstBuffer * buf);
static GstFlowReturn qbuf (GstVstreamBufferPool * pool, GstBuffer * buf,
    guint index);

/* Does @buf carry its own index's memory, and nothing else? */
static gboolean
holds_own_memory (GstVstreamBufferPool * pool, GstBuffer * buf)
{
  gint index = buffer_index (buf);
  gboolean own = TRUE;
  guint p;

  if (index < 0 || gst_buffer_n_memory (buf) != pool->layout.n_mem)
    return FALSE;
  g_mutex_lock (&pool->lock);
  for (p = 0; p < pool->layout.n_mem; p++)
    own = own && gst_buffer_peek_memory (buf, p) == pool->slot[index].mem[p];
  g_mutex_unlock (&pool->lock);
  return own;
}

/* Is the pool's the only reference to each of @index's memories?  Nobody
 * else can take one then, so the answer cannot go stale.  Under the lock. */
static gboolean
memory_idle (GstVstreamBufferPool * pool, guint index)
{
  guint p;

  if (!pool->slot[index].mem[0])
    return FALSE;
  for (p = 0; p < pool->layout.n_mem; p++)
    if (GST_MINI_OBJECT_REFCOUNT_VALUE (pool->slot[index].mem[p]) != 1)
      return FALSE;
  return TRUE;
}

/* @buf came back and its memory is idle: fill it again, the whole frame,
 * and send it where it goes next (the driver, or the free queue). */
static void
back_to_work (GstVstreamBufferPool * pool, GstBuffer * buf, guint index)
{
  GstBufferPoolClass *pclass =
      GST_BUFFER_POOL_CLASS (gst_vstream_buffer_pool_parent_class);
  GstMemory *mem[VIDEO_MAX_PLANES];
  guint p;

  g_mutex_lock (&pool->lock);
  for (p = 0; p < pool->layout.n_mem; p++)
    mem[p] = gst_memory_ref (pool->slot[index].mem[p]);
  g_mutex_unlock (&pool->lock);
  for (p = 0; p < pool->layout.n_mem; p++) {
    gsize size = pool->layout.size[p];

    if (mem[p]->offset || mem[p]->size != size)
      gst_memory_resize (mem[p], -(gssize) mem[p]->offset, size);
    gst_buffer_append_memory (buf, mem[p]);
  }
  GST_BUFFER_FLAGS (buf) = 0;
  g_rec_mutex_lock (&pool->io_lock);
  if (!pool->output && is_streaming (pool) &&
      !GST_BUFFER_POOL_IS_FLUSHING (GST_BUFFER_POOL (pool))) {
    /* on failure qbuf drops the buffer and posts the error */
    qbuf (pool, buf, index);
  } else {
    pclass->release_buffer (GST_BUFFER_POOL (pool), buf);
  }
  g_rec_mutex_unlock (&pool->io_lock);
}

/* Put parked buffers whose memory was let go back to work; how many. */
static guint
reclaim_parked (GstVstreamBufferPool * pool)
{
  GstBuffer *back[VIDEO_MAX_FRAME];
  guint index[VIDEO_MAX_FRAME];
  guint i, n = 0;

  g_mutex_lock (&pool->lock);
  for (i = 0; pool->n_parked && i < VIDEO_MAX_FRAME; i++) {
    if (pool->slot[i].state != SLOT_PARKED || !memory_idle (pool, i))
      continue;
    back[n] = pool->slot[i].buf;
    index[n++] = i;
    set_state (pool, i, FROM (SLOT_PARKED), SLOT_IDLE, NULL);
  }
  g_mutex_unlock (&pool->lock);
  for (i = 0; i < n; i++)
    back_to_work (pool, back[i], index[i]);
  return n;
}

/* How many buffers came back so far: take it before looking for a free
 * one, and wait_for_return() sees any that comes back after. */
static guint
returns_so_far (GstVstreamBufferPool * pool)
{
  guint returns;

  g_mutex_lock (&pool->lock);
  returns = pool->returns;
  g_mutex_unlock (&pool->lock);
  return returns;
}

static gboolean
pool_flushing (GstVstreamBufferPool * pool)
{
  return pool->flushing || GST_BUFFER_POOL_IS_FLUSHING (GST_BUFFER_POOL (pool));
}

/* Nothing free and nothing in the driver: wait until a buffer comes back,
 * goes to the driver or the queue streams, after @returns.  Memory of a
 * parked buffer being let go says nothing, so with buffers parked look
 * again every 5 ms.  FALSE when flushing. */
static gboolean
wait_for_return (GstVstreamBufferPool * pool, guint returns)
{
  gint64 end = g_get_monotonic_time () + 5 * G_TIME_SPAN_MILLISECOND;
  gboolean flushing;

  g_mutex_lock (&pool->lock);
  while (!(flushing = pool_flushing (pool)) && returns == pool->returns) {
    if (!pool->n_parked)
      g_cond_wait (&pool->returned, &pool->lock);
    else if (!g_cond_wait_until (&pool->returned, &pool->lock, end))
      break;
  }
  g_mutex_unlock (&pool->lock);
  return !flushing;
}

/* A buffer went back to the free queue (no slot moved), or flushing
 * changed. */
static void
signal_return (GstVstreamBufferPool * pool)
{
  g_mutex_lock (&pool->lock);
  wake_waiters (pool);
  g_mutex_unlock (&pool->lock);
}

/* Can the driver write a frame straight into @buf's memory?  Only plain
 * process memory is lent: a device's mmap or a dma-buf mapping may not be
 * pinnable for writing (QBUF would fail with EFAULT). */
static gboolean
lendable (GstVstreamBufferPool * pool, GstBuffer * buf)
{
  GstMemory *mem = gst_buffer_peek_memory (buf, 0);

  return pool->layout.n_mem == 1 && gst_buffer_n_memory (buf) == 1 &&
      gst_memory_is_type (mem, GST_ALLOCATOR_SYSMEM) &&
      !GST_MEMORY_IS_READONLY (mem) && layout_fits (pool, buf);
}

/* The buffer whose memory the driver has for pool buffer @buf. */
static GstBuffer *
target_of (GstBuffer * buf)
{
  GstBuffer *loan = gst_mini_object_get_qdata (GST_MINI_OBJECT (buf),
      loan_quark);

  return loan ? loan : buf;
}

/* Capture userptr: the buffer whose memory the driver fills for @buf, a
 * free one of the lender's when there is one, else @buf itself. */
static GstBuffer *
borrow (GstVstreamBufferPool * pool, GstBuffer * buf)
{
  GstBufferPoolAcquireParams nowait = {.flags =
        GST_BUFFER_POOL_ACQUIRE_FLAG_DONTWAIT
  };
  GstBufferPool *lender = NULL;
  GstBuffer *loan;

  if (target_of (buf) != buf || pool->output ||
      pool->memory != V4L2_MEMORY_USERPTR)
    return target_of (buf);
  g_mutex_lock (&pool->lock);
  if (pool->lender)
    lender = gst_object_ref (pool->lender);
  g_mutex_unlock (&pool->lock);
  if (!lender)
    return buf;
  if (gst_buffer_pool_acquire_buffer (lender, &loan, &nowait) != GST_FLOW_OK)
    loan = NULL;
  gst_object_unref (lender);
  if (loan && !lendable (pool, loan))
    gst_clear_buffer (&loan);
  if (!loan)
    return buf;
  gst_mini_object_set_qdata (GST_MINI_OBJECT (buf), loan_quark, loan,
      (GDestroyNotify) gst_buffer_unref);
  return loan;
}

/* Let go of what qbuf() mapped for @index (userptr).  Under the lock. */
static void
unmap_planes (GstVstreamBufferPool * pool, guint index)
{
  guint p;

  Slot *slot = &pool->slot[index];

  if (!slot->mapped)
    return;
  for (p = 0; p < pool->layout.n_mem; p++)
    gst_memory_unmap (slot->map[p].memory, &slot->map[p]);
  slot->mapped = FALSE;
}

/*
 * Fill @vb (and @planes, for a format with a memory per colour plane) for
 * queueing @target's memories: userptr maps them into @map.  FALSE if a
 * memory is missing or cannot be mapped; nothing stays mapped then.
 */
static gboolean
describe_planes (GstVstreamBufferPool * pool, GstBuffer * target,
    struct v4l2_buffer *vb, struct v4l2_plane *planes, GstMapInfo * map)
{
  guint n_mem = pool->layout.n_mem, p;

  if (gst_buffer_n_memory (target) < n_mem)
    return FALSE;
  memset (planes, 0, sizeof (*planes) * VIDEO_MAX_PLANES);
  for (p = 0; p < n_mem; p++) {
    GstMemory *mem = gst_buffer_peek_memory (target, p);

    if (pool->memory == V4L2_MEMORY_USERPTR) {
      if (!gst_memory_map (mem, &map[p], pool->output ? GST_MAP_READ :
              GST_MAP_WRITE)) {
        while (p--)
          gst_memory_unmap (map[p].memory, &map[p]);
        return FALSE;
      }
      planes[p].m.userptr = (unsigned long) map[p].data;
      planes[p].length = map[p].size;
    } else if (pool->memory == V4L2_MEMORY_DMABUF) {
      planes[p].m.fd = gst_dmabuf_memory_get_fd (mem);
      planes[p].length = mem->maxsize;
    }
    if (pool->output)
      planes[p].bytesused = mem->size;
  }
  if (n_mem > 1) {
    vb->type = gst_vstream_object_buf_type (pool->obj);
    vb->m.planes = planes;
    vb->length = n_mem;
    return TRUE;
  }
  if (pool->memory == V4L2_MEMORY_USERPTR)
    vb->m.userptr = planes[0].m.userptr;
  else if (pool->memory == V4L2_MEMORY_DMABUF)
    vb->m.fd = planes[0].m.fd;
  vb->length = planes[0].length;
  vb->bytesused = planes[0].bytesused;
  return TRUE;
}

/* Hand @buf (a reference we own) to the driver at @index. */
static GstFlowReturn
qbuf (GstVstreamBufferPool * pool, GstBuffer * buf, guint index)
{
  GstVstreamObject *obj = pool->obj;
  struct v4l2_buffer vb = {
    .index = index,.type = obj->type,.memory = pool->memory
  };
  struct v4l2_plane planes[VIDEO_MAX_PLANES];
  GstMapInfo map[VIDEO_MAX_PLANES];
  gboolean mapped = pool->memory == V4L2_MEMORY_USERPTR;
  GstBuffer *target = borrow (pool, buf);
  guint p;

  if (!describe_planes (pool, target, &vb, planes, map))
    goto map_failed;
  if (pool->output) {
    GstClockTime ts = GST_BUFFER_PTS (buf);

    vb.field = gst_vstream_buffer_get_field (buf, obj->format.fmt.pix.field);
    if (GST_CLOCK_TIME_IS_VALID (ts)) {
      vb.timestamp.tv_sec = ts / GST_SECOND;
      vb.timestamp.tv_usec = (ts % GST_SECOND) / GST_USECOND;
    }
  }
  /* Recorded first: a capture buffer queued from downstream's thread
   * (release_buffer) can be done and dequeued by the streaming thread
   * before QBUF even returns here. */
  g_rec_mutex_lock (&pool->io_lock);
  g_mutex_lock (&pool->lock);
  if (pool->slot[index].state != SLOT_IDLE) {
    const gchar *state = slot_state_names[pool->slot[index].state];

    g_mutex_unlock (&pool->lock);
    g_rec_mutex_unlock (&pool->io_lock);
    for (p = 0; mapped && p < pool->layout.n_mem; p++)
      gst_memory_unmap (map[p].memory, &map[p]);
    gst_buffer_unref (buf);
    GST_VSTREAM_ELEMENT_ERROR (obj, RESOURCE, FAILED,
        ("Buffer %u of device '%s' queued while %s.", index, obj->device,
            state),
        (NULL));
    return GST_FLOW_ERROR;
  }
  /* an output acquire waiting with none in the driver can DQBUF now (a
   * queue before the sink renders from another thread) */
  set_state (pool, index, FROM (SLOT_IDLE), SLOT_QUEUED, buf);
  for (p = 0; mapped && p < pool->layout.n_mem; p++)
    pool->slot[index].map[p] = map[p];
  pool->slot[index].mapped = mapped;
  g_mutex_unlock (&pool->lock);
  if (gst_vstream_allocator_ioctl (pool->vallocator, VIDIOC_QBUF, &vb) < 0) {
    gint err = errno;

    /* not in the driver, so no DQBUF has it, and streamoff() waits for
     * io_lock: the record is still ours to undo */
    g_mutex_lock (&pool->lock);
    unmap_planes (pool, index);
    set_state (pool, index, FROM (SLOT_QUEUED), SLOT_IDLE, NULL);
    g_mutex_unlock (&pool->lock);
    g_rec_mutex_unlock (&pool->io_lock);
    errno = err;
    if (target != buf) {
      /* the driver cannot use the lender's memory: stop borrowing */
      GST_WARNING_OBJECT (pool, "device %s refused a downstream buffer (%s); "
          "capturing into own memory", obj->device, g_strerror (errno));
      gst_vstream_buffer_pool_set_lender (pool, NULL);
      gst_mini_object_set_qdata (GST_MINI_OBJECT (buf), loan_quark, NULL,
          NULL);
      return qbuf (pool, buf, index);
    }
    if (pool->output && buf->pool != GST_BUFFER_POOL (pool) &&
        errno == EFAULT) {
      /* imported memory the driver cannot pin (a dma-buf's mapping):
       * the caller copies instead */
      gst_buffer_unref (buf);
      return GST_FLOW_CUSTOM_ERROR;
    }
    GST_WARNING_OBJECT (pool, "QBUF index %u memory %u planes %u bytesused "
        "%u field %u length %u: %s", index, vb.memory, pool->layout.n_mem,
        planes[0].bytesused, vb.field, planes[0].length, g_strerror (errno));
    gst_buffer_unref (buf);
    return device_error (pool, "VIDIOC_QBUF");
  }
  g_rec_mutex_unlock (&pool->io_lock);
  return GST_FLOW_OK;

map_failed:
  gst_buffer_unref (buf);
  GST_VSTREAM_ELEMENT_ERROR (obj, RESOURCE, FAILED,
      ("Could not map a buffer for device '%s'.", obj->device), (NULL));
  return GST_FLOW_ERROR;
}

/* Called from the streaming thread only: no second STREAMON can race. */
static GstFlowReturn
streamon (GstVstreamBufferPool * pool)
{
  int type = pool->obj->type;

  if (is_streaming (pool))
    return GST_FLOW_OK;
  if (gst_vstream_allocator_ioctl (pool->vallocator, VIDIOC_STREAMON,
          &type) < 0)
    return device_error (pool, "VIDIOC_STREAMON");
  g_mutex_lock (&pool->lock);
  pool->streaming = TRUE;
  /* an output acquire waits for this before it DQBUFs (EINVAL before) */
  wake_waiters (pool);
  g_mutex_unlock (&pool->lock);
  return GST_FLOW_OK;
}

/* Take back queued buffers (after STREAMOFF), in the pool's free queue. */
static void
streamoff (GstVstreamBufferPool * pool)
{
  GstBufferPoolClass *pclass =
      GST_BUFFER_POOL_CLASS (gst_vstream_buffer_pool_parent_class);
  GstBuffer *back[VIDEO_MAX_FRAME];
  int type = pool->obj->type;
  gboolean was_streaming;
  guint i, n = 0;

  /* not streaming first: a DQBUF that races the STREAMOFF ends quietly */
  g_rec_mutex_lock (&pool->io_lock);
  g_mutex_lock (&pool->lock);
  was_streaming = pool->streaming;
  pool->streaming = FALSE;
  g_mutex_unlock (&pool->lock);
  if (was_streaming &&
      gst_vstream_allocator_ioctl (pool->vallocator, VIDIOC_STREAMOFF,
          &type) < 0)
    GST_WARNING_OBJECT (pool, "STREAMOFF on %s: %s",
        gst_vstream_allocator_device (pool->vallocator), g_strerror (errno));
  g_mutex_lock (&pool->lock);
  for (i = 0; i < VIDEO_MAX_FRAME; i++) {
    if (pool->slot[i].state != SLOT_QUEUED)
      continue;
    unmap_planes (pool, i);
    back[n++] = pool->slot[i].buf;
    set_state (pool, i, FROM (SLOT_QUEUED), SLOT_IDLE, NULL);
  }
  g_mutex_unlock (&pool->lock);
  g_rec_mutex_unlock (&pool->io_lock);
  for (i = 0; i < n; i++) {
    if (pool->output && back[i]->pool) {
      /* acquired from us by upstream: the last unref returns it */
      gst_buffer_unref (back[i]);
    } else if (pool->output) {
      gst_buffer_unref (back[i]);       /* an imported foreign buffer */
    } else {
      pclass->release_buffer (GST_BUFFER_POOL (pool), back[i]);
    }
  }
}

/*
 * A captured frame with a memory per colour plane: each memory holds its
 * plane from data_offset on, up to bytesused but never less than the
 * plane's size (a short bytesused must not make a plane end before its
 * lines do), and the video meta says where each plane now starts.
 */
static void
resize_planes (GstVstreamBufferPool * pool, GstBuffer * buf,
    const struct v4l2_plane *planes)
{
  GstVideoMeta *meta = gst_buffer_get_video_meta (buf);
  gsize offset = 0;
  guint p;

  for (p = 0; p < pool->layout.n_mem; p++) {
    GstMemory *mem = gst_buffer_peek_memory (buf, p);
    gsize used = planes[p].bytesused, start = planes[p].data_offset;

    used = MIN (MAX (used, pool->layout.size[p]), mem->maxsize);
    if (start >= used)
      start = 0;
    gst_buffer_resize_range (buf, p, 1, (gssize) start - (gssize) mem->offset,
        used - start);
    if (meta)
      meta->offset[p] = offset;
    offset += used - start;
  }
}

/*
 * Wait for a finished buffer and dequeue it.  @wait FALSE returns
 * GST_FLOW_CUSTOM_SUCCESS when none is ready.
 */
static GstFlowReturn
dqbuf (GstVstreamBufferPool * pool, GstBuffer ** out, gboolean wait)
{
  GstVstreamObject *obj = pool->obj;
  struct v4l2_plane planes[VIDEO_MAX_PLANES];
  struct v4l2_buffer vb;
  GstBuffer *buf;
  gint ret;

  for (;;) {
    memset (&vb, 0, sizeof (vb));
    vb.type = obj->type;
    vb.memory = pool->memory;
    if (pool->layout.n_mem > 1) {
      memset (planes, 0, sizeof (planes));
      vb.type = gst_vstream_object_buf_type (obj);
      vb.m.planes = planes;
      vb.length = pool->layout.n_mem;
    }
    if (gst_vstream_allocator_ioctl (pool->vallocator, VIDIOC_DQBUF, &vb) == 0)
      break;
    if (errno == EINVAL && !is_streaming (pool))
      return GST_FLOW_FLUSHING; /* stopped meanwhile (streamoff()) */
    if (errno != EAGAIN)
      return device_error (pool, "VIDIOC_DQBUF");
    if (!wait)
      return GST_FLOW_CUSTOM_SUCCESS;
    if (!pool->output) {
      guint returns = returns_so_far (pool);

      if (gst_vstream_buffer_pool_queued (pool) == 0) {
        /* nothing in the driver to wait for (restarted while downstream
         * still has every buffer): wait for one, or its memory, back */
        if (reclaim_parked (pool) == 0 && !wait_for_return (pool, returns))
          return GST_FLOW_FLUSHING;
        continue;
      }
    }
    ret = gst_poll_wait (pool->poll, GST_SECOND);
    if (ret < 0 && errno == EBUSY)
      return GST_FLOW_FLUSHING;
    if (ret < 0 && errno != EINTR && errno != EAGAIN)
      return device_error (pool, "poll");
    if (ret > 0 && gst_poll_fd_has_error (pool->poll, &pool->pollfd)) {
      errno = ENODEV;
      return device_error (pool, "poll");
    }
    /* An output queue with buffers outside the driver polls writable at
     * once; do not spin on it. */
    if (ret > 0 && pool->output)
      g_usleep (1000);
  }

  g_mutex_lock (&pool->lock);
  buf = vb.index < VIDEO_MAX_FRAME &&
      pool->slot[vb.index].state == SLOT_QUEUED ? pool->slot[vb.index].buf :
      NULL;
  if (buf) {
    unmap_planes (pool, vb.index);
    set_state (pool, vb.index, FROM (SLOT_QUEUED), SLOT_IDLE, NULL);
  }
  g_mutex_unlock (&pool->lock);
  if (!buf && !is_streaming (pool))
    return GST_FLOW_FLUSHING;   /* streamoff() took it back meanwhile */
  if (!buf) {
    GST_VSTREAM_ELEMENT_ERROR (obj, RESOURCE, FAILED,
        ("Device '%s' returned unknown buffer %u.", obj->device, vb.index),
        (NULL));
    return GST_FLOW_ERROR;
  }

  if (!pool->output) {
    if (vb.flags & V4L2_BUF_FLAG_ERROR)
      GST_BUFFER_FLAG_SET (buf, GST_BUFFER_FLAG_CORRUPTED);
    if (pool->layout.n_mem == 1)
      gst_buffer_resize (buf, GST_VSTREAM_BUFFER_DATA_OFFSET (&vb),
          vb.bytesused);
    else
      resize_planes (pool, buf, planes);
    gst_vstream_buffer_set_field_flags (buf, vb.field, obj->bottom_first);
    /* The source turns sequence gaps into drop counts and QoS. */
    GST_BUFFER_OFFSET (buf) = vb.sequence;
    GST_BUFFER_OFFSET_END (buf) = vb.sequence + 1;
    /* COPY (a producer's clock) and UNKNOWN are not the pipeline's */
    if ((vb.flags & V4L2_BUF_FLAG_TIMESTAMP_MASK) ==
        V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC)
      GST_BUFFER_PTS (buf) = GST_TIMEVAL_TO_TIME (vb.timestamp);
    else
      GST_BUFFER_PTS (buf) = GST_CLOCK_TIME_NONE;
  }
  *out = buf;
  return GST_FLOW_OK;
}

static gboolean
gst_vstream_buffer_pool_start (GstBufferPool * bpool)
{
  GstVstreamBufferPool *pool = GST_VSTREAM_BUFFER_POOL (bpool);
  GstBufferPoolClass *pclass =
      GST_BUFFER_POOL_CLASS (gst_vstream_buffer_pool_parent_class);
  GstVstreamObject *obj = pool->obj;
  GstStructure *config;
  guint n;

  pool->memory = pool_memory_type (obj);
  /* capture userptr still lets the driver fill our own memory */
  n = gst_vstream_allocator_start (pool->vallocator, pool->count,
      pool->memory, pool->layout.n_mem);
  if (!n)
    return FALSE;
  pool->count = n;
  pool->next_index = 0;

  /* Buffers are made on demand (min 0): an activating pool is still
   * flushing, so capture buffers are queued at the first acquire. */
  config = gst_buffer_pool_get_config (bpool);
  gst_buffer_pool_config_set_params (config, pool->caps,
      obj->format.fmt.pix.sizeimage, 0, n);
  pclass->set_config (bpool, config);
  gst_structure_free (config);
  if (!pclass->start (bpool))
    goto fail;
  /* an unlock() before activation stays in force */
  g_mutex_lock (&pool->lock);
  gst_poll_set_flushing (pool->poll, pool->flushing);
  g_mutex_unlock (&pool->lock);
  return TRUE;

fail:
  streamoff (pool);
  pclass->stop (bpool);
  gst_vstream_allocator_stop (pool->vallocator);
  return FALSE;
}

/*
 * Every buffer is back (the base class waits for that).  Parked ones go
 * now, memory-less; so do the pool's references to the memories: one
 * still referenced downstream keeps its mapping until it is let go.
 */
static gboolean
gst_vstream_buffer_pool_stop (GstBufferPool * bpool)
{
  GstVstreamBufferPool *pool = GST_VSTREAM_BUFFER_POOL (bpool);
  GstBufferPoolClass *pclass =
      GST_BUFFER_POOL_CLASS (gst_vstream_buffer_pool_parent_class);
  GstBuffer *parked[VIDEO_MAX_FRAME];
  GstMemory *mem[VIDEO_MAX_FRAME][VIDEO_MAX_PLANES];
  gboolean ret;
  guint i, p;

  streamoff (pool);
  g_mutex_lock (&pool->lock);
  for (i = 0; i < VIDEO_MAX_FRAME; i++) {
    Slot *slot = &pool->slot[i];

    parked[i] = slot->state == SLOT_PARKED ? slot->buf : NULL;
    if (parked[i])
      set_state (pool, i, FROM (SLOT_PARKED), SLOT_IDLE, NULL);
    for (p = 0; p < VIDEO_MAX_PLANES; p++) {
      mem[i][p] = slot->mem[p];
      slot->mem[p] = NULL;
    }
  }
  g_mutex_unlock (&pool->lock);
  /* the base class frees a buffer without memory (and counts it) */
  for (i = 0; i < VIDEO_MAX_FRAME; i++)
    if (parked[i])
      pclass->release_buffer (bpool, parked[i]);
  ret = pclass->stop (bpool);
  for (i = 0; i < VIDEO_MAX_FRAME; i++)
    for (p = 0; p < VIDEO_MAX_PLANES; p++)
      if (mem[i][p])
        gst_memory_unref (mem[i][p]);
  gst_vstream_allocator_stop (pool->vallocator);
  return ret;
}

static void
gst_vstream_buffer_pool_flush_start (GstBufferPool * bpool)
{
  GstVstreamBufferPool *pool = GST_VSTREAM_BUFFER_POOL (bpool);

  gst_poll_set_flushing (pool->poll, TRUE);
  signal_return (pool);
  /* Capture buffers in the driver return to the free queue; output
   * buffers return to upstream's references, so deactivation can finish. */
  streamoff (pool);
}

void
gst_vstream_buffer_pool_set_flushing (GstVstreamBufferPool * pool,
    gboolean flushing)
{
  gst_poll_set_flushing (pool->poll, flushing);
  g_mutex_lock (&pool->lock);
  pool->flushing = flushing;
  g_mutex_unlock (&pool->lock);
  signal_return (pool);
}

/*
 * An element's pool and flushing state (@slot, @state) are read by its
 * unlock() from another thread: both change under @owner's object lock.
 * replace() makes @pool (a new one, taken; or NULL) the element's and
 * releases the old one; a new pool starts as flushing as the element is,
 * as an unlock() may have come first.  Pools are called outside the lock
 * (they may post messages).  Only unlock() races a replace(), and both
 * say TRUE then: unlock_stop() runs with the stream lock, as set_caps and
 * the render or create that replace a pool do.
 */
void
gst_vstream_buffer_pool_replace (GstObject * owner, GstBufferPool ** slot,
    GstBufferPool * pool, const gboolean * state)
{
  GstBufferPool *old;
  gboolean flushing;

  GST_OBJECT_LOCK (owner);
  old = *slot;
  *slot = pool;
  flushing = *state;
  GST_OBJECT_UNLOCK (owner);
  if (pool)
    gst_vstream_buffer_pool_set_flushing (GST_VSTREAM_BUFFER_POOL (pool),
        flushing);
  if (old) {
    gst_vstream_buffer_pool_release (GST_VSTREAM_BUFFER_POOL (old));
    gst_object_unref (old);
  }
}

void
gst_vstream_buffer_pool_owner_set_flushing (GstObject * owner,
    GstBufferPool ** slot, gboolean * state, gboolean flushing)
{
  GstBufferPool *pool;

  GST_OBJECT_LOCK (owner);
  *state = flushing;
  pool = *slot ? gst_object_ref (*slot) : NULL;
  GST_OBJECT_UNLOCK (owner);
  if (pool) {
    gst_vstream_buffer_pool_set_flushing (GST_VSTREAM_BUFFER_POOL (pool),
        flushing);
    gst_object_unref (pool);
  }
}

static void
gst_vstream_buffer_pool_flush_stop (GstBufferPool * bpool)
{
  gst_vstream_buffer_pool_set_flushing (GST_VSTREAM_BUFFER_POOL (bpool),
      FALSE);
}

/* Capture: give the driver every buffer the pool has, then stream. */
static GstFlowReturn
queue_all_and_stream (GstVstreamBufferPool * pool)
{
  GstBufferPoolClass *pclass =
      GST_BUFFER_POOL_CLASS (gst_vstream_buffer_pool_parent_class);
  GstBufferPoolAcquireParams nowait = {.flags =
        GST_BUFFER_POOL_ACQUIRE_FLAG_DONTWAIT
  };
  GstFlowReturn ret;
  GstBuffer *buf;

  while (pclass->acquire_buffer (GST_BUFFER_POOL (pool), &buf, &nowait) ==
      GST_FLOW_OK) {
    ret = qbuf (pool, buf, buffer_index (buf));
    if (ret != GST_FLOW_OK)
      return ret;
  }
  return streamon (pool);
}

static GstFlowReturn
gst_vstream_buffer_pool_acquire_buffer (GstBufferPool * bpool,
    GstBuffer ** buffer, GstBufferPoolAcquireParams * params)
{
  GstVstreamBufferPool *pool = GST_VSTREAM_BUFFER_POOL (bpool);
  GstBufferPoolClass *pclass =
      GST_BUFFER_POOL_CLASS (gst_vstream_buffer_pool_parent_class);
  GstBufferPoolAcquireParams nowait = {.flags =
        GST_BUFFER_POOL_ACQUIRE_FLAG_DONTWAIT
  };
  GstFlowReturn ret;
  GstBuffer *buf;

  reclaim_parked (pool);
  if (!pool->output) {
    ret = is_streaming (pool) ? GST_FLOW_OK : queue_all_and_stream (pool);
    return ret == GST_FLOW_OK ? dqbuf (pool, buffer, TRUE) : ret;
  }

  /* Output: a free buffer, one the driver has finished, or wait for one. */
  for (;;) {
    guint returns = returns_so_far (pool);
    gboolean wait = !params ||
        !(params->flags & GST_BUFFER_POOL_ACQUIRE_FLAG_DONTWAIT);

    ret = pclass->acquire_buffer (bpool, buffer, &nowait);
    if (ret != GST_FLOW_EOS)
      return ret;
    if (!wait) {
      if (!gst_vstream_buffer_pool_queued (pool) || !is_streaming (pool))
        return GST_FLOW_EOS;
      ret = dqbuf (pool, &buf, FALSE);
      if (ret == GST_FLOW_CUSTOM_SUCCESS)
        return GST_FLOW_EOS;    /* none finished yet */
      if (ret != GST_FLOW_OK)
        return ret;
      gst_buffer_unref (buf);
      continue;
    }
    if (gst_vstream_buffer_pool_queued (pool) == 0 || !is_streaming (pool)) {
      /* all out in the pipeline, back and parked, or queued by render()
       * on another thread, which has not turned streaming on yet */
      if (!wait_for_return (pool, returns))
        return GST_FLOW_FLUSHING;
      reclaim_parked (pool);
      continue;
    }
    ret = dqbuf (pool, &buf, TRUE);
    if (ret != GST_FLOW_OK)
      return ret;
    gst_buffer_unref (buf);     /* back to the free queue */
  }
}

/*
 * A buffer came back from the pipeline.  Its memory may live on in a
 * shallow copy, a sub-buffer or a sample: take it out, and put the buffer
 * back to work only if the pool's reference is the last one; else park
 * it until the memory is let go.  Capture buffers go back to the driver
 * while streaming, the rest to the free queue.
 */
static void
gst_vstream_buffer_pool_release_buffer (GstBufferPool * bpool,
    GstBuffer * buf)
{
  GstVstreamBufferPool *pool = GST_VSTREAM_BUFFER_POOL (bpool);
  GstBufferPoolClass *pclass =
      GST_BUFFER_POOL_CLASS (gst_vstream_buffer_pool_parent_class);
  gint index = buffer_index (buf);
  gboolean idle;

  g_mutex_lock (&pool->lock);
  idle = index >= 0 && pool->slot[index].mem[0];
  g_mutex_unlock (&pool->lock);
  if (!idle) {
    pclass->release_buffer (bpool, buf);
    return;
  }
  gst_buffer_remove_all_memory (buf);
  g_mutex_lock (&pool->lock);
  idle = memory_idle (pool, index);
  if (!idle) {
    GST_LOG_OBJECT (pool, "buffer %d: memory still referenced, parked",
        index);
    set_state (pool, index, FROM (SLOT_IDLE), SLOT_PARKED, buf);
  }
  g_mutex_unlock (&pool->lock);
  if (idle)
    back_to_work (pool, buf, index);
  reclaim_parked (pool);
  signal_return (pool);
}

/*
 * Capture: make @buf a frame the pipeline may keep without starving the
 * driver.  A frame captured into a borrowed buffer leaves in that buffer
 * and the pool buffer goes back to the driver at once; otherwise, if
 * handing @buf out would leave no buffer queued, the frame is copied and
 * the driver gets its buffer back at once.
 */
GstFlowReturn
gst_vstream_buffer_pool_maybe_copy (GstVstreamBufferPool * pool,
    GstBuffer ** buf)
{
  GstBuffer *loan = gst_mini_object_steal_qdata (GST_MINI_OBJECT (*buf),
      loan_quark);
  GstVideoInfo *info = &pool->obj->info;
  GstBuffer *copy;

  if (loan) {
    gst_buffer_copy_into (loan, *buf, GST_BUFFER_COPY_FLAGS |
        GST_BUFFER_COPY_TIMESTAMPS, 0, -1);
    gst_buffer_resize (loan, 0, gst_buffer_get_size (*buf));
    if (!gst_buffer_get_video_meta (loan) &&
        GST_VIDEO_INFO_FORMAT (info) != GST_VIDEO_FORMAT_ENCODED)
      gst_buffer_add_video_meta_full (loan, GST_VIDEO_FRAME_FLAG_NONE,
          GST_VIDEO_INFO_FORMAT (info), GST_VIDEO_INFO_WIDTH (info),
          GST_VIDEO_INFO_HEIGHT (info), GST_VIDEO_INFO_N_PLANES (info),
          info->offset, info->stride);
    gst_buffer_unref (*buf);    /* re-queued with a fresh loan */
    *buf = loan;
    gst_vstream_object_count (pool->obj, 0, 0, 0, 1);
    return GST_FLOW_OK;
  }
  /* a copy would be system memory, which memory:DMABuf caps forbid: push
   * the driver's; until downstream returns one only this reader drops */
  if (gst_vstream_buffer_pool_queued (pool) > 0 ||
      gst_vstream_object_dmabuf_caps (pool->obj)) {
    gst_vstream_object_count (pool->obj, 0, 0, 0, 1);
    return GST_FLOW_OK;
  }
  copy = gst_buffer_copy_deep (*buf);
  gst_buffer_unref (*buf);      /* re-queues the driver buffer */
  *buf = copy;
  gst_vstream_object_count (pool->obj, 0, 0, 1, 0);
  return GST_FLOW_OK;
}

/*
 * Capture userptr: take the memory for frames from @lender (a pool
 * downstream proposed, configured and active) from now on; NULL stops.
 * Returns FALSE, and borrows nothing, when a buffer of @lender cannot be
 * lent to the driver (not plain memory, or not the driver's layout).
 */
gboolean
gst_vstream_buffer_pool_set_lender (GstVstreamBufferPool * pool,
    GstBufferPool * lender)
{
  GstBufferPoolAcquireParams nowait = {.flags =
        GST_BUFFER_POOL_ACQUIRE_FLAG_DONTWAIT
  };
  GstBuffer *probe = NULL;
  gboolean ok = TRUE;

  if (lender && (pool->output || pool->memory != V4L2_MEMORY_USERPTR))
    ok = FALSE;
  else if (lender) {
    ok = gst_buffer_pool_acquire_buffer (lender, &probe, &nowait) ==
        GST_FLOW_OK && lendable (pool, probe);
    if (probe)
      gst_buffer_unref (probe);
  }
  g_mutex_lock (&pool->lock);
  gst_object_replace ((GstObject **) & pool->lender,
      ok ? GST_OBJECT (lender) : NULL);
  g_mutex_unlock (&pool->lock);
  return ok;
}

static SlotState
slot_state (GstVstreamBufferPool * pool, guint index)
{
  SlotState state;

  g_mutex_lock (&pool->lock);
  state = pool->slot[index].state;
  g_mutex_unlock (&pool->lock);
  return state;
}

/* Find a driver index no queued buffer uses (userptr/dmabuf import). */
static gint
free_index (GstVstreamBufferPool * pool)
{
  guint i;
  gint found = -1;

  g_mutex_lock (&pool->lock);
  for (i = 0; i < pool->count && found < 0; i++)
    if (pool->slot[i].state == SLOT_IDLE)
      found = i;
  g_mutex_unlock (&pool->lock);
  return found;
}

/* Does @buf's memory have exactly the driver's layout? */
static gboolean
layout_fits (GstVstreamBufferPool * pool, GstBuffer * buf)
{
  return gst_vstream_object_layout_fits (pool->obj, pool->caps, buf);
}

static GstFlowReturn
render_copy (GstVstreamBufferPool * pool, GstBuffer * buf)
{
  GstVstreamObject *obj = pool->obj;
  GstBuffer *dst = NULL;
  GstFlowReturn ret;

  ret = gst_buffer_pool_acquire_buffer (GST_BUFFER_POOL (pool), &dst, NULL);
  if (ret != GST_FLOW_OK)
    return ret;
  /* An importing sink queues upstream's buffers at indexes whose own
   * buffer is free: the driver may still have one at dst's.  It comes
   * back with DQBUF. */
  while (ret == GST_FLOW_OK && slot_state (pool, buffer_index (dst)) ==
      SLOT_QUEUED) {
    GstBuffer *done;

    ret = dqbuf (pool, &done, TRUE);
    if (ret == GST_FLOW_OK)
      gst_buffer_unref (done);
  }
  if (ret != GST_FLOW_OK) {
    gst_buffer_unref (dst);
    return ret;
  }
  if (GST_VIDEO_INFO_FORMAT (&obj->info) == GST_VIDEO_FORMAT_ENCODED) {
    GstMapInfo map;
    gsize n = MIN (gst_buffer_get_size (buf), obj->format.fmt.pix.sizeimage);

    if (!gst_buffer_map (buf, &map, GST_MAP_READ))
      goto fail;
    gst_buffer_fill (dst, 0, map.data, n);
    gst_buffer_set_size (dst, n);
    gst_buffer_unmap (buf, &map);
  } else if (!gst_vstream_object_copy_frame (obj, pool->caps, buf, dst)) {
    goto fail;
  }
  gst_buffer_copy_into (dst, buf, GST_BUFFER_COPY_FLAGS |
      GST_BUFFER_COPY_TIMESTAMPS, 0, -1);
  gst_vstream_object_count (obj, 0, 0, 1, 0);
  return qbuf (pool, dst, buffer_index (dst));

fail:
  gst_buffer_unref (dst);
  GST_VSTREAM_ELEMENT_ERROR (obj, STREAM, FORMAT,
      ("Could not copy a frame for device '%s'.", obj->device), (NULL));
  return GST_FLOW_ERROR;
}

/* Output: would render() queue foreign @buf as it is (userptr,
 * dmabuf-import)?  A dmabuf-import pool cannot queue anything else. */
gboolean
gst_vstream_buffer_pool_imports (GstVstreamBufferPool * pool, GstBuffer * buf)
{
  guint p;

  if (pool->import_refused || !layout_fits (pool, buf))
    return FALSE;
  if (pool->memory == V4L2_MEMORY_USERPTR)
    return TRUE;
  if (pool->memory != V4L2_MEMORY_DMABUF)
    return FALSE;
  /* QBUF names a dma-buf, not a place in it: a memory must start it */
  for (p = 0; p < pool->layout.n_mem; p++) {
    GstMemory *mem = gst_buffer_peek_memory (buf, p);

    if (!gst_is_dmabuf_memory (mem) || mem->offset)
      return FALSE;
  }
  return TRUE;
}

/*
 * Output: queue one frame.  A buffer of this pool (MMAP, upstream rendered
 * into it) or a fitting foreign buffer (userptr, dmabuf-import) goes to the
 * driver as it is; anything else is copied once.
 */
GstFlowReturn
gst_vstream_buffer_pool_render (GstVstreamBufferPool * pool, GstBuffer * buf)
{
  GstVstreamObject *obj = pool->obj;
  GstFlowReturn ret = GST_FLOW_OK;
  GstBuffer *done;
  gint index;

  if (buf->pool == GST_BUFFER_POOL (pool) && holds_own_memory (pool, buf)) {
    gboolean again;

    /* The same buffer rendered twice (preroll, then play) is already in
     * the driver: queueing it again would be EINVAL. */
    g_mutex_lock (&pool->lock);
    again = pool->slot[buffer_index (buf)].state == SLOT_QUEUED;
    g_mutex_unlock (&pool->lock);
    if (again)
      return GST_FLOW_OK;
    ret = qbuf (pool, gst_buffer_ref (buf), buffer_index (buf));
    gst_vstream_object_count (obj, 0, 0, 0, 1);
  } else if (gst_vstream_buffer_pool_imports (pool, buf)) {
    while ((index = free_index (pool)) < 0) {
      ret = dqbuf (pool, &done, TRUE);
      if (ret != GST_FLOW_OK)
        return ret;
      gst_buffer_unref (done);
    }
    ret = qbuf (pool, gst_buffer_ref (buf), index);
    if (ret == GST_FLOW_CUSTOM_ERROR) {
      GST_INFO_OBJECT (pool, "device %s cannot take upstream's memory (%s): "
          "copying from now on", obj->device, g_strerror (EFAULT));
      pool->import_refused = TRUE;
      ret = render_copy (pool, buf);
    } else {
      gst_vstream_object_count (obj, 0, 0, 0, 1);
    }
  } else {
    ret = render_copy (pool, buf);
  }
  if (ret != GST_FLOW_OK)
    return ret;
  gst_vstream_object_count (obj, 1, 0, 0, 0);
  ret = streamon (pool);
  if (ret != GST_FLOW_OK)
    return ret;

  /*
   * A queued import holds upstream's memory: where there can be one
   * (userptr, dmabuf-import), finished buffers go back at once.  MMAP
   * buffers stay in the driver until one is needed (acquire_buffer): by
   * then readers have let go of the frame they share, and the driver
   * hands the buffer back without giving it new pages
   * (docs/architecture.md, "What a flip costs").
   */
  if (pool->memory == V4L2_MEMORY_MMAP)
    return GST_FLOW_OK;
  while ((ret = dqbuf (pool, &done, FALSE)) == GST_FLOW_OK)
    gst_buffer_unref (done);
  return ret == GST_FLOW_CUSTOM_SUCCESS ? GST_FLOW_OK : ret;
}

static void
gst_vstream_buffer_pool_finalize (GObject * object)
{
  GstVstreamBufferPool *pool = GST_VSTREAM_BUFFER_POOL (object);

  gst_object_unref (pool->vallocator);
  gst_object_unref (pool->dmabuf);
  gst_clear_object (&pool->lender);
  gst_caps_replace (&pool->caps, NULL);
  gst_poll_free (pool->poll);
  gst_vstream_object_unref (pool->obj);
  g_cond_clear (&pool->returned);
  g_mutex_clear (&pool->lock);
  g_rec_mutex_clear (&pool->io_lock);
  G_OBJECT_CLASS (gst_vstream_buffer_pool_parent_class)->finalize (object);
}

static void
gst_vstream_buffer_pool_class_init (GstVstreamBufferPoolClass * klass)
{
  GstBufferPoolClass *pclass = GST_BUFFER_POOL_CLASS (klass);

  G_OBJECT_CLASS (klass)->finalize = gst_vstream_buffer_pool_finalize;
  pclass->set_config = gst_vstream_buffer_pool_set_config;
  pclass->start = gst_vstream_buffer_pool_start;
  pclass->stop = gst_vstream_buffer_pool_stop;
  pclass->alloc_buffer = gst_vstream_buffer_pool_alloc_buffer;
  pclass->acquire_buffer = gst_vstream_buffer_pool_acquire_buffer;
  pclass->release_buffer = gst_vstream_buffer_pool_release_buffer;
  pclass->flush_start = gst_vstream_buffer_pool_flush_start;
  pclass->flush_stop = gst_vstream_buffer_pool_flush_stop;
  index_quark = g_quark_from_static_string ("GstVstreamBufferIndex");
  loan_quark = g_quark_from_static_string ("GstVstreamBufferLoan");
}

static void
gst_vstream_buffer_pool_init (GstVstreamBufferPool * pool)
{
  g_mutex_init (&pool->lock);
  g_rec_mutex_init (&pool->io_lock);
  g_cond_init (&pool->returned);
  pool->poll = gst_poll_new (TRUE);
}

GstBufferPool *
gst_vstream_buffer_pool_new (GstVstreamObject * obj, GstCaps * caps)
{
  GstVstreamBufferPool *pool;
  GstStructure *config;
  gchar *name;

  name = g_strdup_printf ("%s:pool", GST_ELEMENT_NAME (obj->element));
  pool = g_object_new (GST_TYPE_VSTREAM_BUFFER_POOL, "name", name, NULL);
  g_free (name);
  gst_object_ref_sink (pool);
  pool->obj = gst_vstream_object_ref (obj);
  pool->output = obj->type == V4L2_BUF_TYPE_VIDEO_OUTPUT;
  pool->caps = gst_caps_ref (caps);
  pool->layout = obj->layout;
  pool->count = pool->min_count = gst_vstream_object_buffer_count (obj);
  pool->vallocator = gst_vstream_allocator_new (obj);
  pool->fd = gst_vstream_allocator_fd (pool->vallocator);
  pool->dmabuf = gst_dmabuf_allocator_new ();
  gst_poll_fd_init (&pool->pollfd);
  pool->pollfd.fd = pool->fd;
  if (pool->fd >= 0) {          /* else start fails, saying why */
    gst_poll_add_fd (pool->poll, &pool->pollfd);
    if (pool->output)
      gst_poll_fd_ctl_write (pool->poll, &pool->pollfd, TRUE);
    else
      gst_poll_fd_ctl_read (pool->poll, &pool->pollfd, TRUE);
  }

  config = gst_buffer_pool_get_config (GST_BUFFER_POOL (pool));
  gst_buffer_pool_config_set_params (config, caps, obj->info.size,
      pool->count, pool->count);
  gst_buffer_pool_config_add_option (config,
      GST_BUFFER_POOL_OPTION_VIDEO_META);
  gst_buffer_pool_set_config (GST_BUFFER_POOL (pool), config);
  return GST_BUFFER_POOL (pool);
}


/* Deactivate @pool and free its driver buffers at once, even while some
 * are still out downstream, so the node can take a new format. */
void
gst_vstream_buffer_pool_release (GstVstreamBufferPool * pool)
{
  gst_buffer_pool_set_active (GST_BUFFER_POOL (pool), FALSE);
  gst_vstream_allocator_orphan (pool->vallocator);
}

/* Output: wait (bounded) until the driver has consumed every frame. */
void
gst_vstream_buffer_pool_drain (GstVstreamBufferPool * pool)
{
  gint64 end = g_get_monotonic_time () + 2 * G_TIME_SPAN_SECOND;
  GstBuffer *done;

  while (pool->output && gst_vstream_buffer_pool_queued (pool) > 0 &&
      g_get_monotonic_time () < end) {
    GstFlowReturn ret = dqbuf (pool, &done, FALSE);

    if (ret == GST_FLOW_OK)
      gst_buffer_unref (done);
    else if (ret == GST_FLOW_CUSTOM_SUCCESS)
      g_usleep (1000);
    else
      break;
  }
}
