/* vstream GStreamer plugin: V4L2 <-> GStreamer format and field tables.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_VSTREAM_FORMATS_H__
#define __GST_VSTREAM_FORMATS_H__

#include <gst/gst.h>
#include <gst/video/video.h>
#include <linux/videodev2.h>

#include "vstreammplane.h"

G_BEGIN_DECLS

typedef struct
{
  guint32 fourcc;
  GstVideoFormat format;        /* GST_VIDEO_FORMAT_ENCODED for image/jpeg */
  const gchar *media_type;
  gboolean per_plane;           /* each colour plane in its own memory */
} GstVstreamFormat;

typedef struct
{
  guint32 field;                /* enum v4l2_field */
  GstVideoInterlaceMode mode;
  GstVideoFieldOrder order;
} GstVstreamField;

const GstVstreamFormat *gst_vstream_format_from_fourcc (guint32 fourcc);
const GstVstreamFormat *gst_vstream_format_twin (const GstVstreamFormat * f);
const GstVstreamFormat *gst_vstream_format_from_structure (const GstStructure * s);
guint gst_vstream_n_formats (void);
const GstVstreamFormat *gst_vstream_format_at (guint i);

const GstVstreamField *gst_vstream_field_from_v4l2 (guint32 field);
guint32 gst_vstream_field_from_caps (const GstStructure * s);
const GstVstreamField *gst_vstream_field_at (guint i);
guint gst_vstream_n_fields (void);

GstStructure *gst_vstream_structure_new (guint32 fourcc, guint32 field);
void gst_vstream_buffer_set_field_flags (GstBuffer * buf, guint32 field,
    gboolean bottom_first);
guint32 gst_vstream_buffer_get_field (GstBuffer * buf, guint32 fmt_field);
gboolean gst_vstream_info_from_v4l2 (GstVideoInfo * info,
    const struct v4l2_pix_format *pix, const GstVstreamLayout * layout,
    GstCaps * caps);
GstCaps *gst_vstream_all_caps (void);
gboolean gst_vstream_colorimetry_from_v4l2 (const struct v4l2_pix_format *pix,
    gboolean rgb, GstVideoColorimetry * c);
void gst_vstream_colorimetry_to_v4l2 (const GstVideoColorimetry * c,
    struct v4l2_pix_format *pix);

G_END_DECLS
#endif
