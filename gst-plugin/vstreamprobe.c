/* vstream GStreamer plugin: the caps a V4L2 node offers.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * From ENUM_FMT, ENUM_FRAMESIZES, ENUM_FRAMEINTERVALS, TRY_FMT (per
 * field) and CROPCAP: what the elements negotiate and the device provider
 * lists.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <string.h>

#include "vstreamprobe.h"
#include "vstreamformats.h"

GST_DEBUG_CATEGORY_EXTERN (gst_vstream_debug);
#define GST_CAT_DEFAULT gst_vstream_debug

/* What caps probing talks to: an open node, or a pool's or the device
 * provider's fd. */
typedef struct
{
  gint fd;
  GstVstreamIoctlFunc func;
  gboolean mplane;
} ProbeDev;

static int
probe_ioctl (const ProbeDev * d, unsigned long req, void *arg)
{
  return gst_vstream_device_call (d->func, d->mplane, d->fd, req, arg);
}

/* The framerates at one size, as a caps value. */
static void
probe_framerates (const ProbeDev * d, guint32 fourcc, guint w, guint h,
    GValue * out)
{
  struct v4l2_frmivalenum ival = {
    .pixel_format = fourcc,.width = w,.height = h
  };

  if (probe_ioctl (d, VIDIOC_ENUM_FRAMEINTERVALS, &ival) < 0) {
    g_value_init (out, GST_TYPE_FRACTION_RANGE);
    gst_value_set_fraction_range_full (out, 0, 1, G_MAXINT, 1);
    return;
  }
  if (ival.type == V4L2_FRMIVAL_TYPE_DISCRETE) {
    g_value_init (out, GST_TYPE_LIST);
    do {
      GValue v = G_VALUE_INIT;

      /* a zero interval is no rate: skip it (and only it) */
      if (!ival.discrete.numerator || !ival.discrete.denominator)
        continue;
      g_value_init (&v, GST_TYPE_FRACTION);
      gst_value_set_fraction (&v, ival.discrete.denominator,
          ival.discrete.numerator);
      gst_value_list_append_and_take_value (out, &v);
    } while (++ival.index,
        probe_ioctl (d, VIDIOC_ENUM_FRAMEINTERVALS, &ival) == 0);
    if (gst_value_list_get_size (out) == 0) {
      /* nothing usable: any rate, as for a device that does not say */
      g_value_unset (out);
      g_value_init (out, GST_TYPE_FRACTION_RANGE);
      gst_value_set_fraction_range_full (out, 0, 1, G_MAXINT, 1);
    } else if (gst_value_list_get_size (out) == 1) {
      const GValue *only = gst_value_list_get_value (out, 0);
      GValue v = G_VALUE_INIT;

      g_value_init (&v, G_VALUE_TYPE (only));
      g_value_copy (only, &v);
      g_value_unset (out);
      *out = v;
    }
    return;
  }
  /* stepwise and continuous: the fastest rate is the shortest interval */
  g_value_init (out, GST_TYPE_FRACTION_RANGE);
  if (!ival.stepwise.min.numerator || !ival.stepwise.max.numerator)
    gst_value_set_fraction_range_full (out, 0, 1, G_MAXINT, 1);
  else
    gst_value_set_fraction_range_full (out, ival.stepwise.max.denominator,
        ival.stepwise.max.numerator, ival.stepwise.min.denominator,
        ival.stepwise.min.numerator);
}

static void
set_dimension (GstStructure * s, const gchar * name, guint min, guint max,
    guint step)
{
  if (min == max) {
    gst_structure_set (s, name, G_TYPE_INT, (gint) min, NULL);
  } else {
    GValue v = G_VALUE_INIT;

    g_value_init (&v, GST_TYPE_INT_RANGE);
    gst_value_set_int_range_step (&v, min, max, MAX (step, 1));
    gst_structure_set_value (s, name, &v);
    g_value_unset (&v);
  }
}

/* Fields the device accepts for a format, found with TRY_FMT; @tried gets
 * the first accepted format (its colorimetry), else only @fourcc. */
static GArray *
probe_fields (const ProbeDev * d, enum v4l2_buf_type type,
    guint32 fourcc, guint w, guint h, struct v4l2_pix_format *tried)
{
  GArray *out = g_array_new (FALSE, FALSE, sizeof (guint32));
  guint i;

  memset (tried, 0, sizeof (*tried));
  tried->pixelformat = fourcc;
  for (i = 0; i < gst_vstream_n_fields (); i++) {
    guint32 field = gst_vstream_field_at (i)->field;
    struct v4l2_format fmt = {.type = type };

    fmt.fmt.pix.pixelformat = fourcc;
    fmt.fmt.pix.width = w;
    fmt.fmt.pix.height = h;
    fmt.fmt.pix.field = field;
    if (probe_ioctl (d, VIDIOC_TRY_FMT, &fmt) < 0) {
      /* no TRY_FMT: assume what the device reports now */
      if (i == 0)
        g_array_append_val (out, field);
      continue;
    }
    if (fmt.fmt.pix.pixelformat == fourcc && fmt.fmt.pix.field == field) {
      if (!out->len)
        *tried = fmt.fmt.pix;
      g_array_append_val (out, field);
    }
  }
  return out;
}

/* A capture device decides the colorimetry: say it in its caps (raw video
 * only; a colorspace of 0 says nothing).  Output devices take any. */
static void
set_colorimetry (GstStructure * s, enum v4l2_buf_type type,
    const struct v4l2_pix_format *pix)
{
  const GstVstreamFormat *f = gst_vstream_format_from_fourcc (pix->pixelformat);
  GstVideoColorimetry c;
  gchar *str;

  if (type != V4L2_BUF_TYPE_VIDEO_CAPTURE || !f ||
      f->format == GST_VIDEO_FORMAT_ENCODED ||
      !gst_vstream_colorimetry_from_v4l2 (pix,
          GST_VIDEO_FORMAT_INFO_IS_RGB (gst_video_format_get_info (f->format)),
          &c))
    return;
  str = gst_video_colorimetry_to_string (&c);
  if (str)
    gst_structure_set (s, "colorimetry", G_TYPE_STRING, str, NULL);
  g_free (str);
}

/* A capture device's pixel aspect ratio (CROPCAP, y/x in V4L2, x/y in
 * caps); FALSE when it does not say (square pixels are then assumed). */
static gboolean
probe_pixel_aspect (const ProbeDev * d, enum v4l2_buf_type type,
    gint * par_n, gint * par_d)
{
  struct v4l2_cropcap cc = {.type = type };

  if (type != V4L2_BUF_TYPE_VIDEO_CAPTURE ||
      probe_ioctl (d, VIDIOC_CROPCAP, &cc) < 0 ||
      !cc.pixelaspect.numerator || !cc.pixelaspect.denominator)
    return FALSE;
  *par_n = cc.pixelaspect.denominator;
  *par_d = cc.pixelaspect.numerator;
  return TRUE;
}

static void
append_size (GstCaps * caps, enum v4l2_buf_type type,
    const struct v4l2_pix_format *tried, GArray * fields,
    guint minw, guint maxw, guint stepw, guint minh, guint maxh, guint steph,
    const GValue * rates)
{
  guint32 fourcc = tried->pixelformat;
  guint i;

  for (i = 0; i < fields->len; i++) {
    guint32 field = g_array_index (fields, guint32, i);
    GstStructure *s = gst_vstream_structure_new (fourcc, field);
    GstCapsFeatures *feat = NULL;
    guint mul = 1;

    if (!s)
      continue;
    /* ALTERNATE: V4L2 sizes are fields, caps sizes are frames */
    if (field == V4L2_FIELD_ALTERNATE) {
      mul = 2;
      feat = gst_caps_features_new (GST_CAPS_FEATURE_FORMAT_INTERLACED, NULL);
    }
    set_dimension (s, "width", minw, maxw, stepw);
    set_dimension (s, "height", minh * mul, maxh * mul, steph * mul);
    gst_structure_set_value (s, "framerate", rates);
    set_colorimetry (s, type, tried);
    gst_caps_append_structure_full (caps, s, feat);
  }
}

/* @type may be a multi-planar type: the device is then probed through
 * vstreammplane.c, as the elements use it. */
GstCaps *
gst_vstream_probe_fd_caps (gint fd, enum v4l2_buf_type type,
    GstVstreamIoctlFunc func)
{
  GstCaps *caps = gst_caps_new_empty ();
  ProbeDev dev = {.fd = fd,.func = func };
  const ProbeDev *d = &dev;
  struct v4l2_fmtdesc desc;
  gint par_n = 0, par_d = 0;

  if (type == V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE) {
    dev.mplane = TRUE;
    type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
  } else if (type == V4L2_BUF_TYPE_VIDEO_OUTPUT_MPLANE) {
    dev.mplane = TRUE;
    type = V4L2_BUF_TYPE_VIDEO_OUTPUT;
  }
  memset (&desc, 0, sizeof (desc));
  desc.type = type;
  for (desc.index = 0; probe_ioctl (d, VIDIOC_ENUM_FMT, &desc) == 0;
      desc.index++) {
    struct v4l2_frmsizeenum fs = {.pixel_format = desc.pixelformat };
    struct v4l2_pix_format tried;
    GArray *fields;
    GValue rates = G_VALUE_INIT;

    if (!gst_vstream_format_from_fourcc (desc.pixelformat)) {
      GST_DEBUG ("skipping unmapped format %" GST_FOURCC_FORMAT,
          GST_FOURCC_ARGS (desc.pixelformat));
      continue;
    }
    if (probe_ioctl (d, VIDIOC_ENUM_FRAMESIZES, &fs) < 0) {
      /* no size enumeration: ask TRY_FMT for the extremes */
      struct v4l2_format lo = {.type = type }, hi = {.type = type };

      lo.fmt.pix.pixelformat = hi.fmt.pix.pixelformat = desc.pixelformat;
      lo.fmt.pix.width = lo.fmt.pix.height = 1;
      hi.fmt.pix.width = hi.fmt.pix.height = 32768;
      if (probe_ioctl (d, VIDIOC_TRY_FMT, &lo) < 0 ||
          probe_ioctl (d, VIDIOC_TRY_FMT, &hi) < 0)
        continue;
      fs.type = V4L2_FRMSIZE_TYPE_CONTINUOUS;
      fs.stepwise.min_width = lo.fmt.pix.width;
      fs.stepwise.min_height = lo.fmt.pix.height;
      fs.stepwise.max_width = hi.fmt.pix.width;
      fs.stepwise.max_height = hi.fmt.pix.height;
      fs.stepwise.step_width = fs.stepwise.step_height = 1;
    }
    if (fs.type == V4L2_FRMSIZE_TYPE_DISCRETE) {
      fields = probe_fields (d, type, desc.pixelformat,
          fs.discrete.width, fs.discrete.height, &tried);
      do {
        probe_framerates (d, desc.pixelformat, fs.discrete.width,
            fs.discrete.height, &rates);
        append_size (caps, type, &tried, fields, fs.discrete.width,
            fs.discrete.width, 1, fs.discrete.height, fs.discrete.height, 1,
            &rates);
        g_value_unset (&rates);
        fs.index++;
      } while (probe_ioctl (d, VIDIOC_ENUM_FRAMESIZES, &fs) == 0 &&
          fs.type == V4L2_FRMSIZE_TYPE_DISCRETE);
    } else {
      guint step_w = fs.type == V4L2_FRMSIZE_TYPE_STEPWISE ?
          fs.stepwise.step_width : 1;
      guint step_h = fs.type == V4L2_FRMSIZE_TYPE_STEPWISE ?
          fs.stepwise.step_height : 1;

      fields = probe_fields (d, type, desc.pixelformat,
          fs.stepwise.min_width, fs.stepwise.min_height, &tried);
      probe_framerates (d, desc.pixelformat,
          fs.stepwise.min_width, fs.stepwise.min_height, &rates);
      append_size (caps, type, &tried, fields, fs.stepwise.min_width,
          fs.stepwise.max_width, step_w, fs.stepwise.min_height,
          fs.stepwise.max_height, step_h, &rates);
      g_value_unset (&rates);
    }
    g_array_free (fields, TRUE);
  }
  if (probe_pixel_aspect (d, type, &par_n, &par_d)) {
    guint i;

    for (i = 0; i < gst_caps_get_size (caps); i++) {
      GstStructure *s = gst_caps_get_structure (caps, i);

      if (gst_structure_has_name (s, "video/x-raw"))
        gst_structure_set (s, "pixel-aspect-ratio", GST_TYPE_FRACTION, par_n,
            par_d, NULL);
    }
  }
  return caps;
}

