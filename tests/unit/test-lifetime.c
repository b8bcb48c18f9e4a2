/* Host unit tests: memory and object lifetimes of vstreamsrc and
 * vstreamsink against a canned device, built with AddressSanitizer
 * (tests/unit/meson.build).
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The elements open FAKE_DEV (any character device will do) and every
 * ioctl, mmap and munmap goes to the fake below through the test hooks of
 * vstreamobject.h.  The fake captures a new frame into a buffer at each
 * DQBUF, so a buffer queued again while the pipeline still references its
 * memory shows as changed bytes; its mappings are heap blocks, so reading
 * one after it was unmapped is a heap-use-after-free under ASan.  The
 * elements are this test's own copy, registered statically.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <glib/gstdio.h>
#include <string.h>

#include "gst-check-helpers.h"
#include "vstreamobject.h"
#include "vstreamsrc.h"
#include "vstreamsink.h"
#include <gst/video/colorbalance.h>

GST_DEBUG_CATEGORY (gst_vstream_debug);

#define FAKE_DEV "/dev/full"
#define W 64
#define H 48
#define SIZEIMAGE (W * 2 * H)
#define MAP_LEN 8192            /* SIZEIMAGE, page-rounded */
#define N_MAX 8
#define CAPS "video/x-raw,format=YUY2,width=64,height=48,framerate=30/1"
/* per_plane: NV12M, the luma plane and the chroma plane in memories of
 * their own, each mapped at MAP_LEN / 2 */
#define Y_SIZE (W * H)
#define NV12_SIZE (Y_SIZE * 3 / 2)
#define PLANE_LEN (MAP_LEN / 2)
#define NV12_CAPS "video/x-raw,format=NV12,width=64,height=48,framerate=30/1"

/* ------------------------------------------------------------------ */
/* the canned device: YUYV 64x48 at 30 fps, MMAP or USERPTR streaming */

static struct
{
  GMutex lock;
  gboolean output;
  guint count;                  /* buffers REQBUFS made */
  guint32 memory;
  gboolean streaming;
  guint8 *pages[N_MAX];         /* each buffer's memory: mapped, or queued
                                 * user memory */
  gboolean queued[N_MAX];
  GQueue fifo;
  guint32 sequence;
  guint gap_every;              /* a dropped frame every N frames */
  guint bad_every;              /* of every N frames, one short and one
                                 * flagged ERROR */
  gint64 interval;              /* us between frames, 0: at once */
  gint64 next_frame;
  GHashTable *maps;             /* live mappings */
  guint fds_before;
  gint brightness, contrast, pattern;   /* its controls */
  gboolean can_crop;
  struct v4l2_rect crop;        /* the last S_SELECTION(CROP) */
  guint crops;                  /* how many */
  gboolean mplane;              /* only the _MPLANE types (fake_ioctl) */
  guint mplane_bufs;            /* plane-array buffer calls it took */
  guint data_offset;            /* mplane: where a captured frame starts
                                 * in its plane, as vivid's */
  gboolean per_plane;           /* mplane: NV12M, not YUYV */
  guint8 *planes[N_MAX][2];     /* per_plane: each buffer's two planes */
  guint8 out_first;             /* an output's last queued frame: */
  guint32 out_bytesused;        /* its first byte and its size */
  guint8 out_chroma;            /* per_plane: the chroma plane's first */
  GArray *out_sums;             /* output: each queued frame's checksum */
  gboolean slow_qbuf;           /* a QBUF before STREAMON takes 20 ms */
  gint ts_kind;                 /* capture timestamps: 0 CLOCK_MONOTONIC,
                                 * 1 COPY of a producer's clock that started
                                 * at 0, 2 MONOTONIC but 100 s ahead */
  guint pad;                    /* bytes after each line (bytesperline) */
} fake;

/* the single-planar frame's size with the fake's line padding */
static gsize
fake_sizeimage (void)
{
  return (W * 2 + fake.pad) * H;
}

/* The controls: a class, two integers, a menu. */
static const struct v4l2_queryctrl fake_ctrls[] = {
  {.id = V4L2_CID_USER_CLASS,.type = V4L2_CTRL_TYPE_CTRL_CLASS,
      .name = "User Controls"},
  {.id = V4L2_CID_BRIGHTNESS,.type = V4L2_CTRL_TYPE_INTEGER,
      .name = "Brightness",.maximum = 255,.step = 1,.default_value = 128},
  {.id = V4L2_CID_CONTRAST,.type = V4L2_CTRL_TYPE_INTEGER,
      .name = "Contrast",.minimum = 10,.maximum = 90,.step = 1,
      .default_value = 50},
  {.id = V4L2_CID_TEST_PATTERN,.type = V4L2_CTRL_TYPE_MENU,
      .name = "Test Pattern",.maximum = 2,.step = 1},
};
static const gchar *fake_menu[] = { "Bars", "Flat", "Noise" };

static gint *
fake_ctrl_value (guint32 id)
{
  return id == V4L2_CID_BRIGHTNESS ? &fake.brightness :
      id == V4L2_CID_CONTRAST ? &fake.contrast :
      id == V4L2_CID_TEST_PATTERN ? &fake.pattern : NULL;
}

static int
fake_ctrl_ioctl (unsigned long req, void *arg)
{
  guint i;

  if (req == VIDIOC_QUERYCTRL) {
    struct v4l2_queryctrl *q = arg;
    gboolean next = q->id & V4L2_CTRL_FLAG_NEXT_CTRL;
    guint32 id = q->id & ~V4L2_CTRL_FLAG_NEXT_CTRL;

    for (i = 0; i < G_N_ELEMENTS (fake_ctrls); i++)
      if (next ? fake_ctrls[i].id > id : fake_ctrls[i].id == id) {
        *q = fake_ctrls[i];
        return 0;
      }
  } else if (req == VIDIOC_QUERYMENU) {
    struct v4l2_querymenu *m = arg;

    if (m->id == V4L2_CID_TEST_PATTERN && m->index < G_N_ELEMENTS (fake_menu)) {
      g_strlcpy ((gchar *) m->name, fake_menu[m->index], sizeof (m->name));
      return 0;
    }
  } else {
    struct v4l2_control *c = arg;
    gint *v = fake_ctrl_value (c->id);

    for (i = 0; v && i < G_N_ELEMENTS (fake_ctrls); i++)
      if (fake_ctrls[i].id == c->id)
        break;
    if (v && req == VIDIOC_G_CTRL) {
      c->value = *v;
      return 0;
    }
    if (v) {
      if (c->value < fake_ctrls[i].minimum || c->value > fake_ctrls[i].maximum) {
        errno = ERANGE;
        return -1;
      }
      *v = c->value;
      return 0;
    }
  }
  errno = EINVAL;
  return -1;
}

static guint8
pixel (guint32 seq, gsize i)
{
  return (guint8) (seq * 7 + i * 13 + (i >> 8));
}

static void
fake_set_format (struct v4l2_format *f)
{
  enum v4l2_buf_type type = f->type;

  memset (&f->fmt, 0, sizeof (f->fmt));
  f->type = type;
  f->fmt.pix.width = W;
  f->fmt.pix.height = H;
  f->fmt.pix.pixelformat = V4L2_PIX_FMT_YUYV;
  f->fmt.pix.field = V4L2_FIELD_NONE;
  f->fmt.pix.bytesperline = W * 2 + fake.pad;
  f->fmt.pix.sizeimage = fake_sizeimage ();
}

static void
fake_streamoff (void)
{
  fake.streaming = FALSE;
  g_queue_clear (&fake.fifo);
  memset (fake.queued, 0, sizeof (fake.queued));
}

/* Called with the lock held; may drop it to pace frames. */
static int
fake_dqbuf (struct v4l2_buffer *b)
{
  guint index;
  gint64 now = g_get_monotonic_time ();

  if (fake.interval && fake.streaming && now < fake.next_frame) {
    g_mutex_unlock (&fake.lock);
    g_usleep (fake.next_frame - now);
    g_mutex_lock (&fake.lock);
    now = g_get_monotonic_time ();
  }
  if (!fake.streaming || g_queue_is_empty (&fake.fifo)) {
    /* as vb2: no waiting for buffers before STREAMON */
    errno = fake.streaming ? EAGAIN : EINVAL;
    return -1;
  }
  fake.next_frame = MAX (now, fake.next_frame) + fake.interval;
  index = GPOINTER_TO_UINT (g_queue_pop_head (&fake.fifo));
  fake.queued[index] = FALSE;
  b->index = index;
  b->bytesused = fake_sizeimage ();
  b->field = V4L2_FIELD_NONE;
  b->flags = 0;
  if (!fake.output) {
    guint32 seq = fake.sequence++;
    gsize i;

    if (fake.gap_every && seq % fake.gap_every == 0)
      seq = fake.sequence++;
    guint8 *frame = fake.per_plane ? NULL : fake.pages[index];

    /* per_plane: the planes end to end are one numbered frame */
    for (i = 0; fake.per_plane && i < NV12_SIZE; i++) {
      guint8 *plane = fake.planes[index][i >= Y_SIZE];

      if (plane)
        plane[i >= Y_SIZE ? i - Y_SIZE : i + fake.data_offset] =
            pixel (seq, i);
    }
    if (fake.per_plane && fake.planes[index][0])
      memcpy (fake.planes[index][0] + fake.data_offset, &seq, 4);
    /* the frame, where the buffer's memory is mapped */
    if (frame)
      frame += fake.data_offset;
    for (i = 0; frame && i < fake_sizeimage (); i++)
      frame[i] = pixel (seq, i);
    if (frame)
      memcpy (frame, &seq, 4);
    /* a short frame (half its bytes) and one the driver says is bad */
    if (fake.bad_every && seq % fake.bad_every == 1)
      b->bytesused = SIZEIMAGE / 2;
    if (fake.bad_every && seq % fake.bad_every == 2)
      b->flags = V4L2_BUF_FLAG_ERROR;
    b->sequence = seq;
    if (fake.ts_kind == 1)
      now = seq * (gint64) 10000;
    else if (fake.ts_kind == 2)
      now += 100 * G_USEC_PER_SEC;
    b->flags |= fake.ts_kind == 1 ? V4L2_BUF_FLAG_TIMESTAMP_COPY :
        V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC;
    b->timestamp.tv_sec = now / G_USEC_PER_SEC;
    b->timestamp.tv_usec = now % G_USEC_PER_SEC;
  }
  return 0;
}

static int
fake_ioctl_sp (int fd, unsigned long req, void *arg)
{
  int ret = 0;

  g_mutex_lock (&fake.lock);
  switch (req) {
    case VIDIOC_QUERYCAP:{
      struct v4l2_capability *c = arg;

      memset (c, 0, sizeof (*c));
      g_strlcpy ((gchar *) c->card, "fake", sizeof (c->card));
      c->device_caps = V4L2_CAP_STREAMING | (fake.output ?
          V4L2_CAP_VIDEO_OUTPUT : V4L2_CAP_VIDEO_CAPTURE);
      c->capabilities = c->device_caps | V4L2_CAP_DEVICE_CAPS;
      break;
    }
    case VIDIOC_ENUM_FMT:{
      struct v4l2_fmtdesc *d = arg;

      if (d->index > 0)
        goto einval;
      d->pixelformat = V4L2_PIX_FMT_YUYV;
      break;
    }
    case VIDIOC_ENUM_FRAMESIZES:{
      struct v4l2_frmsizeenum *fs = arg;

      if (fs->index > 0)
        goto einval;
      fs->type = V4L2_FRMSIZE_TYPE_DISCRETE;
      fs->discrete.width = W;
      fs->discrete.height = H;
      break;
    }
    case VIDIOC_ENUM_FRAMEINTERVALS:{
      struct v4l2_frmivalenum *fi = arg;

      if (fi->index > 0)
        goto einval;
      if (fake.output) {
        /* 1 to 240 fps, as a vstream output node says */
        fi->type = V4L2_FRMIVAL_TYPE_CONTINUOUS;
        fi->stepwise.min.numerator = fi->stepwise.max.numerator = 1;
        fi->stepwise.step.numerator = fi->stepwise.step.denominator = 1;
        fi->stepwise.min.denominator = 240;
        fi->stepwise.max.denominator = 1;
        break;
      }
      fi->type = V4L2_FRMIVAL_TYPE_DISCRETE;
      fi->discrete.numerator = 1;
      fi->discrete.denominator = 30;
      break;
    }
    case VIDIOC_TRY_FMT:
    case VIDIOC_S_FMT:
    case VIDIOC_G_FMT:
      fake_set_format (arg);
      break;
    case VIDIOC_G_PARM:
    case VIDIOC_S_PARM:{
      struct v4l2_streamparm *p = arg;
      struct v4l2_fract *t = fake.output ? &p->parm.output.timeperframe :
          &p->parm.capture.timeperframe;

      t->numerator = 1;
      t->denominator = 30;
      break;
    }
    case VIDIOC_REQBUFS:{
      struct v4l2_requestbuffers *r = arg;

      /* DMABUF: a dmabuf-import sink allocates before it sees what
       * upstream sends (it falls back to MMAP for system memory) */
      if (r->memory != V4L2_MEMORY_MMAP && r->memory != V4L2_MEMORY_USERPTR &&
          r->memory != V4L2_MEMORY_DMABUF)
        goto einval;
      fake.memory = r->memory;
      /* the old buffers' pages stay with their mappings */
      fake_streamoff ();
      memset (fake.pages, 0, sizeof (fake.pages));
      memset (fake.planes, 0, sizeof (fake.planes));
      fake.count = r->count = MIN (r->count, N_MAX);
      break;
    }
    case VIDIOC_QUERYBUF:{
      struct v4l2_buffer *b = arg;

      if (b->index >= fake.count)
        goto einval;
      b->length = MAP_LEN;
      b->m.offset = b->index * MAP_LEN;
      break;
    }
    case VIDIOC_QBUF:{
      struct v4l2_buffer *b = arg;

      /* the window between the first QBUF and STREAMON, where another
       * thread's DQBUF gets EINVAL, made wide */
      if (fake.slow_qbuf && !fake.streaming) {
        g_mutex_unlock (&fake.lock);
        g_usleep (20 * 1000);
        g_mutex_lock (&fake.lock);
      }

      /* queueing a buffer the driver has already is the element's bug */
      if (b->index >= fake.count || fake.queued[b->index] ||
          b->memory != fake.memory)
        goto einval;
      if (b->memory == V4L2_MEMORY_USERPTR) {
        if (!b->m.userptr || b->length < SIZEIMAGE)
          goto einval;
        fake.pages[b->index] = (guint8 *) b->m.userptr;
      }
      if (fake.output && fake.pages[b->index]) {
        guint32 sum = 2166136261u;
        gsize i;

        fake.out_first = fake.pages[b->index][0];
        fake.out_bytesused = b->bytesused;
        for (i = 0; i < SIZEIMAGE; i++)
          sum = (sum ^ fake.pages[b->index][i]) * 16777619u;
        g_array_append_val (fake.out_sums, sum);
      }
      fake.queued[b->index] = TRUE;
      g_queue_push_tail (&fake.fifo, GUINT_TO_POINTER (b->index));
      break;
    }
    case VIDIOC_DQBUF:
      ret = fake_dqbuf (arg);
      break;
    case VIDIOC_STREAMON:
      fake.streaming = TRUE;
      fake.next_frame = g_get_monotonic_time ();
      break;
    case VIDIOC_STREAMOFF:
      fake_streamoff ();
      break;
    case VIDIOC_G_SELECTION:{
      struct v4l2_selection *sel = arg;

      if (!fake.can_crop || (sel->target != V4L2_SEL_TGT_CROP_BOUNDS &&
              sel->target != V4L2_SEL_TGT_CROP_DEFAULT))
        goto einval;
      sel->r.left = sel->r.top = 0;
      sel->r.width = W;
      sel->r.height = H;
      break;
    }
    case VIDIOC_S_SELECTION:{
      struct v4l2_selection *sel = arg;

      if (!fake.can_crop || sel->target != V4L2_SEL_TGT_CROP)
        goto einval;
      fake.crop = sel->r;
      fake.crops++;
      break;
    }
    case VIDIOC_QUERYCTRL:
    case VIDIOC_QUERYMENU:
    case VIDIOC_G_CTRL:
    case VIDIOC_S_CTRL:
      ret = fake_ctrl_ioctl (req, arg);
      break;
    default:
      goto einval;
  }
  g_mutex_unlock (&fake.lock);
  return ret;

einval:
  g_mutex_unlock (&fake.lock);
  errno = EINVAL;
  return -1;
}

/* The fake as a device with only the multi-planar types, the way such
 * drivers check what they are given: a single-planar type or a buffer
 * without its plane array is EINVAL.  It answers through the
 * single-planar fake. */
static guint32
fake_sp_type (guint32 type)
{
  if (type == V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE && !fake.output)
    return V4L2_BUF_TYPE_VIDEO_CAPTURE;
  if (type == V4L2_BUF_TYPE_VIDEO_OUTPUT_MPLANE && fake.output)
    return V4L2_BUF_TYPE_VIDEO_OUTPUT;
  return 0;
}

static int
fake_mplane_typed (int fd, unsigned long req, void *arg, guint32 * type)
{
  guint32 mp = *type;
  int ret;

  if (!(*type = fake_sp_type (mp))) {
    *type = mp;
    errno = EINVAL;
    return -1;
  }
  ret = fake_ioctl_sp (fd, req, arg);
  *type = mp;
  return ret;
}

static int
fake_mplane_format (int fd, unsigned long req, struct v4l2_format *f)
{
  struct v4l2_format sp = {.type = fake_sp_type (f->type) };
  struct v4l2_pix_format_mplane *m = &f->fmt.pix_mp;

  if (!sp.type) {
    errno = EINVAL;
    return -1;
  }
  fake_ioctl_sp (fd, req, &sp);
  memset (m, 0, sizeof (*m));
  m->width = sp.fmt.pix.width;
  m->height = sp.fmt.pix.height;
  m->pixelformat = sp.fmt.pix.pixelformat;
  m->field = sp.fmt.pix.field;
  m->num_planes = 1;
  m->plane_fmt[0].bytesperline = sp.fmt.pix.bytesperline;
  m->plane_fmt[0].sizeimage = sp.fmt.pix.sizeimage;
  if (fake.per_plane) {
    m->pixelformat = V4L2_PIX_FMT_NV12M;
    m->num_planes = 2;
    m->plane_fmt[0].bytesperline = m->plane_fmt[1].bytesperline = W;
    /* as vivid's NV16M: the luma plane's data_offset counts in */
    m->plane_fmt[0].sizeimage = Y_SIZE + fake.data_offset;
    m->plane_fmt[1].sizeimage = Y_SIZE / 2;
  }
  return 0;
}

/* per_plane: buffer calls with both planes, through the single-planar
 * fake for the queue's bookkeeping (its frame filling knows the planes) */
static int
fake_per_plane_buffer (int fd, unsigned long req, struct v4l2_buffer *b)
{
  struct v4l2_buffer sp = *b;
  struct v4l2_plane *pl = b->m.planes;
  guint32 size[2] = { Y_SIZE + fake.data_offset, Y_SIZE / 2 };
  guint p;
  int ret;

  sp.type = fake_sp_type (b->type);
  if (!sp.type || !pl || b->length != 2) {
    errno = EINVAL;
    return -1;
  }
  g_atomic_int_inc (&fake.mplane_bufs);
  if (req == VIDIOC_QUERYBUF) {
    if (b->index >= fake.count) {
      errno = EINVAL;
      return -1;
    }
    for (p = 0; p < 2; p++) {
      pl[p].length = PLANE_LEN;
      pl[p].m.mem_offset = b->index * MAP_LEN + p * PLANE_LEN;
    }
    return 0;
  }
  if (req == VIDIOC_QBUF && b->memory == V4L2_MEMORY_USERPTR) {
    for (p = 0; p < 2; p++)
      if (!pl[p].m.userptr || pl[p].length < size[p]) {
        errno = EINVAL;
        return -1;
      }
    sp.m.userptr = pl[0].m.userptr;
    sp.length = SIZEIMAGE;      /* the single-planar fake's own check */
  }
  if (req == VIDIOC_QBUF && fake.output)
    for (p = 0; p < 2; p++)
      fail_unless_equals_int (pl[p].bytesused, size[p]);
  ret = fake_ioctl_sp (fd, req, &sp);
  if (ret < 0)
    return ret;
  g_mutex_lock (&fake.lock);
  if (req == VIDIOC_QBUF && b->memory == V4L2_MEMORY_USERPTR)
    for (p = 0; p < 2; p++)
      fake.planes[b->index][p] = (guint8 *) pl[p].m.userptr;
  if (req == VIDIOC_QBUF && fake.output && fake.planes[b->index][0]) {
    fake.out_first = fake.planes[b->index][0][0];
    fake.out_chroma = fake.planes[b->index][1][0];
    fake.out_bytesused = pl[0].bytesused + pl[1].bytesused;
  }
  g_mutex_unlock (&fake.lock);
  b->index = sp.index;
  b->flags = sp.flags;
  b->field = sp.field;
  b->sequence = sp.sequence;
  b->timestamp = sp.timestamp;
  if (req == VIDIOC_DQBUF)
    for (p = 0; p < 2; p++)
      pl[p].bytesused = fake.output ? 0 : size[p];
  if (req == VIDIOC_DQBUF && !fake.output)
    pl[0].data_offset = fake.data_offset;
  return 0;
}

static int
fake_mplane_buffer (int fd, unsigned long req, struct v4l2_buffer *b)
{
  struct v4l2_buffer sp = *b;
  struct v4l2_plane *pl = b->m.planes;
  int ret;

  if (fake.per_plane)
    return fake_per_plane_buffer (fd, req, b);
  sp.type = fake_sp_type (b->type);
  if (!sp.type || !pl || b->length != 1) {
    errno = EINVAL;
    return -1;
  }
  g_atomic_int_inc (&fake.mplane_bufs);
  sp.length = pl->length;
  sp.bytesused = pl->bytesused;
  if (b->memory == V4L2_MEMORY_USERPTR)
    sp.m.userptr = pl->m.userptr;
  else
    sp.m.offset = pl->m.mem_offset;
  ret = fake_ioctl_sp (fd, req, &sp);
  if (ret < 0)
    return ret;
  b->index = sp.index;
  b->flags = sp.flags;
  b->field = sp.field;
  b->sequence = sp.sequence;
  b->timestamp = sp.timestamp;
  pl->bytesused = sp.bytesused;
  if (req == VIDIOC_DQBUF && !fake.output) {
    pl->data_offset = fake.data_offset;
    pl->bytesused += fake.data_offset;
  }
  pl->length = sp.length;
  if (b->memory == V4L2_MEMORY_USERPTR)
    pl->m.userptr = sp.m.userptr;
  else
    pl->m.mem_offset = sp.m.offset;
  return 0;
}

static int
fake_ioctl (int fd, unsigned long req, void *arg)
{
  int ret;

  if (!fake.mplane)
    return fake_ioctl_sp (fd, req, arg);
  switch (req) {
    case VIDIOC_QUERYCAP:{
      struct v4l2_capability *c = arg;

      ret = fake_ioctl_sp (fd, req, arg);
      c->device_caps = V4L2_CAP_STREAMING | (fake.output ?
          V4L2_CAP_VIDEO_OUTPUT_MPLANE : V4L2_CAP_VIDEO_CAPTURE_MPLANE);
      c->capabilities = c->device_caps | V4L2_CAP_DEVICE_CAPS;
      return ret;
    }
    case VIDIOC_G_FMT:
    case VIDIOC_S_FMT:
    case VIDIOC_TRY_FMT:
      return fake_mplane_format (fd, req, arg);
    case VIDIOC_QUERYBUF:
    case VIDIOC_QBUF:
    case VIDIOC_DQBUF:
      return fake_mplane_buffer (fd, req, arg);
    case VIDIOC_ENUM_FMT:
      ret = fake_mplane_typed (fd, req, arg,
          &((struct v4l2_fmtdesc *) arg)->type);
      if (ret == 0 && fake.per_plane)
        ((struct v4l2_fmtdesc *) arg)->pixelformat = V4L2_PIX_FMT_NV12M;
      return ret;
    case VIDIOC_G_PARM:
    case VIDIOC_S_PARM:
      return fake_mplane_typed (fd, req, arg,
          &((struct v4l2_streamparm *) arg)->type);
    case VIDIOC_REQBUFS:
      return fake_mplane_typed (fd, req, arg,
          &((struct v4l2_requestbuffers *) arg)->type);
    case VIDIOC_STREAMON:
    case VIDIOC_STREAMOFF:
      return fake_mplane_typed (fd, req, arg, arg);
    case VIDIOC_G_SELECTION:
    case VIDIOC_S_SELECTION:
      return fake_mplane_typed (fd, req, arg,
          &((struct v4l2_selection *) arg)->type);
    default:
      return fake_ioctl_sp (fd, req, arg);
  }
}

static void *
fake_mmap (gsize length, gint fd, off_t offset)
{
  guint index = offset / MAP_LEN;
  guint8 *p = g_malloc0 (length);

  g_mutex_lock (&fake.lock);
  if (fake.per_plane) {
    fail_unless (index < fake.count && length == PLANE_LEN &&
        offset % PLANE_LEN == 0);
    fake.planes[index][offset % MAP_LEN / PLANE_LEN] = p;
  } else {
    fail_unless (index < fake.count && length == MAP_LEN);
    fake.pages[index] = p;
  }
  g_hash_table_add (fake.maps, p);
  g_mutex_unlock (&fake.lock);
  return p;
}

static int
fake_munmap (void *addr, gsize length)
{
  guint i;

  g_mutex_lock (&fake.lock);
  fail_unless (g_hash_table_remove (fake.maps, addr), "unmapped twice");
  for (i = 0; i < N_MAX; i++) {
    if (fake.pages[i] == addr)
      fake.pages[i] = NULL;
    if (fake.planes[i][0] == addr)
      fake.planes[i][0] = NULL;
    if (fake.planes[i][1] == addr)
      fake.planes[i][1] = NULL;
  }
  g_mutex_unlock (&fake.lock);
  g_free (addr);
  return 0;
}

/* How many of our fds are FAKE_DEV: the elements' and their pools'. */
static guint
open_fake_fds (void)
{
  GDir *dir = g_dir_open ("/proc/self/fd", 0, NULL);
  const gchar *name;
  guint n = 0;

  fail_unless (dir != NULL);
  while ((name = g_dir_read_name (dir))) {
    gchar *path = g_build_filename ("/proc/self/fd", name, NULL);
    gchar *target = g_file_read_link (path, NULL);

    n += target && g_str_equal (target, FAKE_DEV);
    g_free (target);
    g_free (path);
  }
  g_dir_close (dir);
  return n;
}

static void
fake_setup (void)
{
  g_mutex_lock (&fake.lock);
  fake.output = FALSE;
  fake.count = 0;
  fake_streamoff ();
  memset (fake.pages, 0, sizeof (fake.pages));
  fake.sequence = 0;
  fake.gap_every = 0;
  fake.bad_every = 0;
  fake.interval = 0;
  fake.can_crop = TRUE;
  memset (&fake.crop, 0, sizeof (fake.crop));
  fake.crops = 0;
  fake.mplane = FALSE;
  fake.mplane_bufs = 0;
  fake.data_offset = 0;
  fake.per_plane = FALSE;
  fake.slow_qbuf = FALSE;
  fake.ts_kind = 0;
  fake.pad = 0;
  memset (fake.planes, 0, sizeof (fake.planes));
  fake.out_first = 0;
  fake.out_bytesused = 0;
  fake.brightness = 128;
  fake.contrast = 50;
  fake.pattern = 0;
  if (!fake.maps)
    fake.maps = g_hash_table_new (NULL, NULL);
  if (!fake.out_sums)
    fake.out_sums = g_array_new (FALSE, FALSE, sizeof (guint32));
  g_array_set_size (fake.out_sums, 0);
  g_mutex_unlock (&fake.lock);
  fake.fds_before = open_fake_fds ();
}

/* Everything is let go: every mapping unmapped, the driver's buffers
 * freed, every fd on the device closed (the pools' dups too). */
static void
assert_device_released (void)
{
  g_mutex_lock (&fake.lock);
  fail_unless_equals_int (g_hash_table_size (fake.maps), 0);
  fail_unless_equals_int (fake.count, 0);
  fail_if (fake.streaming);
  g_mutex_unlock (&fake.lock);
  fail_unless_equals_int (open_fake_fds (), fake.fds_before);
}

/* ------------------------------------------------------------------ */
/* helpers */

/* A whole frame of the fake: every byte follows its sequence number. */
static void
assert_frame (GstBuffer * buf)
{
  assert_numbered_frame (buf, SIZEIMAGE, pixel);
}

static gboolean
is_driver_memory (GstBuffer * buf)
{
  return gst_memory_is_type (gst_buffer_peek_memory (buf, 0),
      "VstreamMemory");
}

/* vstreamsrc on the fake in @io_mode; a frame is captured only once the
 * one before was pulled, so the test decides when buffers come back. */
static GstHarness *
src_harness_io (const gchar * io_mode)
{
  gchar *desc = g_strdup_printf ("vstreamsrc device=" FAKE_DEV " io-mode=%s",
      io_mode);
  GstHarness *h = gst_harness_new_parse (desc);

  g_free (desc);
  gst_harness_set_blocking_push_mode (h);
  gst_harness_play (h);
  return h;
}

static GstHarness *
src_harness (void)
{
  return src_harness_io ("mmap");
}

/* Pull @n frames and let them go: the pool cycles through its buffers. */
static void
pull_and_drop (GstHarness * h, gint n)
{
  gint i;

  for (i = 0; i < n; i++) {
    GstBuffer *b = gst_harness_pull (h);

    fail_unless (b != NULL, "frame %d did not come", i);
    gst_buffer_unref (b);
  }
}

/* ------------------------------------------------------------------ */
/* tests */

/* Ways to keep a frame's memory beyond its GstBuffer. */
static GstBuffer *
shallow_copy (GstBuffer * b)
{
  GstBuffer *copy = gst_buffer_copy (b);

  fail_unless (gst_buffer_peek_memory (copy, 0) ==
      gst_buffer_peek_memory (b, 0), "not a shallow copy");
  return copy;
}

static GstBuffer *
sub_buffer (GstBuffer * b)
{
  GstBuffer *sub = gst_buffer_copy_region (b, GST_BUFFER_COPY_ALL, 1000,
      2000);

  fail_unless (gst_buffer_peek_memory (sub, 0)->parent ==
      gst_buffer_peek_memory (b, 0), "not a sub-buffer");
  return sub;
}

/* NV12M (fake.per_plane): the chroma plane alone, past the luma's end */
static GstBuffer *
chroma_plane (GstBuffer * b)
{
  GstBuffer *chroma = gst_buffer_copy_region (b, GST_BUFFER_COPY_MEMORY,
      Y_SIZE, Y_SIZE / 2);
  GstMemory *mem = gst_buffer_peek_memory (chroma, 0);

  fail_unless (mem == gst_buffer_peek_memory (b, 1) ||
      mem->parent == gst_buffer_peek_memory (b, 1), "not the chroma plane");
  return chroma;
}

static const struct
{
  GstBuffer *(*keep) (GstBuffer *);
  gboolean per_plane;           /* on the fake's NV12M */
} keepers[] = { {shallow_copy, FALSE}, {sub_buffer, FALSE},
{chroma_plane, TRUE}
};

/* A shallow copy or a sub-buffer shares the driver buffer's memory, the
 * chroma plane of an NV12M frame one of its memories: the buffer must not
 * be captured into again while it lives (for NV12M: while any of its
 * memories does), nor unmapped after the element is gone. */
GST_START_TEST (test_kept_memory_keeps_content)
{
  gboolean per_plane = keepers[__i__].per_plane;
  gsize size = per_plane ? NV12_SIZE : SIZEIMAGE;
  GstHarness *h;
  GstBuffer *b, *kept;
  guint32 sum;
  gint i;

  fake.mplane = fake.per_plane = per_plane;
  h = src_harness ();
  b = gst_harness_pull (h);
  fail_unless (is_driver_memory (b));
  kept = keepers[__i__].keep (b);
  sum = checksum (kept);
  gst_buffer_unref (b);
  for (i = 0; i < 12; i++) {
    b = gst_harness_pull (h);
    fail_unless (b != NULL, "frame %d did not come", i);
    assert_numbered_frame (b, size, pixel);
    gst_buffer_unref (b);
  }
  fail_unless_equals_int (checksum (kept), sum);
  gst_harness_teardown (h);
  fail_unless_equals_int (checksum (kept), sum);
  gst_buffer_unref (kept);
  assert_device_released ();
}

GST_END_TEST;

/* A peer that takes no GstVideoMeta reads the default layout: frames with
 * the driver's padded lines are copied into it; a peer that takes the
 * meta gets the driver's buffer with its strides. */
GST_START_TEST (test_peer_without_video_meta)
{
  gint with_meta;

  for (with_meta = 0; with_meta < 2; with_meta++) {
    GstHarness *h = gst_harness_new_parse ("vstreamsrc device=" FAKE_DEV);
    GstElement *src = harness_element (h, "vstreamsrc");
    GstBuffer *b;
    GstMapInfo map;
    GstVideoMeta *meta;
    guint32 seq;
    gsize x, y, bpl = W * 2 + 16;

    fake_setup ();
    fake.pad = 16;
    if (with_meta)
      gst_harness_add_propose_allocation_meta (h, GST_VIDEO_META_API_TYPE,
          NULL);
    gst_harness_set_blocking_push_mode (h);
    gst_harness_play (h);
    b = gst_harness_pull (h);
    fail_unless (b != NULL);
    meta = gst_buffer_get_video_meta (b);
    if (with_meta) {
      fail_unless (is_driver_memory (b));
      fail_unless (meta != NULL);
      fail_unless_equals_int (meta->stride[0], bpl);
      fail_unless_equals_int (stat_of (src, "copies"), 0);
    } else {
      fail_if (meta && meta->stride[0] != W * 2);
      fail_unless_equals_int (gst_buffer_get_size (b), SIZEIMAGE);
      /* the next frame may be on its way */
      fail_unless (stat_of (src, "copies") >= 1);
      /* every line is the device's line, its padding left out */
      fail_unless (gst_buffer_map (b, &map, GST_MAP_READ));
      memcpy (&seq, map.data, 4);
      for (y = 0; y < H; y++)
        for (x = y ? 0 : 4; x < W * 2; x++)
          fail_unless_equals_int (map.data[y * W * 2 + x],
              pixel (seq, y * bpl + x));
      gst_buffer_unmap (b, &map);
    }
    gst_buffer_unref (b);
    gst_object_unref (src);
    gst_harness_teardown (h);
    assert_device_released ();
  }
}

GST_END_TEST;

/* device-fd: the open node's descriptor while open, -1 closed */
GST_START_TEST (test_device_fd)
{
  GstHarness *h = src_harness ();
  GstElement *src = harness_element (h, "vstreamsrc");
  struct stat open_st, dev_st;
  gint fd = -1;

  gst_buffer_unref (gst_harness_pull (h));
  g_object_get (src, "device-fd", &fd, NULL);
  /* the device's, not any open fd */
  fail_unless (fd >= 0 && fstat (fd, &open_st) == 0 &&
      stat (FAKE_DEV, &dev_st) == 0 && open_st.st_rdev == dev_st.st_rdev &&
      S_ISCHR (open_st.st_mode));
  /* the harness stops the source (a blocked push unblocks) */
  gst_harness_teardown (h);
  g_object_get (src, "device-fd", &fd, NULL);
  fail_unless_equals_int (fd, -1);
  gst_object_unref (src);
  assert_device_released ();
}

GST_END_TEST;

/* Downstream asks for buffers it will hold (its pool's min): the source
 * makes that many more, so holding them costs no copy. */
static GstPadProbeReturn
ask_min_buffers (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  GstQuery *q = GST_PAD_PROBE_INFO_QUERY (info);

  if (GST_QUERY_TYPE (q) == GST_QUERY_ALLOCATION)
    gst_query_add_allocation_pool (q, NULL, SIZEIMAGE,
        GPOINTER_TO_UINT (user_data), 0);
  return GST_PAD_PROBE_OK;
}

GST_START_TEST (test_downstream_min_buffers)
{
  GstHarness *h = gst_harness_new_parse ("vstreamsrc device=" FAKE_DEV);
  GstElement *src = harness_element (h, "vstreamsrc");
  GstBuffer *held[5];
  guint i;

  gst_pad_add_probe (h->sinkpad, GST_PAD_PROBE_TYPE_QUERY_DOWNSTREAM,
      ask_min_buffers, GUINT_TO_POINTER (3), NULL);
  gst_harness_set_blocking_push_mode (h);
  gst_harness_play (h);
  for (i = 0; i < G_N_ELEMENTS (held); i++) {
    held[i] = gst_harness_pull (h);
    fail_unless (held[i] != NULL);
    assert_frame (held[i]);
  }
  /* the element's 4, and downstream's 3 */
  fail_unless_equals_int (fake.count, 7);
  fail_unless_equals_int (stat_of (src, "copies"), 0);
  for (i = 0; i < G_N_ELEMENTS (held); i++)
    gst_buffer_unref (held[i]);
  gst_object_unref (src);
  gst_harness_teardown (h);
  assert_device_released ();
}

GST_END_TEST;

/* userptr: the driver captures into the pool's own memory (no lender) */
static const gchar *held_io_modes[] = { "mmap", "userptr" };

/* Downstream keeps the memory of more frames than the driver has buffers:
 * the source copies instead of stalling, says so in stats (userptr used to
 * copy on write in secret, saying zero-copy), and goes back to zero copy
 * once the memory is let go. */
GST_START_TEST (test_held_memory_copies_not_stalls)
{
  GstHarness *h = src_harness_io (held_io_modes[__i__]);
  GstElement *src = harness_element (h, "vstreamsrc");
  GstBuffer *held[8];
  guint32 sums[8];
  guint64 zero_copy;
  gint i;

  for (i = 0; i < 8; i++) {
    GstBuffer *b = gst_harness_pull (h);

    fail_unless (b != NULL, "stalled after %d frames held", i);
    held[i] = gst_buffer_copy (b);
    sums[i] = checksum (held[i]);
    gst_buffer_unref (b);
  }
  fail_unless (stat_of (src, "copies") >= 4, "copies %" G_GUINT64_FORMAT,
      stat_of (src, "copies"));
  pull_and_drop (h, 6);
  for (i = 0; i < 8; i++) {
    fail_unless_equals_int (checksum (held[i]), sums[i]);
    assert_frame (held[i]);
    gst_buffer_unref (held[i]);
  }
  /* let go: the parked buffers return, frames leave without a copy */
  pull_and_drop (h, 2);
  zero_copy = stat_of (src, "zero-copy");
  pull_and_drop (h, 6);
  /* one frame may be on its way while the counter is read */
  fail_unless (stat_of (src, "zero-copy") >= zero_copy + 5);
  gst_object_unref (src);
  gst_harness_teardown (h);
  assert_device_released ();
}

GST_END_TEST;

static GstElement *
pipeline_playing (const gchar * desc)
{
  GError *err = NULL;
  GstElement *pipe = gst_parse_launch (desc, &err);

  fail_unless (pipe != NULL, "%s: %s", desc, err ? err->message : "");
  fail_unless (gst_element_set_state (pipe, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  return pipe;
}

static void
stop_pipeline (GstElement * pipe)
{
  fail_unless_equals_int (gst_element_set_state (pipe, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  gst_object_unref (pipe);
}

/* An application keeps samples past the pipeline's end: their bytes stay,
 * and dropping them last (the pool stops then) touches nothing freed. */
GST_START_TEST (test_samples_outlive_pipeline)
{
  GstElement *pipe = pipeline_playing ("vstreamsrc device=" FAKE_DEV
      " ! appsink name=sink max-buffers=1");
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipe), "sink");
  GstSample *samples[10];
  guint32 sums[10];
  gint i, driver = 0;

  pull_samples (sink, samples, sums, 10);
  gst_object_unref (sink);
  stop_pipeline (pipe);
  assert_samples_unchanged (samples, sums, 10, "after the pipeline");
  for (i = 0; i < 10; i++) {
    GstBuffer *b = gst_sample_get_buffer (samples[i]);

    driver += is_driver_memory (b);
    assert_frame (b);
  }
  fail_unless (driver > 0, "no sample holds driver memory");
  for (i = 0; i < 10; i++)
    gst_sample_unref (samples[i]);
  assert_device_released ();
}

GST_END_TEST;

/* tee and a duplicating videorate (its output buffers are shallow copies
 * of the frame it keeps); the appsink's samples are held past teardown
 * while the source goes on. */
GST_START_TEST (test_tee_videorate_samples)
{
  GstElement *pipe;
  GstElement *sink;
  GstSample *samples[10];
  guint32 sums[10];
  gint i;

  fake.interval = G_USEC_PER_SEC / 30;
  pipe = pipeline_playing ("vstreamsrc device=" FAKE_DEV " ! tee name=t "
      "! queue ! videorate ! video/x-raw,framerate=60/1 "
      "! appsink name=sink max-buffers=1  t. ! queue ! fakesink");
  sink = gst_bin_get_by_name (GST_BIN (pipe), "sink");
  pull_samples (sink, samples, sums, 10);
  fail_unless (shared_driver_frames (samples, 10) > 0,
      "videorate duplicated no driver buffer");
  pull_and_drop_samples (sink, 10);
  gst_object_unref (sink);
  assert_samples_unchanged (samples, sums, 10, "while the source ran");
  stop_pipeline (pipe);
  assert_samples_unchanged (samples, sums, 10, "after the pipeline");
  for (i = 0; i < 10; i++) {
    assert_frame (gst_sample_get_buffer (samples[i]));
    gst_sample_unref (samples[i]);
  }
  assert_device_released ();
}

GST_END_TEST;

static gpointer
let_go_later (gpointer buf)
{
  g_usleep (G_USEC_PER_SEC / 20);
  gst_buffer_unref (buf);
  return NULL;
}

/* The sink's pool hands upstream a driver buffer again only once nothing
 * references its memory: not while a shallow copy lives, and again (not
 * lost) after it is let go. */
GST_START_TEST (test_sink_reuses_memory_when_let_go)
{
  GstHarness *h;
  GstCaps *caps = gst_caps_from_string (CAPS);
  GstBufferPoolAcquireParams nowait = {.flags =
        GST_BUFFER_POOL_ACQUIRE_FLAG_DONTWAIT
  };
  GstBufferPool *pool = NULL;
  GstBuffer *b[4], *copy, *got[4];
  GstQuery *q;
  GThread *thread;
  guint32 sum;
  gint i, n;

  fake.output = TRUE;
  h = gst_harness_new_parse ("vstreamsink device=" FAKE_DEV
      " sync=false enable-last-sample=false");
  gst_harness_play (h);
  gst_harness_set_src_caps (h, gst_caps_ref (caps));
  q = gst_query_new_allocation (caps, TRUE);
  fail_unless (gst_pad_peer_query (h->srcpad, q));
  fail_unless (gst_query_get_n_allocation_pools (q) > 0, "no pool offered");
  gst_query_parse_nth_allocation_pool (q, 0, &pool, NULL, NULL, NULL);
  gst_query_unref (q);
  fail_unless (gst_buffer_pool_set_active (pool, TRUE));

  for (i = 0; i < 4; i++) {
    fail_unless_equals_int (gst_buffer_pool_acquire_buffer (pool, &b[i],
            &nowait), GST_FLOW_OK);
    gst_buffer_memset (b[i], 0, 'a' + i, SIZEIMAGE);
  }
  copy = gst_buffer_copy (b[0]);
  sum = checksum (copy);
  for (i = 0; i < 4; i++)
    fail_unless_equals_int (gst_harness_push (h, b[i]), GST_FLOW_OK);

  /* the driver is done with all four: three come back */
  for (n = 0; gst_buffer_pool_acquire_buffer (pool, &got[n], &nowait) ==
      GST_FLOW_OK; n++) {
    fail_if (gst_buffer_peek_memory (got[n], 0) ==
        gst_buffer_peek_memory (copy, 0), "the copy's memory handed out");
    gst_buffer_memset (got[n], 0, 'z', SIZEIMAGE);
  }
  fail_unless_equals_int (n, 3);
  fail_unless_equals_int (checksum (copy), sum);
  /* ... and the fourth once the copy is gone: upstream waits for it */
  thread = g_thread_new ("let-go", let_go_later, copy);
  fail_unless_equals_int (gst_buffer_pool_acquire_buffer (pool, &got[3],
          NULL), GST_FLOW_OK);
  g_thread_join (thread);
  for (i = 0; i < 4; i++)
    gst_buffer_unref (got[i]);

  fail_unless (gst_buffer_pool_set_active (pool, FALSE));
  gst_object_unref (pool);
  gst_harness_teardown (h);
  gst_caps_unref (caps);
  assert_device_released ();
}

GST_END_TEST;

/* What sits between a producer and vstreamsink in the pipelines people
 * write: every element hands the sink buffers from a thread of its own
 * while upstream waits in the sink's pool for a free one. */
static const struct
{
  const gchar *between;
  const gchar *io_mode;
} shapes[] = {
  {"queue", "mmap"},
  {"queue", "userptr"},
  {"queue max-size-buffers=1", "mmap"},
  {"tee name=t ! queue", "mmap"},
  {"multiqueue", "mmap"},
};

#define SHAPE_FRAMES 20
#define SHAPE_SOURCE "videotestsrc num-buffers=20 pattern=ball ! " CAPS

/* Checksums of the frames @source makes, up to EOS. */
static GArray *
source_sums (const gchar * source)
{
  gchar *desc = g_strdup_printf ("%s ! appsink name=sink sync=false", source);
  GstElement *pipe = pipeline_playing (desc);
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipe), "sink");
  GArray *sums = g_array_new (FALSE, FALSE, sizeof (guint32));
  GstSample *sample;

  while ((sample = gst_app_sink_try_pull_sample (GST_APP_SINK (sink),
              10 * GST_SECOND))) {
    guint32 sum = checksum (gst_sample_get_buffer (sample));

    g_array_append_val (sums, sum);
    gst_sample_unref (sample);
  }
  fail_unless (gst_app_sink_is_eos (GST_APP_SINK (sink)));
  gst_object_unref (sink);
  stop_pipeline (pipe);
  g_free (desc);
  return sums;
}

static gchar *
shape_desc (const gchar * source, const gchar * between, const gchar * io_mode)
{
  return g_strdup_printf ("%s ! %s ! vstreamsink name=vsink device="
      FAKE_DEV " io-mode=%s sync=false%s", source, between, io_mode,
      g_str_has_prefix (between, "tee") ? " t. ! queue ! fakesink" : "");
}

/* @desc's frames and the device's: the output fake, holding each buffer a
 * while (@interval), as a paced output does */
static GstElement *
shape_playing (const gchar * desc, gint64 interval)
{
  fake.output = TRUE;
  fake.interval = interval;
  fake.slow_qbuf = TRUE;
  return pipeline_playing (desc);
}

static void
wait_eos (GstElement * pipe, const gchar * desc)
{
  GstBus *bus = gst_element_get_bus (pipe);
  GstMessage *msg = gst_bus_timed_pop_filtered (bus, 20 * GST_SECOND,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);

  fail_unless (msg != NULL, "%s: no EOS in 20 s, %u frames queued", desc,
      fake.out_sums->len);
  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
    GError *err;

    gst_message_parse_error (msg, &err, NULL);
    fail ("%s: %s", desc, err->message);
  }
  gst_message_unref (msg);
  gst_object_unref (bus);
}

static guint
device_frames (void)
{
  guint n;

  g_mutex_lock (&fake.lock);
  n = fake.out_sums->len;
  g_mutex_unlock (&fake.lock);
  return n;
}

static void
wait_device_frames (guint n)
{
  gint i;

  for (i = 0; i < 10000 && device_frames () < n; i++)
    g_usleep (1000);
  fail_unless (device_frames () >= n, "%u frames at the device, not %u",
      device_frames (), n);
}

/* The device got want[from .. from + n - 1] as its frames at..at + n - 1 */
static void
assert_device_got (GArray * want, guint from, guint at, guint n)
{
  guint i;

  fail_unless (fake.out_sums->len >= at + n);
  for (i = 0; i < n; i++)
    fail_unless_equals_int (g_array_index (fake.out_sums, guint32, at + i),
        g_array_index (want, guint32, from + i));
}

/* The device got every frame of @want, once each in order; the test's
 * pipeline is gone and left nothing behind. */
static void
assert_all_sent_and_released (GArray * want, gchar * desc)
{
  fail_unless_equals_int (fake.out_sums->len, SHAPE_FRAMES);
  assert_device_got (want, 0, 0, SHAPE_FRAMES);
  g_array_unref (want);
  g_free (desc);
  assert_device_released ();
}

/* @source's every frame reaches the device through @between into the
 * sink in @io_mode, in order and bit-exact (a moving ball: a frame lost
 * or sent twice shows), and the pipeline ends.  GstBaseSink counts as
 * rendered the frames of the last stream: @last_stream of them. */
static void
assert_every_frame_sent (const gchar * source, const gchar * between,
    const gchar * io_mode, guint last_stream)
{
  gchar *desc = shape_desc (source, between, io_mode);
  GArray *want = source_sums (source);
  GstElement *pipe, *sink;
  GstStructure *stats;
  guint64 rendered = 0;

  fail_unless_equals_int (want->len, SHAPE_FRAMES);
  pipe = shape_playing (desc, G_USEC_PER_SEC / 200);
  wait_eos (pipe, desc);
  /* the sink's stats keep GstBaseSink's counters beside its own */
  sink = gst_bin_get_by_name (GST_BIN (pipe), "vsink");
  g_object_get (sink, "stats", &stats, NULL);
  fail_unless (gst_structure_get_uint64 (stats, "rendered", &rendered));
  fail_unless_equals_uint64 (rendered, last_stream);
  fail_unless (gst_structure_has_field (stats, "average-rate"));
  gst_structure_free (stats);
  fail_unless_equals_uint64 (stat_of (sink, "frames"), SHAPE_FRAMES);
  gst_object_unref (sink);
  stop_pipeline (pipe);
  assert_all_sent_and_released (want, desc);
}

GST_START_TEST (test_sink_pipeline_shapes)
{
  assert_every_frame_sent (SHAPE_SOURCE, shapes[__i__].between,
      shapes[__i__].io_mode, SHAPE_FRAMES);
}

GST_END_TEST;

/* A variable rate (framerate=0/1: RTP, screen capture, appsrc) is taken
 * although the device lists 30 fps only; every frame goes through.
 * (videotestsrc makes one still frame at 0/1: capssetter says 0/1 of a
 * timed stream, as a depayloader does.) */
GST_START_TEST (test_sink_variable_rate)
{
  assert_every_frame_sent (SHAPE_SOURCE " ! capssetter "
      "caps=video/x-raw,framerate=0/1", "queue", "mmap", SHAPE_FRAMES);
}

GST_END_TEST;

/* A producer whose rate changes mid-stream, 30 -> 15 -> 60 fps (three
 * streams one after another: caps change twice), loses no frame. */
#define RATE_PART(n, rate) "videotestsrc num-buffers=" #n " pattern=ball ! " \
  "video/x-raw,format=YUY2,width=64,height=48,framerate=" #rate "/1 ! c. "

GST_START_TEST (test_sink_rate_change)
{
  assert_every_frame_sent (RATE_PART (7, 30) RATE_PART (7, 15)
      RATE_PART (6, 60) "concat name=c", "queue", "mmap", 6);
}

GST_END_TEST;

/* A file through a demuxer and a decoder (decodebin, its multiqueue in
 * front): the ball as JPEG in Matroska, made for the test. */
#define FILE_SOURCE "filesrc location=%s ! decodebin ! videoconvert ! " CAPS

static gchar *
make_file (void)
{
  gchar *path = NULL;
  gint fd = g_file_open_tmp ("vstream-XXXXXX.mkv", &path, NULL);
  gchar *desc = g_strdup_printf ("videotestsrc num-buffers=%d pattern=ball "
      "! " CAPS " ! jpegenc ! matroskamux ! filesink location=%s",
      SHAPE_FRAMES, path);
  GstElement *pipe;

  fail_unless (fd >= 0);
  close (fd);
  pipe = pipeline_playing (desc);
  wait_eos (pipe, desc);
  stop_pipeline (pipe);
  g_free (desc);
  return path;
}

static const gchar *file_io_modes[] = { "mmap", "userptr" };

GST_START_TEST (test_sink_decoded_file)
{
  gchar *file = make_file ();
  gchar *source = g_strdup_printf (FILE_SOURCE, file);

  assert_every_frame_sent (source, "queue", file_io_modes[__i__],
      SHAPE_FRAMES);
  g_unlink (file);
  g_free (file);
  g_free (source);
}

GST_END_TEST;

/* A leaky queue drops what the sink cannot take in time: the device gets
 * the frames that were not dropped, in order and bit-exact, the last one
 * too, and the pipeline ends. */
GST_START_TEST (test_sink_leaky_queue)
{
  gchar *desc = shape_desc (SHAPE_SOURCE,
      "queue leaky=downstream max-size-buffers=1", "mmap");
  GArray *want = source_sums (SHAPE_SOURCE);
  GstElement *pipe = shape_playing (desc, G_USEC_PER_SEC / 100);
  GstElement *sink;
  guint i, j = 0, n;

  wait_eos (pipe, desc);
  sink = gst_bin_get_by_name (GST_BIN (pipe), "vsink");
  n = device_frames ();
  fail_unless_equals_uint64 (stat_of (sink, "frames"), n);
  gst_object_unref (sink);
  stop_pipeline (pipe);
  GST_INFO ("leaky queue: %u of %d frames reached the device", n,
      SHAPE_FRAMES);
  fail_unless (n >= 1 && n <= SHAPE_FRAMES, "%u frames", n);
  for (i = 0; i < n; i++) {
    guint32 got = g_array_index (fake.out_sums, guint32, i);

    while (j < want->len && g_array_index (want, guint32, j) != got)
      j++;
    fail_unless (j < want->len, "frame %u at the device is none of the "
        "source's after the one before it", i);
    j++;
  }
  fail_unless_equals_int (j, SHAPE_FRAMES);     /* the last frame came */
  g_array_unref (want);
  g_free (desc);
  assert_device_released ();
}

GST_END_TEST;

/* A flushing seek back to the start while frames are queued in front of
 * the sink and upstream waits in its pool: the frames before the seek are
 * the file's first ones, then the whole file again, bit-exact. */
GST_START_TEST (test_sink_flushing_seek)
{
  gchar *file = make_file ();
  gchar *source = g_strdup_printf (FILE_SOURCE, file);
  gchar *desc = shape_desc (source, "queue", "mmap");
  GArray *want = source_sums (source);
  GstElement *pipe = shape_playing (desc, G_USEC_PER_SEC / 20);
  guint head;

  /* 50 ms a frame: the seek lands well before the 20th, even under a
   * loaded ASan run */
  wait_device_frames (5);
  fail_unless (gst_element_seek_simple (pipe, GST_FORMAT_TIME,
          GST_SEEK_FLAG_FLUSH, 0));
  wait_eos (pipe, desc);
  stop_pipeline (pipe);
  fail_unless (fake.out_sums->len >= 5 + SHAPE_FRAMES, "%u frames",
      fake.out_sums->len);
  head = fake.out_sums->len - SHAPE_FRAMES;
  GST_INFO ("seek: %u frames before it", head);
  assert_device_got (want, 0, 0, head);
  assert_device_got (want, 0, head, SHAPE_FRAMES);
  g_array_unref (want);
  g_unlink (file);
  g_free (file);
  g_free (source);
  g_free (desc);
  assert_device_released ();
}

GST_END_TEST;

/* PLAYING -> PAUSED -> PLAYING mid-stream: nothing reaches the device
 * while paused (the prerolled frame is not shown twice), every frame
 * once after. */
GST_START_TEST (test_sink_pause_resume)
{
  gchar *desc = shape_desc (SHAPE_SOURCE, "queue", "mmap");
  GArray *want = source_sums (SHAPE_SOURCE);
  GstElement *pipe = shape_playing (desc, G_USEC_PER_SEC / 20);
  guint paused_at;

  wait_device_frames (5);
  fail_if (gst_element_set_state (pipe, GST_STATE_PAUSED) ==
      GST_STATE_CHANGE_FAILURE);
  fail_unless_equals_int (gst_element_get_state (pipe, NULL, NULL,
          10 * GST_SECOND), GST_STATE_CHANGE_SUCCESS);
  paused_at = device_frames ();
  fail_unless (paused_at < SHAPE_FRAMES, "ended before the pause");
  g_usleep (G_USEC_PER_SEC / 10);
  fail_unless_equals_int (device_frames (), paused_at);
  fail_if (gst_element_set_state (pipe, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE);
  wait_eos (pipe, desc);
  stop_pipeline (pipe);
  assert_all_sent_and_released (want, desc);
}

GST_END_TEST;

/* An application taps the sink's frames (a pad probe keeping two of its
 * pool's buffers) and drops them only after the pipeline stopped: the
 * stop does not wait for them, their bytes stay, and letting them go
 * last frees the driver's memory. */
static GstPadProbeReturn
keep_two (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  GstBuffer **kept = user_data;

  if (!kept[0] || !kept[1])
    kept[kept[0] ? 1 : 0] = gst_buffer_ref (GST_PAD_PROBE_INFO_BUFFER (info));
  return GST_PAD_PROBE_OK;
}

GST_START_TEST (test_sink_stop_while_held)
{
  gchar *desc = shape_desc (SHAPE_SOURCE, "queue", "mmap");
  GArray *want = source_sums (SHAPE_SOURCE);
  GstBuffer *kept[2] = { NULL, NULL };
  GstElement *pipe, *sink;
  GstPad *pad;
  gint i;

  fake.output = TRUE;
  pipe = gst_parse_launch (desc, NULL);
  sink = gst_bin_get_by_name (GST_BIN (pipe), "vsink");
  pad = gst_element_get_static_pad (sink, "sink");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, keep_two, kept, NULL);
  gst_object_unref (pad);
  gst_object_unref (sink);
  fail_if (gst_element_set_state (pipe, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE);
  wait_eos (pipe, desc);
  stop_pipeline (pipe);
  fail_unless_equals_int (fake.out_sums->len, SHAPE_FRAMES);
  for (i = 0; i < 2; i++) {
    fail_unless (is_driver_memory (kept[i]), "frame %d: not the driver's", i);
    fail_unless_equals_int (checksum (kept[i]),
        g_array_index (want, guint32, i));
    gst_buffer_unref (kept[i]);
  }
  g_array_unref (want);
  g_free (desc);
  assert_device_released ();
}

GST_END_TEST;

/* A short frame or one flagged ERROR never leaves the source (downstream
 * could not map it as a frame, or would show a damaged picture); each
 * counts as a drop. */
GST_START_TEST (test_bad_frames_dropped)
{
  GstHarness *h;
  GstElement *src;
  gint i;

  fake.bad_every = 4;
  h = src_harness ();
  src = harness_element (h, "vstreamsrc");
  for (i = 0; i < 12; i++) {
    GstBuffer *b = gst_harness_pull (h);
    guint32 seq;

    fail_unless (b != NULL, "frame %d did not come", i);
    assert_frame (b);
    gst_buffer_extract (b, 0, &seq, 4);
    fail_if (seq % 4 == 1 || seq % 4 == 2, "bad frame %u pushed", seq);
    gst_buffer_unref (b);
  }
  /* 12 good frames span at least 22 sequence numbers, 10 of them bad */
  fail_unless (stat_of (src, "drops") >= 10, "drops %" G_GUINT64_FORMAT,
      stat_of (src, "drops"));
  gst_object_unref (src);
  gst_harness_teardown (h);
  assert_device_released ();
}

GST_END_TEST;

/* Driver drops (sequence gaps) become QoS messages in running time, not
 * the driver's CLOCK_MONOTONIC. */
GST_START_TEST (test_qos_running_time)
{
  GstElement *pipe;
  GstBus *bus;
  GstMessage *msg;
  GstClock *clock;
  GstClockTime running_time, stream_time, timestamp, duration, now;
  GstFormat format;
  guint64 processed, dropped;
  gboolean live;

  fake.gap_every = 3;
  fake.interval = G_USEC_PER_SEC / 100;
  pipe = pipeline_playing ("vstreamsrc device=" FAKE_DEV " ! fakesink");
  bus = gst_element_get_bus (pipe);
  msg = gst_bus_timed_pop_filtered (bus, 10 * GST_SECOND, GST_MESSAGE_QOS);
  fail_unless (msg != NULL, "no QoS message for dropped frames");
  clock = gst_pipeline_get_clock (GST_PIPELINE (pipe));
  now = gst_clock_get_time (clock) - gst_element_get_base_time (pipe);
  gst_message_parse_qos (msg, &live, &running_time, &stream_time,
      &timestamp, &duration);
  gst_message_parse_qos_stats (msg, &format, &processed, &dropped);
  fail_unless (live);
  fail_unless (running_time <= now, "QoS at %" GST_TIME_FORMAT ", the "
      "pipeline is at %" GST_TIME_FORMAT, GST_TIME_ARGS (running_time),
      GST_TIME_ARGS (now));
  fail_unless (timestamp <= now);
  fail_unless_equals_int (format, GST_FORMAT_BUFFERS);
  fail_unless (dropped >= 1);
  gst_message_unref (msg);
  gst_object_unref (clock);
  gst_object_unref (bus);
  stop_pipeline (pipe);
  assert_device_released ();
}

GST_END_TEST;

/*
 * Driver timestamps that are not the pipeline's time (COPY from a
 * producer's own clock, or CLOCK_MONOTONIC in the future) are not used:
 * buffers still get running times at the clock's pace, not all 0.
 */
GST_START_TEST (test_untrusted_timestamps)
{
  gint kind;

  for (kind = 1; kind <= 2; kind++) {
    GstElement *pipe, *sink;
    GstClockTime last = GST_CLOCK_TIME_NONE, now;
    GstClock *clock;
    gint i;

    fake.ts_kind = kind;
    fake.interval = G_USEC_PER_SEC / 100;
    pipe = pipeline_playing ("vstreamsrc device=" FAKE_DEV
        " ! appsink name=sink sync=false max-buffers=100");
    sink = gst_bin_get_by_name (GST_BIN (pipe), "sink");
    for (i = 0; i < 10; i++) {
      GstSample *sample = NULL;
      GstClockTime pts;

      g_signal_emit_by_name (sink, "pull-sample", &sample);
      fail_unless (sample != NULL, "no frame %d", i);
      pts = GST_BUFFER_PTS (gst_sample_get_buffer (sample));
      clock = gst_pipeline_get_clock (GST_PIPELINE (pipe));
      now = gst_clock_get_time (clock) - gst_element_get_base_time (pipe);
      gst_object_unref (clock);
      fail_unless (GST_CLOCK_TIME_IS_VALID (pts) && pts <= now,
          "timestamps %d: frame %d at %" GST_TIME_FORMAT ", the clock at %"
          GST_TIME_FORMAT, kind, i, GST_TIME_ARGS (pts), GST_TIME_ARGS (now));
      fail_unless (!GST_CLOCK_TIME_IS_VALID (last) || pts >= last,
          "timestamps %d: frame %d at %" GST_TIME_FORMAT " after %"
          GST_TIME_FORMAT, kind, i, GST_TIME_ARGS (pts), GST_TIME_ARGS (last));
      last = pts;
      gst_sample_unref (sample);
    }
    /* 10 frames 10 ms apart: not all at 0 (a delay as big as the clock) */
    fail_unless (last >= 50 * GST_MSECOND, "timestamps %d: the tenth frame "
        "at %" GST_TIME_FORMAT, kind, GST_TIME_ARGS (last));
    gst_object_unref (sink);
    stop_pipeline (pipe);
    assert_device_released ();
  }
}

GST_END_TEST;

/* ColorBalance: the device's brightness and contrast, set and read. */
GST_START_TEST (test_color_balance)
{
  GstElement *src = gst_element_factory_make ("vstreamsrc", NULL);
  GstColorBalance *cb = GST_COLOR_BALANCE (src);
  const GList *l;
  GstColorBalanceChannel *bright = NULL, *contrast = NULL;

  g_object_set (src, "device", FAKE_DEV, NULL);
  fail_unless (gst_color_balance_list_channels (cb) == NULL);
  fail_unless_equals_int (gst_element_set_state (src, GST_STATE_READY),
      GST_STATE_CHANGE_SUCCESS);
  for (l = gst_color_balance_list_channels (cb); l; l = l->next) {
    GstColorBalanceChannel *ch = l->data;

    if (g_str_equal (ch->label, "BRIGHTNESS"))
      bright = ch;
    else if (g_str_equal (ch->label, "CONTRAST"))
      contrast = ch;
    else
      fail ("unexpected channel %s", ch->label);
  }
  fail_unless (bright && contrast);
  fail_unless_equals_int (contrast->min_value, 10);
  fail_unless_equals_int (contrast->max_value, 90);
  fail_unless_equals_int (gst_color_balance_get_value (cb, bright), 128);
  gst_color_balance_set_value (cb, bright, 42);
  fail_unless_equals_int (fake.brightness, 42);
  fail_unless_equals_int (gst_color_balance_get_value (cb, bright), 42);
  fail_unless_equals_int (gst_color_balance_get_balance_type (cb),
      GST_COLOR_BALANCE_HARDWARE);
  gst_element_set_state (src, GST_STATE_NULL);
  gst_object_unref (src);
  assert_device_released ();
}

GST_END_TEST;

/* The warnings on @bus, joined. */
static gchar *
bus_warnings (GstBus * bus)
{
  GString *all = g_string_new (NULL);
  GstMessage *msg;

  while ((msg = gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING))) {
    GError *err = NULL;

    gst_message_parse_warning (msg, &err, NULL);
    g_string_append_printf (all, "%s\n", err->message);
    g_error_free (err);
    gst_message_unref (msg);
  }
  return g_string_free (all, FALSE);
}

/* extra-controls: applied at open and at once when set while open, by
 * v4l2src's names, menu items by name; what fails is a warning naming
 * the control, and the rest still applies. */
GST_START_TEST (test_extra_controls)
{
  GstElement *src = gst_element_factory_make ("vstreamsrc", NULL);
  GstBus *bus = gst_bus_new ();
  GstStructure *ctrls;
  gchar *warn;

  gst_element_set_bus (src, bus);
  ctrls = gst_structure_from_string ("c,brightness=7,test_pattern=Flat", NULL);
  g_object_set (src, "device", FAKE_DEV, "extra-controls", ctrls, NULL);
  gst_structure_free (ctrls);
  fail_unless_equals_int (fake.brightness, 128);        /* not open yet */
  fail_unless_equals_int (gst_element_set_state (src, GST_STATE_READY),
      GST_STATE_CHANGE_SUCCESS);
  fail_unless_equals_int (fake.brightness, 7);
  fail_unless_equals_int (fake.pattern, 1);
  warn = bus_warnings (bus);
  fail_unless_equals_string (warn, "");
  g_free (warn);

  ctrls = gst_structure_from_string ("c,nonexistent=1,contrast=999,"
      "test_pattern=Plaid,brightness=9", NULL);
  g_object_set (src, "extra-controls", ctrls, NULL);
  gst_structure_free (ctrls);
  fail_unless_equals_int (fake.brightness, 9);
  fail_unless_equals_int (fake.contrast, 50);
  fail_unless_equals_int (fake.pattern, 1);
  warn = bus_warnings (bus);
  fail_unless (strstr (warn, "no control 'nonexistent'"), "%s", warn);
  fail_unless (strstr (warn, "control 'contrast'") &&
      strstr (warn, "to 999"), "%s", warn);
  fail_unless (strstr (warn, "'test_pattern'") && strstr (warn, "Plaid"),
      "%s", warn);
  g_free (warn);

  gst_element_set_state (src, GST_STATE_NULL);
  gst_element_set_bus (src, NULL);
  gst_object_unref (bus);
  gst_object_unref (src);
  assert_device_released ();
}

GST_END_TEST;

/* Until @pipe streams, at most 10 s. */
static void
wait_playing (GstElement * pipe)
{
  fail_unless (gst_element_get_state (pipe, NULL, NULL, 10 * GST_SECOND) ==
      GST_STATE_CHANGE_SUCCESS);
}

/* crop-*: the rectangle left inside the device's crop bounds is set
 * before the format; crop-bounds reports the bounds. */
GST_START_TEST (test_crop)
{
  GstElement *pipe = pipeline_playing ("vstreamsrc name=s device=" FAKE_DEV
      " crop-left=4 crop-right=8 crop-top=2 crop-bottom=6 ! fakesink");
  GstElement *src = gst_bin_get_by_name (GST_BIN (pipe), "s");
  GValue bounds = G_VALUE_INIT;
  gint want[4] = { 0, 0, W, H };
  guint i;

  wait_playing (pipe);
  fail_unless (fake.crops >= 1);
  fail_unless_equals_int (fake.crop.left, 4);
  fail_unless_equals_int (fake.crop.top, 2);
  fail_unless_equals_int (fake.crop.width, W - 12);
  fail_unless_equals_int (fake.crop.height, H - 8);
  g_value_init (&bounds, GST_TYPE_ARRAY);
  g_object_get_property (G_OBJECT (src), "crop-bounds", &bounds);
  fail_unless_equals_int (gst_value_array_get_size (&bounds), 4);
  for (i = 0; i < 4; i++)
    fail_unless_equals_int (g_value_get_int (gst_value_array_get_value
            (&bounds, i)), want[i]);
  g_value_unset (&bounds);
  gst_object_unref (src);
  stop_pipeline (pipe);
  assert_device_released ();
}

GST_END_TEST;

/* Margins that leave nothing, or a device that cannot crop: a warning
 * naming it, and the whole frame (the default crop) is captured. */
GST_START_TEST (test_crop_refused)
{
  static const gchar *cases[] = {
    "crop-left=40 crop-right=30", "crop-top=1",
  };
  static const gchar *says[] = { "leaves nothing", "cannot crop" };
  guint c;

  for (c = 0; c < G_N_ELEMENTS (cases); c++) {
    gchar *desc = g_strdup_printf ("vstreamsrc device=" FAKE_DEV " %s ! "
        "fakesink", cases[c]);
    GstElement *pipe;
    GstBus *bus;
    GstMessage *msg;
    GError *err = NULL;

    fake.can_crop = c == 0;
    fake.crops = 0;
    pipe = pipeline_playing (desc);
    wait_playing (pipe);
    bus = gst_element_get_bus (pipe);
    msg = gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING);
    fail_unless (msg != NULL, "%s: no warning", cases[c]);
    gst_message_parse_warning (msg, &err, NULL);
    fail_unless (strstr (err->message, says[c]) &&
        strstr (err->message, FAKE_DEV), "%s", err->message);
    g_error_free (err);
    gst_message_unref (msg);
    if (fake.can_crop) {
      /* reset to the default, the whole frame */
      fail_unless_equals_int (fake.crop.width, W);
      fail_unless_equals_int (fake.crop.height, H);
    }
    gst_object_unref (bus);
    stop_pipeline (pipe);
    g_free (desc);
  }
  assert_device_released ();
}

GST_END_TEST;

#if GST_CHECK_VERSION(1, 24, 0)
/* Does @caps hold a memory:DMABuf DMA_DRM structure of drm-format @drm? */
static gboolean
has_dma_drm (GstCaps * caps, const gchar * drm)
{
  guint i;

  for (i = 0; i < gst_caps_get_size (caps); i++) {
    GstStructure *s = gst_caps_get_structure (caps, i);
    GstCapsFeatures *f = gst_caps_get_features (caps, i);

    if (gst_caps_features_contains (f, "memory:DMABuf") &&
        !g_strcmp0 (gst_structure_get_string (s, "format"), "DMA_DRM") &&
        !g_strcmp0 (gst_structure_get_string (s, "drm-format"), drm))
      return TRUE;
  }
  return FALSE;
}

/* GStreamer >= 1.24: the dma-buf io-modes offer DMA_DRM caps (the others
 * do not), and the sink takes them: a frame negotiated so goes through. */
GST_START_TEST (test_dma_drm_caps)
{
  static const gchar *modes[] = { "dmabuf", "mmap" };
  GstHarness *h;
  GstBuffer *buf;
  GstElement *sink;
  guint m;

  for (m = 0; m < G_N_ELEMENTS (modes); m++) {
    GstElement *src = gst_element_factory_make ("vstreamsrc", NULL);
    GstPad *pad = gst_element_get_static_pad (src, "src");
    GstCaps *caps;

    g_object_set (src, "device", FAKE_DEV, NULL);
    gst_util_set_object_arg (G_OBJECT (src), "io-mode", modes[m]);
    fail_unless_equals_int (gst_element_set_state (src, GST_STATE_READY),
        GST_STATE_CHANGE_SUCCESS);
    caps = gst_pad_query_caps (pad, NULL);
    fail_unless (has_dma_drm (caps, "YUYV") == (m == 0),
        "io-mode %s: %" GST_PTR_FORMAT, modes[m], caps);
    gst_caps_unref (caps);
    gst_object_unref (pad);
    gst_element_set_state (src, GST_STATE_NULL);
    gst_object_unref (src);
  }

  /* a sink offers them for import only: with io-mode=dmabuf upstream
   * renders into the driver's buffers, which need system-memory caps */
  fake.output = TRUE;
  for (m = 0; m < 2; m++) {
    GstElement *sink = gst_element_factory_make ("vstreamsink", NULL);
    GstPad *pad = gst_element_get_static_pad (sink, "sink");
    GstCaps *caps;

    g_object_set (sink, "device", FAKE_DEV, NULL);
    gst_util_set_object_arg (G_OBJECT (sink), "io-mode",
        m ? "dmabuf" : "dmabuf-import");
    fail_unless_equals_int (gst_element_set_state (sink, GST_STATE_READY),
        GST_STATE_CHANGE_SUCCESS);
    caps = gst_pad_query_caps (pad, NULL);
    fail_unless (has_dma_drm (caps, "YUYV") == (m == 0), "%" GST_PTR_FORMAT,
        caps);
    gst_caps_unref (caps);
    gst_object_unref (pad);
    gst_element_set_state (sink, GST_STATE_NULL);
    gst_object_unref (sink);
  }
  h = gst_harness_new_parse ("vstreamsink device=" FAKE_DEV
      " io-mode=dmabuf-import sync=false enable-last-sample=false");
  gst_harness_play (h);
  gst_harness_set_src_caps_str (h, "video/x-raw(memory:DMABuf),"
      "format=DMA_DRM,drm-format=YUYV,width=64,height=48,framerate=30/1");
  /* system memory: no dma-buf to import, so the sink copies */
  buf = gst_buffer_new_allocate (NULL, SIZEIMAGE, NULL);
  gst_buffer_memset (buf, 0, 0x5a, SIZEIMAGE);
  fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_OK);
  sink = harness_element (h, "vstreamsink");
  fail_unless_equals_int (stat_of (sink, "copies"), 1);
  gst_object_unref (sink);
  gst_harness_teardown (h);
  assert_device_released ();
}

GST_END_TEST;
#endif

/* After 10 frames of a multi-planar source: every buffer call used the
 * plane array, nothing was copied, and everything is let go. */
static void
end_mplane_source (GstHarness * h, GstElement * src)
{
  fail_unless (g_atomic_int_get (&fake.mplane_bufs) >= 10);
  /* userptr captures into the pool's own memory: no copy either */
  fail_unless (stat_of (src, "zero-copy") >= 9);
  fail_unless_equals_int (stat_of (src, "copies"), 0);
  gst_object_unref (src);
  gst_harness_teardown (h);
  assert_device_released ();
}

/* A device with only the multi-planar types (SoC cameras, vivid
 * multiplanar=2): frames arrive whole and unchanged in mmap and userptr,
 * mmap without a copy, also where the frame starts data_offset bytes
 * into its plane, and every buffer call used the plane array. */
static const struct
{
  const gchar *io_mode;
  guint data_offset;
} mplane_cases[] = { {"mmap", 0}, {"userptr", 0}, {"mmap", 128} };

GST_START_TEST (test_mplane_source)
{
  GstHarness *h;
  GstElement *src;
  gint i;

  fake.mplane = TRUE;
  fake.data_offset = mplane_cases[__i__].data_offset;
  h = src_harness_io (mplane_cases[__i__].io_mode);
  src = harness_element (h, "vstreamsrc");
  for (i = 0; i < 10; i++) {
    GstBuffer *b = gst_harness_pull (h);

    fail_unless (b != NULL, "frame %d did not come", i);
    fail_unless_equals_int (gst_buffer_get_size (b), SIZEIMAGE);
    assert_frame (b);
    gst_buffer_unref (b);
  }
  end_mplane_source (h, src);
}

GST_END_TEST;

/* vstreamsink on a multi-planar output: the frames it queues are the
 * ones pushed, with their size; on an NV12M output contiguous NV12 from
 * upstream is laid into the driver's two planes, each queued with its
 * own size (fake_per_plane_buffer checks them). */
static const struct
{
  const gchar *caps;
  gsize size;
  gboolean per_plane;
} mplane_sink_cases[] = { {CAPS, SIZEIMAGE, FALSE},
{NV12_CAPS, NV12_SIZE, TRUE}
};

GST_START_TEST (test_mplane_sink)
{
  gsize size = mplane_sink_cases[__i__].size;
  GstHarness *h;
  gint i;

  fake.mplane = TRUE;
  fake.output = TRUE;
  fake.per_plane = mplane_sink_cases[__i__].per_plane;
  h = gst_harness_new_parse ("vstreamsink device=" FAKE_DEV
      " sync=false enable-last-sample=false");
  gst_harness_play (h);
  gst_harness_set_src_caps_str (h, mplane_sink_cases[__i__].caps);
  for (i = 0; i < 6; i++) {
    GstBuffer *b = gst_buffer_new_allocate (NULL, size, NULL);

    gst_buffer_memset (b, 0, 'a' + i, size);
    /* per_plane: the chroma plane's bytes must land in plane 1 */
    if (mplane_sink_cases[__i__].per_plane)
      gst_buffer_memset (b, Y_SIZE, 'A' + i, size - Y_SIZE);
    fail_unless_equals_int (gst_harness_push (h, b), GST_FLOW_OK);
    g_mutex_lock (&fake.lock);
    fail_unless_equals_int (fake.out_first, 'a' + i);
    if (mplane_sink_cases[__i__].per_plane)
      fail_unless_equals_int (fake.out_chroma, 'A' + i);
    fail_unless_equals_int (fake.out_bytesused, size);
    g_mutex_unlock (&fake.lock);
  }
  fail_unless (g_atomic_int_get (&fake.mplane_bufs) >= 6);
  gst_harness_teardown (h);
  assert_device_released ();
}

GST_END_TEST;

/* A frame of a memory per colour plane (NV12M, as SoC cameras give it):
 * each plane in its own memory, the video meta pointing at each, the
 * frame whole and unchanged in mmap (without a copy) and userptr, also
 * when the luma plane starts data_offset bytes in. */
static const struct
{
  const gchar *io_mode;
  guint data_offset;
} per_plane_cases[] = { {"mmap", 0}, {"userptr", 0}, {"mmap", 128},
{"userptr", 128}
};

GST_START_TEST (test_per_plane_source)
{
  const gchar *io_mode = per_plane_cases[__i__].io_mode;
  GstHarness *h;
  GstElement *src;
  gint i;

  fake.mplane = TRUE;
  fake.per_plane = TRUE;
  fake.data_offset = per_plane_cases[__i__].data_offset;
  h = src_harness_io (io_mode);
  src = harness_element (h, "vstreamsrc");
  for (i = 0; i < 10; i++) {
    GstBuffer *b = gst_harness_pull (h);
    GstVideoMeta *meta;

    fail_unless (b != NULL, "frame %d did not come", i);
    fail_unless_equals_int (gst_buffer_n_memory (b), 2);
    fail_unless_equals_int (gst_buffer_peek_memory (b, 0)->size, Y_SIZE);
    fail_unless_equals_int (gst_buffer_peek_memory (b, 1)->size, Y_SIZE / 2);
    meta = gst_buffer_get_video_meta (b);
    fail_unless (meta != NULL);
    fail_unless_equals_int (meta->format, GST_VIDEO_FORMAT_NV12);
    fail_unless_equals_int (meta->n_planes, 2);
    fail_unless_equals_int (meta->offset[1], Y_SIZE);
    fail_unless_equals_int (meta->stride[1], W);
    if (g_str_equal (io_mode, "mmap"))
      fail_unless (is_driver_memory (b));
    /* last: mapping a writable buffer whole merges its memories */
    assert_numbered_frame (b, NV12_SIZE, pixel);
    gst_buffer_unref (b);
  }
  end_mplane_source (h, src);
}

GST_END_TEST;

static Suite *
vstream_lifetime_suite (void)
{
  static const GstVstreamDeviceHooks hooks = {
    .ioctl = fake_ioctl,.mmap = fake_mmap,.munmap = fake_munmap
  };
  Suite *s = suite_create ("vstream-lifetime");
  TCase *tc = tcase_create ("lifetime");

  GST_DEBUG_CATEGORY_INIT (gst_vstream_debug, "vstream", 0, "vstream tests");
  gst_vstream_set_device_hooks (&hooks);
  GST_ELEMENT_REGISTER (vstreamsrc, NULL);
  GST_ELEMENT_REGISTER (vstreamsink, NULL);
  suite_add_tcase (s, tc);
  tcase_set_timeout (tc, 60);
  tcase_add_checked_fixture (tc, fake_setup, NULL);
  tcase_add_loop_test (tc, test_kept_memory_keeps_content, 0,
      G_N_ELEMENTS (keepers));
  tcase_add_loop_test (tc, test_held_memory_copies_not_stalls, 0,
      G_N_ELEMENTS (held_io_modes));
  tcase_add_test (tc, test_samples_outlive_pipeline);
  tcase_add_test (tc, test_peer_without_video_meta);
  tcase_add_test (tc, test_device_fd);
  tcase_add_test (tc, test_downstream_min_buffers);
  tcase_add_test (tc, test_tee_videorate_samples);
  tcase_add_test (tc, test_sink_reuses_memory_when_let_go);
  tcase_add_loop_test (tc, test_sink_pipeline_shapes, 0,
      G_N_ELEMENTS (shapes));
  tcase_add_test (tc, test_sink_variable_rate);
  tcase_add_test (tc, test_sink_rate_change);
  tcase_add_loop_test (tc, test_sink_decoded_file, 0,
      G_N_ELEMENTS (file_io_modes));
  tcase_add_test (tc, test_sink_leaky_queue);
  tcase_add_test (tc, test_sink_flushing_seek);
  tcase_add_test (tc, test_sink_pause_resume);
  tcase_add_test (tc, test_sink_stop_while_held);
  tcase_add_test (tc, test_qos_running_time);
  tcase_add_test (tc, test_bad_frames_dropped);
  tcase_add_test (tc, test_untrusted_timestamps);
  tcase_add_test (tc, test_color_balance);
  tcase_add_test (tc, test_extra_controls);
  tcase_add_test (tc, test_crop);
  tcase_add_test (tc, test_crop_refused);
  tcase_add_loop_test (tc, test_mplane_source, 0,
      G_N_ELEMENTS (mplane_cases));
  tcase_add_loop_test (tc, test_mplane_sink, 0,
      G_N_ELEMENTS (mplane_sink_cases));
  tcase_add_loop_test (tc, test_per_plane_source, 0,
      G_N_ELEMENTS (per_plane_cases));
#if GST_CHECK_VERSION(1, 24, 0)
  tcase_add_test (tc, test_dma_drm_caps);
#endif
  return s;
}

GST_CHECK_MAIN (vstream_lifetime);
