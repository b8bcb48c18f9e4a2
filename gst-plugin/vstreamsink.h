/* vstream GStreamer plugin: vstreamsink, a V4L2 output sink.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_VSTREAM_SINK_H__
#define __GST_VSTREAM_SINK_H__

#include <gst/video/gstvideosink.h>

G_BEGIN_DECLS

#define GST_TYPE_VSTREAM_SINK (gst_vstream_sink_get_type ())
G_DECLARE_FINAL_TYPE (GstVstreamSink, gst_vstream_sink, GST, VSTREAM_SINK,
    GstVideoSink);

GST_ELEMENT_REGISTER_DECLARE (vstreamsink);

G_END_DECLS
#endif
