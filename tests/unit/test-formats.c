/* Host unit tests: format and field tables, caps probing against a canned
 * device, layout of V4L2 frames in GstVideoInfo, element registration.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>
#include <gst/gst.h>
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>

#include "vstreamformats.h"
#include "vstreamobject.h"
#include "vstreamprobe.h"
#include "vstreamsysfs.h"

GST_DEBUG_CATEGORY (gst_vstream_debug);

GST_START_TEST (test_format_table_round_trip)
{
  guint i;

  for (i = 0; i < gst_vstream_n_formats (); i++) {
    const GstVstreamFormat *f = gst_vstream_format_at (i);
    GstStructure *s = gst_vstream_structure_new (f->fourcc, V4L2_FIELD_NONE);

    fail_unless (s != NULL);
    /* NV12M and kin share their contiguous twin's caps, which win */
    fail_unless (gst_vstream_format_from_structure (s) ==
        (f->per_plane && gst_vstream_format_twin (f) ?
            gst_vstream_format_twin (f) : f),
        "%" GST_FOURCC_FORMAT " does not map back", GST_FOURCC_ARGS (f->fourcc));
    if (f->per_plane && gst_vstream_format_twin (f))
      fail_unless (gst_vstream_format_twin (gst_vstream_format_twin (f)) == f);
    fail_unless (gst_vstream_format_from_fourcc (f->fourcc) == f);
    gst_structure_free (s);
  }
  fail_unless (gst_vstream_format_from_fourcc (v4l2_fourcc ('Z', 'Z', 'Z',
              'Z')) == NULL);
  fail_unless_equals_int (gst_vstream_format_from_fourcc
      (V4L2_PIX_FMT_XRGB32)->format, GST_VIDEO_FORMAT_BGRx);
  fail_unless_equals_int (gst_vstream_format_from_fourcc
      (V4L2_PIX_FMT_YUV420)->format, GST_VIDEO_FORMAT_I420);
}

GST_END_TEST;

GST_START_TEST (test_field_table_round_trip)
{
  guint i;

  for (i = 0; i < gst_vstream_n_fields (); i++) {
    guint32 field = gst_vstream_field_at (i)->field;
    GstStructure *s = gst_vstream_structure_new (V4L2_PIX_FMT_YUYV, field);

    fail_unless (s != NULL);
    fail_unless_equals_int (gst_vstream_field_from_caps (s), field);
    gst_structure_free (s);
  }
  /* SEQ_TB/SEQ_BT are two fields one after the other, not progressive */
  fail_unless_equals_int (gst_vstream_field_from_v4l2 (V4L2_FIELD_SEQ_TB)->mode,
      GST_VIDEO_INTERLACE_MODE_FIELDS);
  fail_unless_equals_int (gst_vstream_field_from_v4l2 (V4L2_FIELD_SEQ_BT)->order,
      GST_VIDEO_FIELD_ORDER_BOTTOM_FIELD_FIRST);
  /* MJPEG has no interlaced caps */
  fail_unless (gst_vstream_structure_new (V4L2_PIX_FMT_MJPEG,
          V4L2_FIELD_INTERLACED_TB) == NULL);
}

GST_END_TEST;

GST_START_TEST (test_buffer_field_flags)
{
  GstBuffer *b = gst_buffer_new ();

  gst_vstream_buffer_set_field_flags (b, V4L2_FIELD_TOP, FALSE);
  fail_unless_equals_int (gst_vstream_buffer_get_field (b,
          V4L2_FIELD_ALTERNATE), V4L2_FIELD_TOP);
  gst_vstream_buffer_set_field_flags (b, V4L2_FIELD_BOTTOM, FALSE);
  fail_unless_equals_int (gst_vstream_buffer_get_field (b,
          V4L2_FIELD_ALTERNATE), V4L2_FIELD_BOTTOM);
  gst_vstream_buffer_set_field_flags (b, V4L2_FIELD_INTERLACED_TB, TRUE);
  fail_unless (GST_BUFFER_FLAG_IS_SET (b, GST_VIDEO_BUFFER_FLAG_TFF));
  fail_unless (GST_BUFFER_FLAG_IS_SET (b, GST_VIDEO_BUFFER_FLAG_INTERLACED));
  /* INTERLACED: the standard's order, top first but on NTSC */
  gst_vstream_buffer_set_field_flags (b, V4L2_FIELD_INTERLACED, FALSE);
  fail_unless (GST_BUFFER_FLAG_IS_SET (b, GST_VIDEO_BUFFER_FLAG_TFF));
  fail_unless (GST_BUFFER_FLAG_IS_SET (b, GST_VIDEO_BUFFER_FLAG_INTERLACED));
  gst_vstream_buffer_set_field_flags (b, V4L2_FIELD_INTERLACED, TRUE);
  fail_if (GST_BUFFER_FLAG_IS_SET (b, GST_VIDEO_BUFFER_FLAG_TFF));
  fail_unless (GST_BUFFER_FLAG_IS_SET (b, GST_VIDEO_BUFFER_FLAG_INTERLACED));
  gst_vstream_buffer_set_field_flags (b, V4L2_FIELD_INTERLACED_BT, FALSE);
  fail_if (GST_BUFFER_FLAG_IS_SET (b, GST_VIDEO_BUFFER_FLAG_TFF));
  gst_vstream_buffer_set_field_flags (b, V4L2_FIELD_NONE, FALSE);
  fail_if (GST_BUFFER_FLAG_IS_SET (b, GST_VIDEO_BUFFER_FLAG_INTERLACED));
  fail_unless_equals_int (gst_vstream_buffer_get_field (b,
          V4L2_FIELD_SEQ_BT), V4L2_FIELD_SEQ_BT);
  gst_buffer_unref (b);
}

GST_END_TEST;

/* A canned capture device: YUYV at two discrete sizes and 30/15 fps with
 * NONE, INTERLACED_TB and ALTERNATE; MJPG stepwise; one unmapped format. */
static int
fake_ioctl (int fd, unsigned long req, void *arg)
{
  static const guint32 fmts[] = { V4L2_PIX_FMT_YUYV,
    v4l2_fourcc ('Z', 'Z', 'Z', 'Z'), V4L2_PIX_FMT_MJPEG
  };

  switch (req) {
    case VIDIOC_ENUM_FMT:{
      struct v4l2_fmtdesc *d = arg;

      if (d->index >= G_N_ELEMENTS (fmts))
        break;
      d->pixelformat = fmts[d->index];
      return 0;
    }
    case VIDIOC_ENUM_FRAMESIZES:{
      struct v4l2_frmsizeenum *fs = arg;

      if (fs->pixel_format == V4L2_PIX_FMT_YUYV && fs->index < 2) {
        fs->type = V4L2_FRMSIZE_TYPE_DISCRETE;
        fs->discrete.width = fs->index ? 320 : 640;
        fs->discrete.height = fs->index ? 240 : 480;
        return 0;
      }
      if (fs->pixel_format == V4L2_PIX_FMT_MJPEG && fs->index == 0) {
        fs->type = V4L2_FRMSIZE_TYPE_STEPWISE;
        fs->stepwise.min_width = fs->stepwise.min_height = 16;
        fs->stepwise.max_width = 1920;
        fs->stepwise.max_height = 1080;
        fs->stepwise.step_width = fs->stepwise.step_height = 8;
        return 0;
      }
      break;
    }
    case VIDIOC_ENUM_FRAMEINTERVALS:{
      struct v4l2_frmivalenum *fi = arg;

      if (fi->pixel_format == V4L2_PIX_FMT_YUYV && fi->index < 2) {
        fi->type = V4L2_FRMIVAL_TYPE_DISCRETE;
        fi->discrete.numerator = 1;
        fi->discrete.denominator = fi->index ? 15 : 30;
        return 0;
      }
      if (fi->pixel_format == V4L2_PIX_FMT_MJPEG && fi->index == 0) {
        fi->type = V4L2_FRMIVAL_TYPE_CONTINUOUS;
        fi->stepwise.min.numerator = 1;
        fi->stepwise.min.denominator = 60;
        fi->stepwise.max.numerator = 1;
        fi->stepwise.max.denominator = 1;
        return 0;
      }
      break;
    }
    case VIDIOC_CROPCAP:{
      struct v4l2_cropcap *cc = arg;

      /* NTSC-sampled pixels: V4L2 says y/x = 11/10 */
      cc->pixelaspect.numerator = 11;
      cc->pixelaspect.denominator = 10;
      return 0;
    }
    case VIDIOC_TRY_FMT:{
      struct v4l2_format *f = arg;
      guint32 fl = f->fmt.pix.field;

      if (f->fmt.pix.pixelformat == V4L2_PIX_FMT_MJPEG ||
          (fl != V4L2_FIELD_NONE && fl != V4L2_FIELD_INTERLACED_TB &&
              fl != V4L2_FIELD_ALTERNATE))
        f->fmt.pix.field = V4L2_FIELD_NONE;
      /* HD colorimetry, the other fields left to the colorspace */
      f->fmt.pix.colorspace = V4L2_COLORSPACE_REC709;
      return 0;
    }
  }
  errno = EINVAL;
  return -1;
}

/* Can @caps meet @str? */
static gboolean
offers (GstCaps * caps, const gchar * str)
{
  GstCaps *want = gst_caps_from_string (str);
  gboolean ok = gst_caps_can_intersect (caps, want);

  gst_caps_unref (want);
  return ok;
}

GST_START_TEST (test_probe_canned_device)
{
  GstCaps *caps = gst_vstream_probe_fd_caps (-1, V4L2_BUF_TYPE_VIDEO_CAPTURE,
      fake_ioctl);

  GST_INFO ("probed %" GST_PTR_FORMAT, caps);
  /* 2 sizes x 3 fields for YUYV, 1 structure for MJPG, none for ZZZZ */
  fail_unless_equals_int (gst_caps_get_size (caps), 7);
  fail_unless (offers (caps, "video/x-raw,format=YUY2,width=640,height=480,"
      "interlace-mode=interleaved,field-order=top-field-first,framerate=15/1"));
  /* ALTERNATE: caps carry the frame height and the Interlaced feature */
  fail_unless (offers (caps, "video/x-raw(format:Interlaced),format=YUY2,"
      "width=320,height=480,interlace-mode=alternate,framerate=30/1"));
  fail_if (offers (caps, "video/x-raw,format=YUY2,width=320,height=240,"
      "interlace-mode=progressive,framerate=25/1"), "25 fps was not offered");
  fail_unless (offers (caps, "image/jpeg,width=1280,height=720,"
      "framerate=50/1"));
  fail_if (offers (caps, "image/jpeg,width=1281,height=720"),
      "step 8 not honoured");
  /* a capture device states its colorimetry ... */
  fail_if (offers (caps, "video/x-raw,format=YUY2,width=640,"
      "height=480,colorimetry=bt601"), "bt601 on a bt709 device");
  fail_unless (offers (caps, "video/x-raw,format=YUY2,width=640,"
      "height=480,colorimetry=bt709"));
  /* ... and its pixel aspect ratio, x/y */
  fail_if (offers (caps, "video/x-raw,format=YUY2,width=640,"
      "height=480,pixel-aspect-ratio=1/1"), "square pixels offered");
  fail_unless (offers (caps, "video/x-raw,format=YUY2,width=640,"
      "height=480,pixel-aspect-ratio=10/11"));
  gst_caps_unref (caps);
  /* ... an output device takes any of both */
  caps = gst_vstream_probe_fd_caps (-1, V4L2_BUF_TYPE_VIDEO_OUTPUT,
      fake_ioctl);
  fail_unless (offers (caps, "video/x-raw,format=YUY2,width=640,"
      "height=480,colorimetry=bt601,pixel-aspect-ratio=4/3"));
  gst_caps_unref (caps);
}

GST_END_TEST;

/* The canned device, but its first YUYV interval is 0/0 (a driver bug)
 * and a prober that does not step past it asks forever: give up after
 * 100 questions so such a prober fails instead of hanging. */
static guint ival_asked;

static int
zero_interval_ioctl (int fd, unsigned long req, void *arg)
{
  struct v4l2_frmivalenum *fi = arg;

  if (req != VIDIOC_ENUM_FRAMEINTERVALS ||
      fi->pixel_format != V4L2_PIX_FMT_YUYV)
    return fake_ioctl (fd, req, arg);
  if (++ival_asked > 100 || fi->index > 2) {
    errno = EINVAL;
    return -1;
  }
  fi->type = V4L2_FRMIVAL_TYPE_DISCRETE;
  fi->discrete.numerator = fi->index ? 1 : 0;
  fi->discrete.denominator = fi->index == 1 ? 30 : fi->index ? 15 : 0;
  return 0;
}

GST_START_TEST (test_probe_zero_interval)
{
  GstCaps *caps;

  ival_asked = 0;
  caps = gst_vstream_probe_fd_caps (-1, V4L2_BUF_TYPE_VIDEO_CAPTURE,
      zero_interval_ioctl);
  fail_unless (ival_asked <= 100, "the interval prober did not move on");
  /* the zero interval is skipped, the ones after it are kept */
  fail_unless (offers (caps, "video/x-raw,format=YUY2,width=640,height=480,"
          "framerate=30/1"));
  fail_unless (offers (caps, "video/x-raw,format=YUY2,width=320,height=240,"
          "framerate=15/1"));
  fail_if (offers (caps, "video/x-raw,format=YUY2,width=640,height=480,"
          "framerate=25/1"), "25 fps was not offered");
  gst_caps_unref (caps);
}

GST_END_TEST;

/* V4L2's four colorimetry fields <-> GStreamer's, both ways. */
static const struct
{
  guint32 colorspace, enc, xfer, quant;
  gboolean rgb;
  const gchar *caps;
} colorimetries[] = {
  /* DEFAULT fields: what the colorspace implies */
  {V4L2_COLORSPACE_SMPTE170M, 0, 0, 0, FALSE, GST_VIDEO_COLORIMETRY_BT601},
  {V4L2_COLORSPACE_REC709, 0, 0, 0, FALSE, GST_VIDEO_COLORIMETRY_BT709},
  {V4L2_COLORSPACE_BT2020, 0, 0, 0, FALSE, GST_VIDEO_COLORIMETRY_BT2020},
  {V4L2_COLORSPACE_SRGB, 0, 0, 0, TRUE, GST_VIDEO_COLORIMETRY_SRGB},
  /* explicit fields */
  {V4L2_COLORSPACE_REC709, V4L2_YCBCR_ENC_709, V4L2_XFER_FUNC_709,
      V4L2_QUANTIZATION_FULL_RANGE, FALSE, "1:3:5:1"},
  {V4L2_COLORSPACE_SMPTE240M, V4L2_YCBCR_ENC_SMPTE240M,
      V4L2_XFER_FUNC_SMPTE240M, V4L2_QUANTIZATION_LIM_RANGE, FALSE,
      GST_VIDEO_COLORIMETRY_SMPTE240M},
};

GST_START_TEST (test_colorimetry_mapping)
{
  guint i;

  for (i = 0; i < G_N_ELEMENTS (colorimetries); i++) {
    struct v4l2_pix_format pix = {.colorspace = colorimetries[i].colorspace,
      .ycbcr_enc = colorimetries[i].enc,.xfer_func = colorimetries[i].xfer,
      .quantization = colorimetries[i].quant
    }, back = { 0 };
    GstVideoColorimetry c, want;
    gchar *str;

    fail_unless (gst_vstream_colorimetry_from_v4l2 (&pix,
            colorimetries[i].rgb, &c));
    fail_unless (gst_video_colorimetry_from_string (&want,
            colorimetries[i].caps));
    str = gst_video_colorimetry_to_string (&c);
    fail_unless (gst_video_colorimetry_is_equal (&c, &want),
        "row %u: %s, want %s", i, str, colorimetries[i].caps);
    g_free (str);
    /* back: the same colour, explicit or by the colorspace's defaults */
    gst_vstream_colorimetry_to_v4l2 (&c, &back);
    fail_unless_equals_int (back.colorspace, pix.colorspace);
    fail_unless (!pix.ycbcr_enc || back.ycbcr_enc == pix.ycbcr_enc);
    fail_unless (!pix.xfer_func || back.xfer_func == pix.xfer_func);
    fail_unless (!pix.quantization || back.quantization == pix.quantization);
  }
  /* a RAW or DEFAULT colorspace names no colorimetry */
  {
    struct v4l2_pix_format pix = {.colorspace = V4L2_COLORSPACE_RAW };
    GstVideoColorimetry c;

    fail_if (gst_vstream_colorimetry_from_v4l2 (&pix, FALSE, &c));
  }
}

GST_END_TEST;

GST_START_TEST (test_info_from_v4l2_layout)
{
  struct v4l2_pix_format pix = {.width = 320,.height = 240,
    .pixelformat = V4L2_PIX_FMT_NV12,.bytesperline = 384,
    .sizeimage = 384 * 240 * 3 / 2
  };
  GstCaps *caps = gst_caps_from_string ("video/x-raw,format=NV12,width=320,"
      "height=240,framerate=30/1");
  GstVideoInfo info;

  fail_unless (gst_vstream_info_from_v4l2 (&info, &pix, NULL, caps));
  fail_unless_equals_int (info.stride[0], 384);
  fail_unless_equals_int (info.stride[1], 384);
  fail_unless_equals_int (info.offset[1], 384 * 240);
  gst_caps_unref (caps);

  pix.pixelformat = V4L2_PIX_FMT_YUV420;
  pix.bytesperline = 320;
  caps = gst_caps_from_string ("video/x-raw,format=I420,width=320,"
      "height=240,framerate=30/1");
  fail_unless (gst_vstream_info_from_v4l2 (&info, &pix, NULL, caps));
  fail_unless_equals_int (info.stride[1], 160);
  fail_unless_equals_int (info.stride[2], 160);
  fail_unless_equals_int (info.offset[2], 320 * 240 + 160 * 120);

  /* YUV420M: a memory per plane, each padded; the planes follow the
   * memories, not the subsampling, and a layout that does not match the
   * caps' planes is refused */
  {
    GstVstreamLayout l = {.n_mem = 3,.size = {352 * 256, 192 * 128, 4096},
      .stride = {352, 192, 176}
    };

    fail_unless (gst_vstream_info_from_v4l2 (&info, &pix, &l, caps));
    fail_unless_equals_int (info.stride[0], 352);
    fail_unless_equals_int (info.stride[1], 192);
    fail_unless_equals_int (info.stride[2], 176);
    fail_unless_equals_int (info.offset[1], 352 * 256);
    fail_unless_equals_int (info.offset[2], 352 * 256 + 192 * 128);
    fail_unless_equals_int (info.size, 352 * 256 + 192 * 128 + 4096);
    l.n_mem = 2;
    fail_if (gst_vstream_info_from_v4l2 (&info, &pix, &l, caps));
  }
  gst_caps_unref (caps);
}

GST_END_TEST;

/* The pad template lists formats per field mode (what gst-inspect shows
 * and every negotiation intersects), and still holds each format in each
 * field mode. */
GST_START_TEST (test_template_caps)
{
  GstCaps *all = gst_vstream_all_caps ();
  guint i, j;

  fail_unless (gst_caps_get_size (all) <= 2 * gst_vstream_n_fields () + 1,
      "%u structures", gst_caps_get_size (all));
  for (i = 0; i < gst_vstream_n_formats (); i++) {
    for (j = 0; j < gst_vstream_n_fields (); j++) {
      const GstVstreamField *f = gst_vstream_field_at (j);
      GstStructure *s = gst_vstream_structure_new
          (gst_vstream_format_at (i)->fourcc, f->field);
      GstCaps *one;

      if (!s)
        continue;
      gst_structure_set (s, "width", G_TYPE_INT, 64, "height", G_TYPE_INT,
          48, "framerate", GST_TYPE_FRACTION, 30, 1, NULL);
      one = gst_caps_new_full (s, NULL);
      if (f->mode == GST_VIDEO_INTERLACE_MODE_ALTERNATE)
        gst_caps_set_features (one, 0,
            gst_caps_features_new (GST_CAPS_FEATURE_FORMAT_INTERLACED, NULL));
      fail_unless (gst_caps_is_subset (one, all), "%" GST_PTR_FORMAT, one);
      gst_caps_unref (one);
    }
  }
  gst_caps_unref (all);
}

GST_END_TEST;

GST_START_TEST (test_elements_registered)
{
  GstElement *src = gst_element_factory_make ("vstreamsrc", NULL);
  GstElement *sink = gst_element_factory_make ("vstreamsink", NULL);
  GstStructure *stats = NULL;
  gchar *dev = NULL;
  guint64 v = 1;

  fail_unless (src != NULL && sink != NULL);
  g_object_get (src, "device", &dev, "stats", &stats, NULL);
  /* unset: found when opening (gst_vstream_default_device) */
  fail_unless (dev == NULL);
  fail_unless (gst_structure_get_uint64 (stats, "copies", &v));
  fail_unless_equals_uint64 (v, 0);
  fail_unless (gst_structure_has_field (stats, "zero-copy"));
  g_object_set (sink, "io-mode", 3, "min-buffers", 6, NULL);
  g_free (dev);
  gst_structure_free (stats);
  gst_object_unref (src);
  gst_object_unref (sink);
  fail_unless (gst_device_provider_factory_find ("vstreamdeviceprovider"));
}

GST_END_TEST;

/* A monitor starts and stops the provider (its udev thread where built
 * with GUdev) as often as it likes, stop right after start too; with an
 * empty sysfs no node is vstream's, so it lists none. */
GST_START_TEST (test_device_provider_start_stop)
{
  GstDeviceProvider *provider =
      gst_device_provider_factory_get_by_name ("vstreamdeviceprovider");
  gchar *sys = g_dir_make_tmp ("vstream-sys-XXXXXX", NULL);
  GList *devices;
  guint i;

  fail_unless (provider != NULL && sys != NULL);
  g_setenv ("VSTREAM_SYSFS", sys, TRUE);
  for (i = 0; i < 20; i++) {
    fail_unless (gst_device_provider_start (provider));
    if (i % 2) {
      devices = gst_device_provider_get_devices (provider);
      fail_unless_equals_int (g_list_length (devices), 0);
      g_list_free_full (devices, gst_object_unref);
    }
    gst_device_provider_stop (provider);
  }
  g_unsetenv ("VSTREAM_SYSFS");
  g_rmdir (sys);
  g_free (sys);
  gst_object_unref (provider);
}

GST_END_TEST;

GST_START_TEST (test_missing_device_errors)
{
  GstElement *src = gst_element_factory_make ("vstreamsrc", NULL);
  GstBus *bus = gst_bus_new ();
  GstMessage *msg;
  GError *err = NULL;

  gst_element_set_bus (src, bus);
  g_object_set (src, "device", "/dev/vstream-missing", NULL);
  fail_unless_equals_int (gst_element_set_state (src, GST_STATE_READY),
      GST_STATE_CHANGE_FAILURE);
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  fail_unless (msg != NULL);
  gst_message_parse_error (msg, &err, NULL);
  fail_unless (g_error_matches (err, GST_RESOURCE_ERROR,
          GST_RESOURCE_ERROR_NOT_FOUND));
  fail_unless (strstr (err->message, "/dev/vstream-missing") != NULL);
  g_error_free (err);
  gst_message_unref (msg);
  gst_element_set_state (src, GST_STATE_NULL);
  gst_element_set_bus (src, NULL);
  gst_object_unref (bus);
  gst_object_unref (src);
}

GST_END_TEST;

/* Remove @path and everything below it (no symlink is followed). */
static void
rm_tree (const gchar * path)
{
  GDir *dir;
  const gchar *name;

  if (!g_file_test (path, G_FILE_TEST_IS_SYMLINK) &&
      (dir = g_dir_open (path, 0, NULL))) {
    while ((name = g_dir_read_name (dir))) {
      gchar *child = g_build_filename (path, name, NULL);

      rm_tree (child);
      g_free (child);
    }
    g_dir_close (dir);
    g_rmdir (path);
  } else {
    g_unlink (path);
  }
}

/* vstream:// URIs: by node, by pipe name (through sysfs names; a fake
 * sysfs tree here), a reader by number; errors named. */
static gchar *
uri_device (GstURIType type, const gchar * uri, GError ** err)
{
  GstElement *e = gst_element_make_from_uri (type, uri, NULL, err);
  gchar *dev = NULL, *back;

  if (!e)
    return NULL;
  g_object_get (e, "device", &dev, NULL);
  back = gst_uri_handler_get_uri (GST_URI_HANDLER (e));
  fail_unless (g_str_has_prefix (back, "vstream:///dev/"), "%s", back);
  g_free (back);
  gst_object_unref (e);
  return dev;
}

GST_START_TEST (test_uri_handler)
{
  /* node, sysfs name, driver: a name alone does not make a vstream node */
  static const gchar *nodes[][3] = {
    {"video3", "cam-output", "vstream"}, {"video4", "cam-capture-0", "vstream"},
    {"video5", "cam-capture-1", "vstream"}, {"video6", "solo-output", "vstream"},
    {"video7", "solo-capture", "vstream"},
    {"video8", "vivid-000-vid-cap", "vivid"}, {"video9", "fake-output", "vivid"},
    {"video12", "late-output", "vstream"},
    /* below them: another driver's nodes, and the output node of a pipe
     * named x-capture */
    {"video0", "z-output", "vivid"}, {"video1", "y-capture", "vivid"},
    {"video2", "x-capture-output", "vstream"},
  };
  gchar *root = g_dir_make_tmp ("vstream-uri-XXXXXX", NULL);
  gchar *dev;
  GError *err = NULL;
  guint i;

  for (i = 0; i < G_N_ELEMENTS (nodes); i++) {
    gchar *d = g_build_filename (root, "class", "video4linux", nodes[i][0],
        NULL);
    gchar *f = g_build_filename (d, "name", NULL);
    gchar *txt = g_strconcat (nodes[i][1], "\n", NULL);

    gchar *drv = g_build_filename (root, "drivers", nodes[i][2], NULL);
    gchar *dev = g_build_filename (root, "devices", nodes[i][0], NULL);
    gchar *link;

    fail_unless (g_mkdir_with_parents (d, 0755) == 0);
    fail_unless (g_mkdir_with_parents (drv, 0755) == 0);
    fail_unless (g_mkdir_with_parents (dev, 0755) == 0);
    fail_unless (g_file_set_contents (f, txt, -1, NULL));
    link = g_build_filename (dev, "driver", NULL);
    fail_unless (symlink (drv, link) == 0);
    g_free (link);
    link = g_build_filename (d, "device", NULL);
    fail_unless (symlink (dev, link) == 0);
    g_free (link);
    g_free (drv);
    g_free (dev);
    g_free (txt);
    g_free (f);
    g_free (d);
  }
  g_setenv ("VSTREAM_SYSFS", root, TRUE);

#define EXPECT(type, uri, want) G_STMT_START { \
    dev = uri_device (type, uri, &err); \
    fail_unless (dev != NULL, "%s: %s", uri, err ? err->message : "?"); \
    fail_unless_equals_string (dev, want); \
    g_free (dev); \
  } G_STMT_END
  EXPECT (GST_URI_SRC, "vstream:///dev/video9", "/dev/video9");
  EXPECT (GST_URI_SINK, "vstream://cam", "/dev/video3");
  EXPECT (GST_URI_SRC, "vstream://cam", "/dev/video4");
  EXPECT (GST_URI_SRC, "vstream://cam/1", "/dev/video5");
  EXPECT (GST_URI_SRC, "vstream://solo", "/dev/video7");
  EXPECT (GST_URI_SINK, "vstream://solo", "/dev/video6");
#undef EXPECT

#define REFUSE(type, uri, want) G_STMT_START { \
    dev = uri_device (type, uri, &err); \
    fail_unless (dev == NULL, "%s gave %s", uri, dev); \
    fail_unless (err != NULL && err->code == want, "%s: %s", uri, \
        err ? err->message : "no error"); \
    g_clear_error (&err); \
  } G_STMT_END
  REFUSE (GST_URI_SRC, "vstream://nope", GST_URI_ERROR_BAD_REFERENCE);
  REFUSE (GST_URI_SRC, "vstream://solo/1", GST_URI_ERROR_BAD_REFERENCE);
  REFUSE (GST_URI_SRC, "vstream://cam/x", GST_URI_ERROR_BAD_URI);
  REFUSE (GST_URI_SINK, "vstream://cam/1", GST_URI_ERROR_BAD_URI);
  REFUSE (GST_URI_SINK, "vstream://vivid-000-vid", GST_URI_ERROR_BAD_REFERENCE);
  /* named like a vstream node, another driver's */
  REFUSE (GST_URI_SINK, "vstream://fake", GST_URI_ERROR_BAD_REFERENCE);
#undef REFUSE

  /* no device set: the lowest-numbered vstream node of the direction */
  dev = gst_vstream_default_device (TRUE);
  fail_unless_equals_string (dev, "/dev/video2");
  g_free (dev);
  dev = gst_vstream_default_device (FALSE);
  fail_unless_equals_string (dev, "/dev/video4");
  g_free (dev);
  /* and with no vstream node, v4l2src's default */
  dev = g_build_filename (root, "nothing", NULL);
  g_setenv ("VSTREAM_SYSFS", dev, TRUE);
  g_free (dev);
  dev = gst_vstream_default_device (TRUE);
  fail_unless_equals_string (dev, "/dev/video0");
  g_free (dev);

  g_unsetenv ("VSTREAM_SYSFS");
  rm_tree (root);
  g_free (root);
}

GST_END_TEST;

static Suite *
vstream_unit_suite (void)
{
  Suite *s = suite_create ("vstream-unit");
  TCase *tc = tcase_create ("unit");

  GST_DEBUG_CATEGORY_INIT (gst_vstream_debug, "vstream", 0, "vstream tests");
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_format_table_round_trip);
  tcase_add_test (tc, test_field_table_round_trip);
  tcase_add_test (tc, test_buffer_field_flags);
  tcase_add_test (tc, test_probe_canned_device);
  tcase_add_test (tc, test_probe_zero_interval);
  tcase_add_test (tc, test_colorimetry_mapping);
  tcase_add_test (tc, test_info_from_v4l2_layout);
  tcase_add_test (tc, test_template_caps);
  tcase_add_test (tc, test_elements_registered);
  tcase_add_test (tc, test_device_provider_start_stop);
  tcase_add_test (tc, test_missing_device_errors);
  tcase_add_test (tc, test_uri_handler);
  return s;
}

GST_CHECK_MAIN (vstream_unit);
