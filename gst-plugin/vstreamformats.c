/* vstream GStreamer plugin: V4L2 <-> GStreamer format and field tables.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One table for pixel formats and one for fields; everything that maps
 * between V4L2 and caps goes through them, and the unit tests check them.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/allocators/allocators.h>

#include "vstreamformats.h"

static const GstVstreamFormat formats[] = {
  {V4L2_PIX_FMT_YUYV, GST_VIDEO_FORMAT_YUY2, "video/x-raw"},
  {V4L2_PIX_FMT_UYVY, GST_VIDEO_FORMAT_UYVY, "video/x-raw"},
  {V4L2_PIX_FMT_YVYU, GST_VIDEO_FORMAT_YVYU, "video/x-raw"},
  {V4L2_PIX_FMT_NV12, GST_VIDEO_FORMAT_NV12, "video/x-raw"},
  {V4L2_PIX_FMT_NV21, GST_VIDEO_FORMAT_NV21, "video/x-raw"},
  {V4L2_PIX_FMT_NV16, GST_VIDEO_FORMAT_NV16, "video/x-raw"},
  {V4L2_PIX_FMT_NV61, GST_VIDEO_FORMAT_NV61, "video/x-raw"},
  {V4L2_PIX_FMT_YUV420, GST_VIDEO_FORMAT_I420, "video/x-raw"},
  {V4L2_PIX_FMT_YVU420, GST_VIDEO_FORMAT_YV12, "video/x-raw"},
  {V4L2_PIX_FMT_YUV422P, GST_VIDEO_FORMAT_Y42B, "video/x-raw"},
  {V4L2_PIX_FMT_GREY, GST_VIDEO_FORMAT_GRAY8, "video/x-raw"},
  {V4L2_PIX_FMT_RGB565, GST_VIDEO_FORMAT_RGB16, "video/x-raw"},
  {V4L2_PIX_FMT_RGB24, GST_VIDEO_FORMAT_RGB, "video/x-raw"},
  {V4L2_PIX_FMT_BGR24, GST_VIDEO_FORMAT_BGR, "video/x-raw"},
  /* 32-bit RGB: V4L2 names the word, GStreamer the bytes in memory */
  {V4L2_PIX_FMT_XRGB32, GST_VIDEO_FORMAT_BGRx, "video/x-raw"},
  {V4L2_PIX_FMT_XBGR32, GST_VIDEO_FORMAT_RGBx, "video/x-raw"},
  {V4L2_PIX_FMT_ARGB32, GST_VIDEO_FORMAT_BGRA, "video/x-raw"},
  {V4L2_PIX_FMT_ABGR32, GST_VIDEO_FORMAT_RGBA, "video/x-raw"},
  {V4L2_PIX_FMT_MJPEG, GST_VIDEO_FORMAT_ENCODED, "image/jpeg"},
  /* One memory plane per colour plane (multi-planar devices only): the
   * same caps as their contiguous twins above, which lookups by caps find
   * first; set_format falls back to these when the device has only them. */
  {V4L2_PIX_FMT_NV12M, GST_VIDEO_FORMAT_NV12, "video/x-raw", TRUE},
  {V4L2_PIX_FMT_NV21M, GST_VIDEO_FORMAT_NV21, "video/x-raw", TRUE},
  {V4L2_PIX_FMT_NV16M, GST_VIDEO_FORMAT_NV16, "video/x-raw", TRUE},
  {V4L2_PIX_FMT_NV61M, GST_VIDEO_FORMAT_NV61, "video/x-raw", TRUE},
  {V4L2_PIX_FMT_YUV420M, GST_VIDEO_FORMAT_I420, "video/x-raw", TRUE},
  {V4L2_PIX_FMT_YVU420M, GST_VIDEO_FORMAT_YV12, "video/x-raw", TRUE},
  {V4L2_PIX_FMT_YUV422M, GST_VIDEO_FORMAT_Y42B, "video/x-raw", TRUE},
  {V4L2_PIX_FMT_YUV444M, GST_VIDEO_FORMAT_Y444, "video/x-raw", TRUE},
};

/*
 * SEQ_TB/SEQ_BT hold both fields one after the other: that is GStreamer's
 * "fields" interlace mode, not progressive.  TOP and BOTTOM (a stream of
 * one parity only) have no caps equivalent and are never negotiated.
 */
static const GstVstreamField fields[] = {
  {V4L2_FIELD_NONE, GST_VIDEO_INTERLACE_MODE_PROGRESSIVE,
      GST_VIDEO_FIELD_ORDER_UNKNOWN},
  {V4L2_FIELD_INTERLACED_TB, GST_VIDEO_INTERLACE_MODE_INTERLEAVED,
      GST_VIDEO_FIELD_ORDER_TOP_FIELD_FIRST},
  {V4L2_FIELD_INTERLACED_BT, GST_VIDEO_INTERLACE_MODE_INTERLEAVED,
      GST_VIDEO_FIELD_ORDER_BOTTOM_FIELD_FIRST},
  {V4L2_FIELD_INTERLACED, GST_VIDEO_INTERLACE_MODE_INTERLEAVED,
      GST_VIDEO_FIELD_ORDER_UNKNOWN},
  {V4L2_FIELD_SEQ_TB, GST_VIDEO_INTERLACE_MODE_FIELDS,
      GST_VIDEO_FIELD_ORDER_TOP_FIELD_FIRST},
  {V4L2_FIELD_SEQ_BT, GST_VIDEO_INTERLACE_MODE_FIELDS,
      GST_VIDEO_FIELD_ORDER_BOTTOM_FIELD_FIRST},
  {V4L2_FIELD_ALTERNATE, GST_VIDEO_INTERLACE_MODE_ALTERNATE,
      GST_VIDEO_FIELD_ORDER_UNKNOWN},
};

guint
gst_vstream_n_formats (void)
{
  return G_N_ELEMENTS (formats);
}

const GstVstreamFormat *
gst_vstream_format_at (guint i)
{
  return i < G_N_ELEMENTS (formats) ? &formats[i] : NULL;
}

const GstVstreamFormat *
gst_vstream_format_from_fourcc (guint32 fourcc)
{
  guint i;

  for (i = 0; i < G_N_ELEMENTS (formats); i++)
    if (formats[i].fourcc == fourcc)
      return &formats[i];
  return NULL;
}

/* The table's other entry for @f's caps (NV12M for NV12, and back), or
 * NULL (YUV444M has no contiguous form). */
const GstVstreamFormat *
gst_vstream_format_twin (const GstVstreamFormat * f)
{
  guint i;

  for (i = 0; f && i < G_N_ELEMENTS (formats); i++)
    if (formats[i].format == f->format && &formats[i] != f &&
        f->format != GST_VIDEO_FORMAT_ENCODED)
      return &formats[i];
  return NULL;
}

const GstVstreamFormat *
gst_vstream_format_from_structure (const GstStructure * s)
{
  GstVideoFormat vf;
  const gchar *str;
  guint i;

  if (gst_structure_has_name (s, "image/jpeg"))
    return gst_vstream_format_from_fourcc (V4L2_PIX_FMT_MJPEG);
  if (!gst_structure_has_name (s, "video/x-raw"))
    return NULL;
  str = gst_structure_get_string (s, "format");
  if (!str)
    return NULL;
  vf = gst_video_format_from_string (str);
  for (i = 0; i < G_N_ELEMENTS (formats); i++)
    if (formats[i].format == vf)
      return &formats[i];
  return NULL;
}

guint
gst_vstream_n_fields (void)
{
  return G_N_ELEMENTS (fields);
}

const GstVstreamField *
gst_vstream_field_at (guint i)
{
  return i < G_N_ELEMENTS (fields) ? &fields[i] : NULL;
}

const GstVstreamField *
gst_vstream_field_from_v4l2 (guint32 field)
{
  guint i;

  for (i = 0; i < G_N_ELEMENTS (fields); i++)
    if (fields[i].field == field)
      return &fields[i];
  return NULL;
}

/* The V4L2 field for fixed caps; "mixed" is carried as INTERLACED. */
guint32
gst_vstream_field_from_caps (const GstStructure * s)
{
  const gchar *mode_str = gst_structure_get_string (s, "interlace-mode");
  const gchar *order_str = gst_structure_get_string (s, "field-order");
  GstVideoInterlaceMode mode = GST_VIDEO_INTERLACE_MODE_PROGRESSIVE;
  GstVideoFieldOrder order = GST_VIDEO_FIELD_ORDER_UNKNOWN;
  guint i;

  if (mode_str)
    mode = gst_video_interlace_mode_from_string (mode_str);
  if (order_str)
    order = gst_video_field_order_from_string (order_str);
  if (mode == GST_VIDEO_INTERLACE_MODE_MIXED)
    return V4L2_FIELD_INTERLACED;
  for (i = 0; i < G_N_ELEMENTS (fields); i++)
    if (fields[i].mode == mode && fields[i].order == order)
      return fields[i].field;
  /* "fields" without an order: top first, as SEQ_TB is the common one */
  if (mode == GST_VIDEO_INTERLACE_MODE_FIELDS)
    return V4L2_FIELD_SEQ_TB;
  return V4L2_FIELD_NONE;
}

/* A caps structure without size and rate, for one format and field. */
GstStructure *
gst_vstream_structure_new (guint32 fourcc, guint32 field)
{
  const GstVstreamFormat *f = gst_vstream_format_from_fourcc (fourcc);
  const GstVstreamField *fl = gst_vstream_field_from_v4l2 (field);
  GstStructure *s;

  if (!f || !fl)
    return NULL;
  if (f->format == GST_VIDEO_FORMAT_ENCODED) {
    if (fl->mode != GST_VIDEO_INTERLACE_MODE_PROGRESSIVE)
      return NULL;
    return gst_structure_new (f->media_type, "parsed", G_TYPE_BOOLEAN, TRUE,
        NULL);
  }
  s = gst_structure_new (f->media_type, "format", G_TYPE_STRING,
      gst_video_format_to_string (f->format), "interlace-mode", G_TYPE_STRING,
      gst_video_interlace_mode_to_string (fl->mode), NULL);
  if (fl->order != GST_VIDEO_FIELD_ORDER_UNKNOWN)
    gst_structure_set (s, "field-order", G_TYPE_STRING,
        gst_video_field_order_to_string (fl->order), NULL);
  return s;
}

/* @bottom_first: what V4L2_FIELD_INTERLACED means on this device (its
 * video standard is 525-line) */
void
gst_vstream_buffer_set_field_flags (GstBuffer * buf, guint32 field,
    gboolean bottom_first)
{
  GST_BUFFER_FLAG_UNSET (buf, GST_VIDEO_BUFFER_FLAG_INTERLACED |
      GST_VIDEO_BUFFER_FLAG_TFF | GST_VIDEO_BUFFER_FLAG_ONEFIELD);
  switch (field) {
    case V4L2_FIELD_TOP:
      GST_BUFFER_FLAG_SET (buf, GST_VIDEO_BUFFER_FLAG_TOP_FIELD);
      break;
    case V4L2_FIELD_BOTTOM:
      GST_BUFFER_FLAG_SET (buf, GST_VIDEO_BUFFER_FLAG_BOTTOM_FIELD);
      break;
    case V4L2_FIELD_INTERLACED:
      GST_BUFFER_FLAG_SET (buf, GST_VIDEO_BUFFER_FLAG_INTERLACED);
      if (!bottom_first)
        GST_BUFFER_FLAG_SET (buf, GST_VIDEO_BUFFER_FLAG_TFF);
      break;
    case V4L2_FIELD_INTERLACED_TB:
    case V4L2_FIELD_SEQ_TB:
      GST_BUFFER_FLAG_SET (buf, GST_VIDEO_BUFFER_FLAG_INTERLACED |
          GST_VIDEO_BUFFER_FLAG_TFF);
      break;
    case V4L2_FIELD_INTERLACED_BT:
    case V4L2_FIELD_SEQ_BT:
      GST_BUFFER_FLAG_SET (buf, GST_VIDEO_BUFFER_FLAG_INTERLACED);
      break;
    default:
      break;
  }
}

/* The field to queue an output buffer with, for a format's field. */
guint32
gst_vstream_buffer_get_field (GstBuffer * buf, guint32 fmt_field)
{
  if (fmt_field != V4L2_FIELD_ALTERNATE)
    return fmt_field;
  if (GST_BUFFER_FLAG_IS_SET (buf, GST_VIDEO_BUFFER_FLAG_ONEFIELD) &&
      !GST_BUFFER_FLAG_IS_SET (buf, GST_VIDEO_BUFFER_FLAG_TFF))
    return V4L2_FIELD_BOTTOM;
  return V4L2_FIELD_TOP;
}

/*
 * Fill @info from @caps, then describe the V4L2 single-planar layout: plane
 * 0 has bytesperline, the chroma planes follow it with strides scaled by
 * their subsampling, each plane pix->height lines (field height for
 * ALTERNATE) tall.  With @layout of one memory per colour plane (NV12M),
 * each plane has its memory's stride and starts where the memories before
 * it end, as the pool's buffers carry them.
 */
gboolean
gst_vstream_info_from_v4l2 (GstVideoInfo * info,
    const struct v4l2_pix_format *pix, const GstVstreamLayout * layout,
    GstCaps * caps)
{
  const GstVideoFormatInfo *finfo;
  gsize offset = 0;
  guint p, c;

  if (!gst_video_info_from_caps (info, caps)) {
    GstStructure *s = gst_caps_get_structure (caps, 0);
    gint fn = 30, fd = 1;

    /* image/jpeg: keep size and rate for the pool and latency */
    if (!gst_structure_has_name (s, "image/jpeg"))
      return FALSE;
    gst_video_info_init (info);
    gst_video_info_set_format (info, GST_VIDEO_FORMAT_ENCODED, pix->width,
        pix->height);
    gst_structure_get_fraction (s, "framerate", &fn, &fd);
    info->fps_n = fn;
    info->fps_d = fd;
    info->size = pix->sizeimage;
    return TRUE;
  }
  finfo = info->finfo;
  if (layout && layout->n_mem > 1) {
    if (layout->n_mem != GST_VIDEO_INFO_N_PLANES (info))
      return FALSE;
    for (p = 0; p < layout->n_mem; p++) {
      info->stride[p] = layout->stride[p];
      info->offset[p] = offset;
      offset += layout->size[p];
    }
    info->size = offset;
    return TRUE;
  }
  for (p = 0; p < GST_VIDEO_INFO_N_PLANES (info); p++) {
    guint comp = 0, lines;

    for (c = 0; c < GST_VIDEO_FORMAT_INFO_N_COMPONENTS (finfo); c++)
      if (GST_VIDEO_FORMAT_INFO_PLANE (finfo, c) == p) {
        comp = c;
        break;
      }
    if (p == 0)
      info->stride[0] = pix->bytesperline;
    else
      info->stride[p] = pix->bytesperline *
          GST_VIDEO_FORMAT_INFO_PSTRIDE (finfo, comp) /
          GST_VIDEO_FORMAT_INFO_PSTRIDE (finfo, 0) >>
          GST_VIDEO_FORMAT_INFO_W_SUB (finfo, comp);
    info->offset[p] = offset;
    lines = GST_VIDEO_FORMAT_INFO_SCALE_HEIGHT (finfo, comp, pix->height);
    offset += (gsize) info->stride[p] * lines;
  }
  info->size = MAX (offset, pix->sizeimage);
  return TRUE;
}

/* Append @s to @caps, its format joined to the list of a structure of
 * @caps that differs from it only in format. */
static void
append_merged (GstCaps * caps, GstStructure * s, GstCapsFeatures * feat)
{
  GstStructure *rest = gst_structure_copy (s);
  guint i;

  gst_structure_remove_field (rest, "format");
  for (i = 0; gst_structure_has_field (s, "format") &&
      i < gst_caps_get_size (caps); i++) {
    GstStructure *t = gst_caps_get_structure (caps, i);
    GstStructure *other = gst_structure_copy (t);
    gboolean same;

    gst_structure_remove_field (other, "format");
    same = gst_structure_has_field (t, "format") &&
        gst_structure_is_equal (rest, other) &&
        gst_caps_features_is_equal (gst_caps_get_features (caps, i),
        feat ? feat : GST_CAPS_FEATURES_MEMORY_SYSTEM_MEMORY);
    gst_structure_free (other);
    if (same) {
      GValue list = G_VALUE_INIT;

      gst_value_list_merge (&list, gst_structure_get_value (t, "format"),
          gst_structure_get_value (s, "format"));
      gst_structure_take_value (t, "format", &list);
      gst_structure_free (rest);
      gst_structure_free (s);
      if (feat)
        gst_caps_features_free (feat);
      return;
    }
  }
  gst_structure_free (rest);
  gst_caps_append_structure_full (caps, s, feat);
}

/* Everything the elements can carry: the pad template caps, one
 * structure per media type and field mode with the formats in a list. */
GstCaps *
gst_vstream_all_caps (void)
{
  GstCaps *caps = gst_caps_new_empty ();
  guint i, j;

  for (j = 0; j < G_N_ELEMENTS (fields); j++) {
    for (i = 0; i < G_N_ELEMENTS (formats); i++) {
      GstStructure *s;
      GstCapsFeatures *feat = NULL;

      if (formats[i].per_plane && gst_vstream_format_twin (&formats[i]))
        continue;               /* its twin's caps are there */
      s = gst_vstream_structure_new (formats[i].fourcc, fields[j].field);
      if (!s)
        continue;
      gst_structure_set (s, "width", GST_TYPE_INT_RANGE, 1, G_MAXINT,
          "height", GST_TYPE_INT_RANGE, 1, G_MAXINT, "framerate",
          GST_TYPE_FRACTION_RANGE, 0, 1, G_MAXINT, 1, NULL);
      if (fields[j].mode == GST_VIDEO_INTERLACE_MODE_ALTERNATE)
        feat = gst_caps_features_new (GST_CAPS_FEATURE_FORMAT_INTERLACED,
            NULL);
      append_merged (caps, s, feat);
    }
  }
#if GST_CHECK_VERSION(1, 24, 0)
  /* what the dma-buf io-modes also offer (vstreamobject.c, add_dma_drm) */
  gst_caps_append (caps, gst_caps_from_string (GST_VIDEO_DMA_DRM_CAPS_MAKE));
#endif
  return caps;
}

/*
 * Colorimetry.  V4L2 describes it with four fields (colorspace = primaries,
 * ycbcr_enc = matrix, xfer_func, quantization = range), each of which may
 * be DEFAULT, meaning "what the colorspace implies"; GStreamer with the
 * four members of GstVideoColorimetry.  Where the two lists differ the
 * nearest member is taken (the XV encodings are their base matrix).
 */
typedef struct
{
  guint32 v4l2;
  gint gst;
} GstVstreamMap;

static const GstVstreamMap primaries_map[] = {
  {V4L2_COLORSPACE_REC709, GST_VIDEO_COLOR_PRIMARIES_BT709},
  {V4L2_COLORSPACE_SRGB, GST_VIDEO_COLOR_PRIMARIES_BT709},
  {V4L2_COLORSPACE_JPEG, GST_VIDEO_COLOR_PRIMARIES_BT709},
  {V4L2_COLORSPACE_SMPTE170M, GST_VIDEO_COLOR_PRIMARIES_SMPTE170M},
  {V4L2_COLORSPACE_470_SYSTEM_BG, GST_VIDEO_COLOR_PRIMARIES_BT470BG},
  {V4L2_COLORSPACE_470_SYSTEM_M, GST_VIDEO_COLOR_PRIMARIES_BT470M},
  {V4L2_COLORSPACE_SMPTE240M, GST_VIDEO_COLOR_PRIMARIES_SMPTE240M},
  {V4L2_COLORSPACE_BT2020, GST_VIDEO_COLOR_PRIMARIES_BT2020},
  {V4L2_COLORSPACE_OPRGB, GST_VIDEO_COLOR_PRIMARIES_ADOBERGB},
  {V4L2_COLORSPACE_DCI_P3, GST_VIDEO_COLOR_PRIMARIES_SMPTERP431},
};

static const GstVstreamMap matrix_map[] = {
  {V4L2_YCBCR_ENC_601, GST_VIDEO_COLOR_MATRIX_BT601},
  {V4L2_YCBCR_ENC_709, GST_VIDEO_COLOR_MATRIX_BT709},
  {V4L2_YCBCR_ENC_BT2020, GST_VIDEO_COLOR_MATRIX_BT2020},
  {V4L2_YCBCR_ENC_SMPTE240M, GST_VIDEO_COLOR_MATRIX_SMPTE240M},
  {V4L2_YCBCR_ENC_XV601, GST_VIDEO_COLOR_MATRIX_BT601},
  {V4L2_YCBCR_ENC_XV709, GST_VIDEO_COLOR_MATRIX_BT709},
  {V4L2_YCBCR_ENC_BT2020_CONST_LUM, GST_VIDEO_COLOR_MATRIX_BT2020},
};

static const GstVstreamMap transfer_map[] = {
  {V4L2_XFER_FUNC_709, GST_VIDEO_TRANSFER_BT709},
  {V4L2_XFER_FUNC_SRGB, GST_VIDEO_TRANSFER_SRGB},
  {V4L2_XFER_FUNC_OPRGB, GST_VIDEO_TRANSFER_ADOBERGB},
  {V4L2_XFER_FUNC_SMPTE240M, GST_VIDEO_TRANSFER_SMPTE240M},
  {V4L2_XFER_FUNC_NONE, GST_VIDEO_TRANSFER_GAMMA10},
  {V4L2_XFER_FUNC_SMPTE2084, GST_VIDEO_TRANSFER_SMPTE2084},
  /* same curve as 709, other names in GStreamer */
  {V4L2_XFER_FUNC_709, GST_VIDEO_TRANSFER_BT601},
  {V4L2_XFER_FUNC_709, GST_VIDEO_TRANSFER_BT2020_10},
  {V4L2_XFER_FUNC_709, GST_VIDEO_TRANSFER_BT2020_12},
};

/* First entry for @v (to_gst) or @g (to V4L2); @fallback if none. */
static gint
map_lookup (const GstVstreamMap * map, guint n, gboolean to_gst, gint key,
    gint fallback)
{
  guint i;

  for (i = 0; i < n; i++) {
    if (to_gst && map[i].v4l2 == (guint32) key)
      return map[i].gst;
    if (!to_gst && map[i].gst == key)
      return map[i].v4l2;
  }
  return fallback;
}

/* Colorimetry of a format the device reports; FALSE when it names none
 * (DEFAULT or RAW colorspace). */
gboolean
gst_vstream_colorimetry_from_v4l2 (const struct v4l2_pix_format *pix,
    gboolean rgb, GstVideoColorimetry * c)
{
  guint32 enc, xfer, quant;

  if (pix->colorspace == V4L2_COLORSPACE_DEFAULT ||
      pix->colorspace == V4L2_COLORSPACE_RAW)
    return FALSE;
  enc = pix->ycbcr_enc ? pix->ycbcr_enc :
      V4L2_MAP_YCBCR_ENC_DEFAULT (pix->colorspace);
  xfer = pix->xfer_func ? pix->xfer_func :
      V4L2_MAP_XFER_FUNC_DEFAULT (pix->colorspace);
  quant = pix->quantization ? pix->quantization :
      V4L2_MAP_QUANTIZATION_DEFAULT (rgb, pix->colorspace, enc);
  c->primaries = map_lookup (primaries_map, G_N_ELEMENTS (primaries_map),
      TRUE, pix->colorspace, GST_VIDEO_COLOR_PRIMARIES_UNKNOWN);
  c->matrix = rgb ? GST_VIDEO_COLOR_MATRIX_RGB :
      map_lookup (matrix_map, G_N_ELEMENTS (matrix_map), TRUE, enc,
      GST_VIDEO_COLOR_MATRIX_UNKNOWN);
  c->transfer = map_lookup (transfer_map, G_N_ELEMENTS (transfer_map), TRUE,
      xfer, GST_VIDEO_TRANSFER_UNKNOWN);
  c->range = quant == V4L2_QUANTIZATION_FULL_RANGE ?
      GST_VIDEO_COLOR_RANGE_0_255 : GST_VIDEO_COLOR_RANGE_16_235;
  /* V4L2 has one name for the 709 curve: use GStreamer's for these
   * primaries, so that caps read "bt601" or "bt2020" */
  if (c->transfer == GST_VIDEO_TRANSFER_BT709) {
    if (c->primaries == GST_VIDEO_COLOR_PRIMARIES_SMPTE170M ||
        c->primaries == GST_VIDEO_COLOR_PRIMARIES_BT470BG ||
        c->primaries == GST_VIDEO_COLOR_PRIMARIES_BT470M)
      c->transfer = GST_VIDEO_TRANSFER_BT601;
    else if (c->primaries == GST_VIDEO_COLOR_PRIMARIES_BT2020)
      c->transfer = GST_VIDEO_TRANSFER_BT2020_12;
  }
  return TRUE;
}

/* The four V4L2 fields for @c; what it leaves unknown stays DEFAULT. */
void
gst_vstream_colorimetry_to_v4l2 (const GstVideoColorimetry * c,
    struct v4l2_pix_format *pix)
{
  pix->colorspace = map_lookup (primaries_map, G_N_ELEMENTS (primaries_map),
      FALSE, c->primaries, V4L2_COLORSPACE_DEFAULT);
  /* BT.709 primaries with the sRGB curve is the sRGB colorspace */
  if (pix->colorspace == V4L2_COLORSPACE_REC709 &&
      c->transfer == GST_VIDEO_TRANSFER_SRGB)
    pix->colorspace = V4L2_COLORSPACE_SRGB;
  pix->ycbcr_enc = map_lookup (matrix_map, G_N_ELEMENTS (matrix_map), FALSE,
      c->matrix, V4L2_YCBCR_ENC_DEFAULT);
  pix->xfer_func = map_lookup (transfer_map, G_N_ELEMENTS (transfer_map),
      FALSE, c->transfer, V4L2_XFER_FUNC_DEFAULT);
  pix->quantization = c->range == GST_VIDEO_COLOR_RANGE_0_255 ?
      V4L2_QUANTIZATION_FULL_RANGE : c->range == GST_VIDEO_COLOR_RANGE_16_235 ?
      V4L2_QUANTIZATION_LIM_RANGE : V4L2_QUANTIZATION_DEFAULT;
}
