/* vstream GStreamer plugin: multi-planar devices through the
 * single-planar code (vstreammplane.c).
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_VSTREAM_MPLANE_H__
#define __GST_VSTREAM_MPLANE_H__

#include <glib.h>
#include <linux/videodev2.h>

G_BEGIN_DECLS

/* Where a dequeued frame starts in its buffer (a multi-planar plane's
 * data_offset; vstreammplane.c); 0 on single-planar devices. */
#define GST_VSTREAM_BUFFER_DATA_OFFSET(vb) ((vb)->reserved2)

typedef int (*GstVstreamMplaneCall) (int fd, unsigned long request,
    void *arg);

/*
 * How a frame lies in the driver's memory: one memory plane (every
 * single-planar device, and multi-planar formats whose colour planes share
 * one), or one memory plane per colour plane (NV12M, YUV420M...), each
 * mapped, exported and queued on its own.
 */
typedef struct
{
  guint n_mem;
  guint32 size[VIDEO_MAX_PLANES];       /* each memory plane's sizeimage */
  guint32 stride[VIDEO_MAX_PLANES];     /* and bytesperline */
} GstVstreamLayout;

gboolean gst_vstream_caps_are_mplane (guint32 device_caps, gboolean output);
int gst_vstream_mplane_ioctl (GstVstreamMplaneCall call, int fd,
    unsigned long request, void *arg);
gboolean gst_vstream_mplane_layout (const struct v4l2_pix_format_mplane *m,
    GstVstreamLayout * layout);

G_END_DECLS
#endif
