/* vstream GStreamer plugin: the caps a V4L2 node offers.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_VSTREAM_PROBE_H__
#define __GST_VSTREAM_PROBE_H__

#include "vstreamobject.h"

G_BEGIN_DECLS

/* Everything @fd offers as @type (multi-planar types through
 * vstreammplane.c); @func NULL is ioctl(). */
GstCaps *gst_vstream_probe_fd_caps (gint fd, enum v4l2_buf_type type,
    GstVstreamIoctlFunc func);

G_END_DECLS
#endif
