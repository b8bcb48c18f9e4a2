/* vstream GStreamer plugin: memory of V4L2 driver buffers.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The allocator owns one queue's driver buffers: REQBUFS, QUERYBUF and
 * mmap() at start, REQBUFS(0) at stop.  A GstMemory wraps one mapped
 * memory plane of a buffer (index, plane), so frames pass through the
 * pipeline without a copy; in dmabuf mode the plane is exported with
 * EXPBUF instead.  A buffer has one memory plane, or one per colour plane
 * for NV12M and kin (obj->layout).
 *
 * Lifetimes: the memory wrapping an index owns its mapping and unmaps it
 * when its last reference goes (sub-memories hold their parent), wherever
 * that is: a pool stopping, or an application dropping a sample long after
 * the pipeline is gone.  Every memory holds the allocator (GstMemory
 * does), the allocator holds the element's GstVstreamObject and a dup of
 * its fd, so the queue's file stays open, and ioctls on it stay valid,
 * until the last memory is gone; the element may close and reopen its own
 * fd meanwhile.  An element dropping its pool orphans the allocator first:
 * REQBUFS(0) at once, the mappings stay (vb2 frees a buffer's memory at
 * its last munmap).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <gst/allocators/gstdmabuf.h>

#include "vstreamallocator.h"

GST_DEBUG_CATEGORY_STATIC (gst_vstream_allocator_debug);
#define GST_CAT_DEFAULT gst_vstream_allocator_debug

typedef struct
{
  GstMemory mem;
  guint index;
  guint8 *data;
  gsize length;                 /* the mapping a root memory unmaps, or 0 */
} GstVstreamMemory;

struct _GstVstreamAllocator
{
  GstAllocator parent;
  GstVstreamObject *obj;        /* a reference */
  gint fd;                      /* our dup of obj->fd */
  gchar *device;                /* for messages once obj->device changed */
  guint32 memory;
  guint count;
  guint n_mem;                  /* memory planes per buffer */
  guint generation;             /* obj->generation when REQBUFS ran */
  /* per buffer and memory plane: mapped, not yet wrapped */
  guint8 *data[VIDEO_MAX_FRAME][VIDEO_MAX_PLANES];
  gsize length[VIDEO_MAX_FRAME][VIDEO_MAX_PLANES];
};

G_DEFINE_TYPE_WITH_CODE (GstVstreamAllocator, gst_vstream_allocator,
    GST_TYPE_ALLOCATOR, GST_DEBUG_CATEGORY_INIT (gst_vstream_allocator_debug,
        "vstreamallocator", 0, "vstream memory"));

static gpointer
vstream_mem_map (GstMemory * mem, gsize maxsize, GstMapFlags flags)
{
  return ((GstVstreamMemory *) mem)->data;
}

static void
vstream_mem_unmap (GstMemory * mem)
{
}

static GstMemory *
vstream_mem_share (GstMemory * mem, gssize offset, gssize size)
{
  GstVstreamMemory *vmem = (GstVstreamMemory *) mem, *sub;
  GstMemory *parent = mem->parent ? mem->parent : mem;

  if (size == -1)
    size = mem->size - offset;
  sub = g_slice_new0 (GstVstreamMemory);
  gst_memory_init (GST_MEMORY_CAST (sub), GST_MINI_OBJECT_FLAGS (parent) |
      GST_MINI_OBJECT_FLAG_LOCK_READONLY, mem->allocator, parent, mem->maxsize,
      mem->align, mem->offset + offset, size);
  /* the parent keeps the mapping: sub holds a reference on it */
  sub->index = vmem->index;
  sub->data = vmem->data;
  return GST_MEMORY_CAST (sub);
}

static GstMemory *
vstream_mem_copy (GstMemory * mem, gssize offset, gssize size)
{
  GstMemory *copy;
  GstMapInfo info;

  if (size == -1)
    size = mem->size > (gsize) offset ? mem->size - offset : 0;
  copy = gst_allocator_alloc (NULL, size, NULL);
  if (gst_memory_map (copy, &info, GST_MAP_WRITE)) {
    memcpy (info.data, ((GstVstreamMemory *) mem)->data + mem->offset + offset,
        size);
    gst_memory_unmap (copy, &info);
  }
  return copy;
}

static GstMemory *
vstream_alloc (GstAllocator * allocator, gsize size, GstAllocationParams * p)
{
  /* Driver memory comes only from the queue's buffers. */
  return NULL;
}

/* The last reference to a memory: a root one takes its mapping along. */
static void
vstream_free (GstAllocator * allocator, GstMemory * mem)
{
  GstVstreamMemory *vmem = (GstVstreamMemory *) mem;

  if (vmem->length)
    gst_vstream_munmap (vmem->data, vmem->length);
  g_slice_free (GstVstreamMemory, vmem);
}

/* Runs only once every memory is gone: each holds a reference. */
static void
gst_vstream_allocator_finalize (GObject * object)
{
  GstVstreamAllocator *alloc = GST_VSTREAM_ALLOCATOR (object);

  gst_vstream_allocator_stop (alloc);
  if (alloc->fd >= 0)
    close (alloc->fd);
  gst_vstream_object_unref (alloc->obj);
  g_free (alloc->device);
  G_OBJECT_CLASS (gst_vstream_allocator_parent_class)->finalize (object);
}

static void
gst_vstream_allocator_class_init (GstVstreamAllocatorClass * klass)
{
  GstAllocatorClass *aclass = GST_ALLOCATOR_CLASS (klass);

  aclass->alloc = vstream_alloc;
  aclass->free = vstream_free;
  G_OBJECT_CLASS (klass)->finalize = gst_vstream_allocator_finalize;
}

static void
gst_vstream_allocator_init (GstVstreamAllocator * alloc)
{
  GstAllocator *a = GST_ALLOCATOR (alloc);

  a->mem_type = GST_VSTREAM_MEMORY_TYPE;
  a->mem_map = vstream_mem_map;
  a->mem_unmap = vstream_mem_unmap;
  a->mem_share = vstream_mem_share;
  a->mem_copy = vstream_mem_copy;
  GST_OBJECT_FLAG_SET (alloc, GST_ALLOCATOR_FLAG_CUSTOM_ALLOC);
}

GstVstreamAllocator *
gst_vstream_allocator_new (GstVstreamObject * obj)
{
  GstVstreamAllocator *alloc = g_object_new (GST_TYPE_VSTREAM_ALLOCATOR, NULL);

  gst_object_ref_sink (alloc);
  alloc->obj = gst_vstream_object_ref (obj);
  alloc->device = g_strdup (obj->device);
  /* the same open file (queue ownership is per file), for as long as we
   * need it; -1 makes start fail with the reason */
  alloc->fd = obj->fd >= 0 ? fcntl (obj->fd, F_DUPFD_CLOEXEC, 0) : -1;
  return alloc;
}

/* The file every ioctl on the queue goes to. */
gint
gst_vstream_allocator_fd (GstVstreamAllocator * alloc)
{
  return alloc->fd;
}

gint
gst_vstream_allocator_ioctl (GstVstreamAllocator * alloc,
    unsigned long request, void *arg)
{
  return gst_vstream_object_ioctl_fd (alloc->obj, alloc->fd, request, arg);
}

const gchar *
gst_vstream_allocator_device (GstVstreamAllocator * alloc)
{
  return alloc->device;
}

guint32
gst_vstream_allocator_memory (GstVstreamAllocator * alloc)
{
  return alloc->memory;
}

/* Where buffer @index's memory planes are to be mapped, and how long. */
static gboolean
query_buffer (GstVstreamAllocator * alloc, guint index,
    struct v4l2_plane *planes, guint32 * offset, guint32 * length)
{
  GstVstreamObject *obj = alloc->obj;
  struct v4l2_buffer buf = {
    .index = index,.type = obj->type,.memory = alloc->memory
  };
  guint p;

  if (alloc->n_mem == 1) {
    if (gst_vstream_allocator_ioctl (alloc, VIDIOC_QUERYBUF, &buf) < 0)
      return FALSE;
    offset[0] = buf.m.offset;
    length[0] = buf.length;
    return TRUE;
  }
  memset (planes, 0, sizeof (*planes) * VIDEO_MAX_PLANES);
  buf.type = gst_vstream_object_buf_type (obj);
  buf.m.planes = planes;
  buf.length = alloc->n_mem;
  if (gst_vstream_allocator_ioctl (alloc, VIDIOC_QUERYBUF, &buf) < 0)
    return FALSE;
  if (buf.length != alloc->n_mem) {
    errno = EINVAL;
    return FALSE;
  }
  for (p = 0; p < alloc->n_mem; p++) {
    offset[p] = planes[p].m.mem_offset;
    length[p] = planes[p].length;
  }
  return TRUE;
}

/* REQBUFS and, for MMAP, map every buffer's @n_mem memory planes.
 * Returns the count, 0 on error. */
guint
gst_vstream_allocator_start (GstVstreamAllocator * alloc, guint count,
    guint32 memory, guint n_mem)
{
  GstVstreamObject *obj = alloc->obj;
  struct v4l2_requestbuffers req = {
    .count = count,.type = obj->type,.memory = memory
  };
  guint i;

  if (alloc->fd < 0) {
    GST_VSTREAM_ELEMENT_ERROR (obj, RESOURCE, OPEN_READ_WRITE,
        ("Could not use device '%s'.", alloc->device),
        ("dup: %s", g_strerror (errno)));
    return 0;
  }
  if (gst_vstream_allocator_ioctl (alloc, VIDIOC_REQBUFS, &req) < 0) {
    if (errno == EBUSY)
      GST_VSTREAM_ELEMENT_ERROR (obj, RESOURCE, BUSY,
          ("Device '%s' is busy.", obj->device),
          ("VIDIOC_REQBUFS: %s", g_strerror (errno)));
    else
      GST_VSTREAM_ELEMENT_ERROR (obj, RESOURCE, SETTINGS,
          ("Device '%s' cannot allocate %u %s buffers.", obj->device, count,
              memory == V4L2_MEMORY_MMAP ? "mmap" :
              memory == V4L2_MEMORY_USERPTR ? "userptr" : "dmabuf"),
          ("VIDIOC_REQBUFS: %s", g_strerror (errno)));
    return 0;
  }
  if (req.count < 1 || req.count > VIDEO_MAX_FRAME) {
    GST_VSTREAM_ELEMENT_ERROR (obj, RESOURCE, NO_SPACE_LEFT,
        ("Device '%s' gave %u buffers.", obj->device, req.count), (NULL));
    goto fail;
  }
  alloc->memory = memory;
  alloc->count = req.count;
  alloc->n_mem = n_mem;
  alloc->generation = ++obj->generation;
  if (memory != V4L2_MEMORY_MMAP)
    return req.count;

  for (i = 0; i < req.count; i++) {
    struct v4l2_plane planes[VIDEO_MAX_PLANES];
    guint32 offset[VIDEO_MAX_PLANES], length[VIDEO_MAX_PLANES];
    guint p;

    if (!query_buffer (alloc, i, planes, offset, length)) {
      GST_VSTREAM_ELEMENT_ERROR (obj, RESOURCE, READ,
          ("Could not query buffer %u of device '%s'.", i, obj->device),
          ("VIDIOC_QUERYBUF: %s", g_strerror (errno)));
      goto fail;
    }
    for (p = 0; p < alloc->n_mem; p++) {
      void *data = gst_vstream_mmap (alloc->fd, length[p], offset[p]);

      if (data == MAP_FAILED) {
        GST_VSTREAM_ELEMENT_ERROR (obj, RESOURCE, READ,
            ("Could not map buffer %u of device '%s'.", i, obj->device),
            ("mmap of plane %u: %s", p, g_strerror (errno)));
        goto fail;
      }
      alloc->data[i][p] = data;
      alloc->length[i][p] = length[p];
    }
  }
  return req.count;

fail:
  gst_vstream_allocator_stop (alloc);
  return 0;
}

/*
 * Free the driver's buffers now (REQBUFS(0)), while memories may still be
 * out in the pipeline (a sink keeps its last frame): vb2 keeps a buffer's
 * memory for as long as it is mapped, and each mapping stays until the
 * last reference to its memory goes.  The node is free for a new format
 * at once.  A newer allocator that owns the queue by now keeps its
 * buffers.
 */
void
gst_vstream_allocator_orphan (GstVstreamAllocator * alloc)
{
  GstVstreamObject *obj = alloc->obj;
  struct v4l2_requestbuffers req = {.count = 0 };

  if (alloc->generation && alloc->fd >= 0 &&
      alloc->generation == obj->generation) {
    req.type = obj->type;
    req.memory = alloc->memory;
    if (gst_vstream_allocator_ioctl (alloc, VIDIOC_REQBUFS, &req) < 0)
      GST_WARNING ("REQBUFS(0) on %s: %s", alloc->device, g_strerror (errno));
  }
  alloc->generation = 0;
}

/* The pool is done with the buffers: unmap what no memory took over
 * (memories unmap their own) and free them in the driver. */
void
gst_vstream_allocator_stop (GstVstreamAllocator * alloc)
{
  guint i, p;

  if (!alloc->count)
    return;
  for (i = 0; i < alloc->count; i++) {
    for (p = 0; p < VIDEO_MAX_PLANES; p++) {
      if (alloc->data[i][p])
        gst_vstream_munmap (alloc->data[i][p], alloc->length[i][p]);
      alloc->data[i][p] = NULL;
    }
  }
  alloc->count = 0;
  gst_vstream_allocator_orphan (alloc);
}

/* The memory of @plane of buffer @index; it takes over the mapping, so a
 * plane is wrapped once per start. */
GstMemory *
gst_vstream_allocator_wrap (GstVstreamAllocator * alloc, guint index,
    guint plane)
{
  GstVstreamMemory *mem;
  gsize length;

  if (index >= alloc->count || plane >= alloc->n_mem ||
      !alloc->data[index][plane])
    return NULL;
  length = alloc->length[index][plane];
  mem = g_slice_new0 (GstVstreamMemory);
  gst_memory_init (GST_MEMORY_CAST (mem), 0, GST_ALLOCATOR (alloc), NULL,
      length, 0, 0, length);
  mem->index = index;
  mem->data = alloc->data[index][plane];
  mem->length = length;
  alloc->data[index][plane] = NULL;
  return GST_MEMORY_CAST (mem);
}

GstMemory *
gst_vstream_allocator_export (GstVstreamAllocator * alloc, guint index,
    guint plane, GstAllocator * dmabuf)
{
  GstVstreamObject *obj = alloc->obj;
  struct v4l2_exportbuffer exp = {
    .type = obj->type,.index = index,.plane = plane,
    .flags = O_CLOEXEC | O_RDWR
  };

  if (index >= alloc->count || plane >= alloc->n_mem)
    return NULL;
  if (gst_vstream_allocator_ioctl (alloc, VIDIOC_EXPBUF, &exp) < 0) {
    GST_VSTREAM_ELEMENT_ERROR (obj, RESOURCE, SETTINGS,
        ("Device '%s' cannot export buffer %u as dma-buf.", obj->device,
            index), ("VIDIOC_EXPBUF of plane %u: %s", plane,
            g_strerror (errno)));
    return NULL;
  }
  return gst_dmabuf_allocator_alloc (dmabuf, exp.fd,
      alloc->length[index][plane]);
}

gboolean
gst_is_vstream_memory (GstMemory * mem)
{
  return mem && gst_memory_is_type (mem, GST_VSTREAM_MEMORY_TYPE);
}
