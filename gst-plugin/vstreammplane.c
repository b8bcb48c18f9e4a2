/* vstream GStreamer plugin: multi-planar devices through the
 * single-planar code.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Many capture and output devices (SoC camera pipelines, codecs, HDMI
 * bridges, vivid with multiplanar=2, a vstream pipe made with mplane=1)
 * offer only the multi-planar buffer types.  The elements, the pool and
 * the allocator speak the single-planar API; on such a device every ioctl
 * they make goes through gst_vstream_mplane_ioctl(), which rewrites it:
 * the buffer type gains _MPLANE, v4l2_pix_format becomes a
 * v4l2_pix_format_mplane of one plane, and a v4l2_buffer carries its
 * memory (offset, user pointer or dma-buf fd) in a one-entry plane array.
 * The caller's structure is updated as if the device were single-planar,
 * so nothing above this file knows.
 *
 * What this covers: every format whose planes share one memory plane
 * (YUYV, NV12, I420, RGB...), in every io-mode; zero copy holds because
 * the one memory plane is the whole frame.  Formats with one memory plane
 * per colour plane (NV12M, YUV420M) have no single-planar form: a format
 * call answers for them with the frame as the planes would lie end to
 * end (plane 0's bytesperline, the sum of the sizeimages), which is what
 * caps and GstVideoInfo need, and gst_vstream_mplane_layout() gives each
 * memory plane's size and stride.  The buffer calls for them are made
 * with real plane arrays by the pool and the allocator (a _MPLANE type
 * passes through here unchanged).  A captured plane may start its frame
 * data_offset bytes in
 * (vivid puts a 128-byte header there): a dequeued buffer's bytesused is
 * then the frame's own, and the offset comes in
 * GST_VSTREAM_BUFFER_DATA_OFFSET (a reserved field the single-planar API
 * leaves zero), for the pool to skip.
 */
#include <errno.h>
#include <string.h>

#include "vstreammplane.h"

gboolean
gst_vstream_caps_are_mplane (guint32 caps, gboolean output)
{
  guint32 sp = output ? V4L2_CAP_VIDEO_OUTPUT : V4L2_CAP_VIDEO_CAPTURE;
  guint32 mp = output ? V4L2_CAP_VIDEO_OUTPUT_MPLANE :
      V4L2_CAP_VIDEO_CAPTURE_MPLANE;

  /* a device with both is used single-planar */
  return !(caps & sp) && (caps & mp);
}

static guint32
to_mplane (guint32 type)
{
  switch (type) {
    case V4L2_BUF_TYPE_VIDEO_CAPTURE:
      return V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE;
    case V4L2_BUF_TYPE_VIDEO_OUTPUT:
      return V4L2_BUF_TYPE_VIDEO_OUTPUT_MPLANE;
    default:
      return type;
  }
}

static gboolean
is_single_planar (guint32 type)
{
  return type == V4L2_BUF_TYPE_VIDEO_CAPTURE ||
      type == V4L2_BUF_TYPE_VIDEO_OUTPUT;
}

/* An ioctl whose argument only names a buffer type, at @type: swap it
 * for the call and back. */
static int
call_typed (GstVstreamMplaneCall call, int fd, unsigned long request,
    void *arg, guint32 * type)
{
  guint32 sp = *type;
  int ret, err;

  *type = to_mplane (sp);
  ret = call (fd, request, arg);
  err = errno;
  *type = sp;
  errno = err;
  return ret;
}

static int
call_format (GstVstreamMplaneCall call, int fd, unsigned long request,
    struct v4l2_format *f)
{
  struct v4l2_format mp;
  struct v4l2_pix_format *pix = &f->fmt.pix;
  struct v4l2_pix_format_mplane *m = &mp.fmt.pix_mp;
  GstVstreamLayout layout;
  guint i;

  if (!is_single_planar (f->type))
    return call (fd, request, f);
  memset (&mp, 0, sizeof (mp));
  mp.type = to_mplane (f->type);
  m->width = pix->width;
  m->height = pix->height;
  m->pixelformat = pix->pixelformat;
  m->field = pix->field;
  m->colorspace = pix->colorspace;
  m->ycbcr_enc = pix->ycbcr_enc;
  m->quantization = pix->quantization;
  m->xfer_func = pix->xfer_func;
  m->num_planes = 1;
  m->plane_fmt[0].bytesperline = pix->bytesperline;
  m->plane_fmt[0].sizeimage = pix->sizeimage;
  if (call (fd, request, &mp) < 0 || !gst_vstream_mplane_layout (m, &layout))
    return -1;
  pix->width = m->width;
  pix->height = m->height;
  pix->pixelformat = m->pixelformat;
  pix->field = m->field;
  pix->bytesperline = m->plane_fmt[0].bytesperline;
  /* NV12M and kin: the planes end to end (see above) */
  pix->sizeimage = 0;
  for (i = 0; i < layout.n_mem; i++)
    pix->sizeimage += layout.size[i];
  pix->colorspace = m->colorspace;
  pix->priv = 0;
  pix->flags = m->flags;
  pix->ycbcr_enc = m->ycbcr_enc;
  pix->quantization = m->quantization;
  pix->xfer_func = m->xfer_func;
  return 0;
}

static int
call_buffer (GstVstreamMplaneCall call, int fd, unsigned long request,
    struct v4l2_buffer *b)
{
  struct v4l2_buffer mp = *b;
  struct v4l2_plane plane;
  int ret;

  if (!is_single_planar (b->type))
    return call (fd, request, b);
  memset (&plane, 0, sizeof (plane));
  plane.bytesused = b->bytesused;
  plane.length = b->length;
  if (b->memory == V4L2_MEMORY_USERPTR)
    plane.m.userptr = b->m.userptr;
  else if (b->memory == V4L2_MEMORY_DMABUF)
    plane.m.fd = b->m.fd;
  else
    plane.m.mem_offset = b->m.offset;
  mp.type = to_mplane (b->type);
  mp.m.planes = &plane;
  mp.length = 1;
  ret = call (fd, request, &mp);
  if (ret < 0 && request != VIDIOC_DQBUF)
    return ret;
  /* a failed DQBUF may still have named the buffer it gave up on */
  b->index = mp.index;
  b->flags = mp.flags;
  b->field = mp.field;
  b->timestamp = mp.timestamp;
  b->timecode = mp.timecode;
  b->sequence = mp.sequence;
  b->memory = mp.memory;
  b->bytesused = plane.bytesused;
  GST_VSTREAM_BUFFER_DATA_OFFSET (b) = 0;
  if (request == VIDIOC_DQBUF && plane.data_offset &&
      plane.data_offset <= plane.bytesused) {
    b->bytesused -= plane.data_offset;
    GST_VSTREAM_BUFFER_DATA_OFFSET (b) = plane.data_offset;
  }
  b->length = plane.length;
  if (mp.memory == V4L2_MEMORY_USERPTR)
    b->m.userptr = plane.m.userptr;
  else if (mp.memory == V4L2_MEMORY_DMABUF)
    b->m.fd = plane.m.fd;
  else
    b->m.offset = plane.m.mem_offset;
  return ret;
}

/* The memory planes of multi-planar format @m; FALSE (errno EINVAL) for
 * a plane count V4L2 cannot have. */
gboolean
gst_vstream_mplane_layout (const struct v4l2_pix_format_mplane *m,
    GstVstreamLayout * layout)
{
  guint i;

  if (m->num_planes < 1 || m->num_planes > VIDEO_MAX_PLANES) {
    errno = EINVAL;
    return FALSE;
  }
  memset (layout, 0, sizeof (*layout));
  layout->n_mem = m->num_planes;
  for (i = 0; i < m->num_planes; i++) {
    layout->size[i] = m->plane_fmt[i].sizeimage;
    layout->stride[i] = m->plane_fmt[i].bytesperline;
  }
  return TRUE;
}

/*
 * @call made for a device that only has the multi-planar buffer types,
 * with @arg as the single-planar API has it.  Requests without a buffer
 * type (controls, events, size and interval enumeration) pass unchanged.
 */
int
gst_vstream_mplane_ioctl (GstVstreamMplaneCall call, int fd,
    unsigned long request, void *arg)
{
  switch (request) {
    case VIDIOC_G_FMT:
    case VIDIOC_S_FMT:
    case VIDIOC_TRY_FMT:
      return call_format (call, fd, request, arg);
    case VIDIOC_QUERYBUF:
    case VIDIOC_QBUF:
    case VIDIOC_DQBUF:
    case VIDIOC_PREPARE_BUF:
      return call_buffer (call, fd, request, arg);
    case VIDIOC_ENUM_FMT:
      return call_typed (call, fd, request, arg,
          &((struct v4l2_fmtdesc *) arg)->type);
    case VIDIOC_G_PARM:
    case VIDIOC_S_PARM:
      return call_typed (call, fd, request, arg,
          &((struct v4l2_streamparm *) arg)->type);
    case VIDIOC_REQBUFS:
      return call_typed (call, fd, request, arg,
          &((struct v4l2_requestbuffers *) arg)->type);
    case VIDIOC_EXPBUF:
      return call_typed (call, fd, request, arg,
          &((struct v4l2_exportbuffer *) arg)->type);
    case VIDIOC_STREAMON:
    case VIDIOC_STREAMOFF:
      return call_typed (call, fd, request, arg, arg);
    /* both type spellings are accepted since Linux 4.13 */
    case VIDIOC_G_SELECTION:
    case VIDIOC_S_SELECTION:
      return call_typed (call, fd, request, arg,
          &((struct v4l2_selection *) arg)->type);
    case VIDIOC_CROPCAP:
      return call_typed (call, fd, request, arg,
          &((struct v4l2_cropcap *) arg)->type);
    case VIDIOC_CREATE_BUFS:
      /* its format would need the conversion too; nothing here uses it */
      errno = ENOTTY;
      return -1;
    default:
      return call (fd, request, arg);
  }
}
