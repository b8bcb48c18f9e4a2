/* vstream GStreamer plugin: vstreamsrc, a V4L2 capture source.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_VSTREAM_SRC_H__
#define __GST_VSTREAM_SRC_H__

#include <gst/base/gstpushsrc.h>

G_BEGIN_DECLS

#define GST_TYPE_VSTREAM_SRC (gst_vstream_src_get_type ())
G_DECLARE_FINAL_TYPE (GstVstreamSrc, gst_vstream_src, GST, VSTREAM_SRC,
    GstPushSrc);

GST_ELEMENT_REGISTER_DECLARE (vstreamsrc);

G_END_DECLS
#endif
