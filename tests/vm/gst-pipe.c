/* gst-pipe: GstCheck tests of vstreamsrc/vstreamsink on real devices,
 * run inside the test guest by tests/vm/suite.sh.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Environment: VSTREAM_OUT (a vstream output node), VSTREAM_CAP and
 * VSTREAM_CAP2 (its capture nodes), VSTREAM_VIVID (a vivid capture node).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <linux/videodev2.h>
#include <gst/gst.h>
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/app/gstappsrc.h>
#include <gst/video/video.h>

#include "gst-check-helpers.h"

#define W 320
#define H 240

static const gchar *out_dev, *cap_dev, *cap2_dev, *vivid_dev;
static const gchar *out1_dev, *cap1_dev;  /* a second pipe */

/* A test whose device is not there fails, naming it: CI always has them
 * (vivid is part of Debian's kernel), and a test that returns early would
 * count as passed.  VSTREAM_ALLOW_SKIP=1 makes it a visible SKIP instead,
 * for a partial setup by hand. */
static gboolean
need_ (const gchar * dev, const gchar * what, const gchar * test)
{
  if (dev && *dev)
    return TRUE;
  fail_unless (g_getenv ("VSTREAM_ALLOW_SKIP") != NULL,
      "missing %s (VSTREAM_ALLOW_SKIP=1 to skip)", what);
  g_print ("SKIP: %s: missing %s\n", test, what);
  return FALSE;
}

#define need(dev, what) need_ (dev, what, G_STRFUNC)

/* ------------------------------------------------------------------ */
/* producers */

typedef struct
{
  GstElement *pipe;
  GstElement *sink;
  GThread *thread;
  GstElement *appsrc;
  GstCaps *caps;
  gboolean stop;
  gsize size;
  gboolean alternate;
  GstCaps *next_caps;           /* handed to the pushing thread */
} Producer;

static guint8
pat (guint32 frame, gsize i)
{
  return (guint8) (i * 131 + frame * 7 + (i >> 9));
}

static gpointer
push_frames (gpointer data)
{
  Producer *p = data;
  guint32 frame;

  for (frame = 0; !g_atomic_int_get (&p->stop); frame++) {
    GstCaps *next = g_atomic_pointer_exchange (&p->next_caps, NULL);

    /* renegotiate mid-stream: new caps, new frame size */
    if (next) {
      GstVideoInfo info;

      fail_unless (gst_video_info_from_caps (&info, next));
      gst_app_src_set_caps (GST_APP_SRC (p->appsrc), next);
      p->size = GST_VIDEO_INFO_SIZE (&info);
      gst_caps_unref (next);
    }
    GstBuffer *buf = gst_buffer_new_allocate (NULL, p->size, NULL);
    GstMapInfo map;
    gsize i;

    gst_buffer_map (buf, &map, GST_MAP_WRITE);
    for (i = 0; i < map.size; i++)
      map.data[i] = pat (frame, i);
    memcpy (map.data, &frame, 4);
    gst_buffer_unmap (buf, &map);
    GST_BUFFER_PTS (buf) = frame * GST_SECOND / 60;
    if (p->alternate)
      GST_BUFFER_FLAG_SET (buf, (frame & 1) ? GST_VIDEO_BUFFER_FLAG_BOTTOM_FIELD
          : GST_VIDEO_BUFFER_FLAG_TOP_FIELD);
    if (gst_app_src_push_buffer (GST_APP_SRC (p->appsrc), buf) != GST_FLOW_OK)
      break;
  }
  return NULL;
}

static void
wait_streaming (Producer * p)
{
  gint i;

  for (i = 0; i < 600 && stat_of (p->sink, "frames") < 2; i++)
    g_usleep (100 * 1000);
  fail_unless (stat_of (p->sink, "frames") >= 2, "producer never streamed");
}

/* A pipeline ending in a sink named "sink" on the output node. */
static Producer *
producer_start (const gchar * desc)
{
  Producer *p = g_new0 (Producer, 1);
  GError *err = NULL;

  p->pipe = gst_parse_launch (desc, &err);
  fail_unless (p->pipe != NULL, "parse %s: %s", desc, err ? err->message : "");
  p->sink = gst_bin_get_by_name (GST_BIN (p->pipe), "sink");
  p->appsrc = gst_bin_get_by_name (GST_BIN (p->pipe), "src");
  fail_unless (gst_element_set_state (p->pipe, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  return p;
}

static Producer *
producer_appsrc (const gchar * caps_str, const gchar * sink_props)
{
  gchar *desc = g_strdup_printf ("appsrc name=src is-live=true format=time "
      "block=true max-bytes=2000000 caps=\"%s\" ! vstreamsink name=sink "
      "device=%s sync=false %s", caps_str, out_dev, sink_props);
  Producer *p = producer_start (desc);
  GstCaps *caps = gst_caps_from_string (caps_str);
  GstVideoInfo info;

  g_free (desc);
  fail_unless (gst_video_info_from_caps (&info, caps));
  p->size = GST_VIDEO_INFO_SIZE (&info);
  p->alternate = GST_VIDEO_INFO_INTERLACE_MODE (&info) ==
      GST_VIDEO_INTERLACE_MODE_ALTERNATE;
  p->caps = caps;
  p->thread = g_thread_new ("producer", push_frames, p);
  return p;
}

static void
producer_stop (Producer * p)
{
  GstMessage *msg;
  GstBus *bus = gst_element_get_bus (p->pipe);

  g_atomic_int_set (&p->stop, 1);
  gst_element_set_state (p->pipe, GST_STATE_NULL);
  if (p->thread)
    g_thread_join (p->thread);
  /* an error from the producer fails the test */
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  if (msg) {
    GError *err;
    gchar *dbg;

    gst_message_parse_error (msg, &err, &dbg);
    fail ("producer error: %s (%s)", err->message, dbg);
  }
  gst_object_unref (bus);
  gst_clear_object (&p->sink);
  gst_clear_object (&p->appsrc);
  gst_caps_replace (&p->caps, NULL);
  gst_object_unref (p->pipe);
  g_free (p);
}

/* ------------------------------------------------------------------ */
/* checks */

static GstBuffer *
reference_frame (const gchar * caps_str)
{
  gchar *desc = g_strdup_printf ("videotestsrc pattern=colors num-buffers=1 ! "
      "capsfilter caps=\"%s\"", caps_str);
  GstHarness *h = gst_harness_new_parse (desc);
  GstBuffer *buf;

  g_free (desc);
  gst_harness_play (h);
  buf = gst_harness_pull (h);
  gst_harness_teardown (h);
  return buf;
}

/* Plane by plane, line by line: strides may differ, pixels may not. */
static void
assert_same_picture (GstBuffer * got, GstBuffer * want, GstCaps * caps)
{
  GstVideoInfo info;
  GstVideoFrame a, b;
  guint p, y;

  fail_unless (gst_video_info_from_caps (&info, caps));
  fail_unless (gst_video_frame_map (&a, &info, got, GST_MAP_READ));
  fail_unless (gst_video_frame_map (&b, &info, want, GST_MAP_READ));
  for (p = 0; p < GST_VIDEO_FRAME_N_PLANES (&a); p++) {
    guint comp[GST_VIDEO_MAX_COMPONENTS];
    guint row, rows;

    gst_video_format_info_component (info.finfo, p, (gint *) comp);
    row = GST_VIDEO_FRAME_COMP_WIDTH (&a, comp[0]) *
        GST_VIDEO_FRAME_COMP_PSTRIDE (&a, comp[0]);
    rows = GST_VIDEO_FRAME_COMP_HEIGHT (&a, comp[0]);
    for (y = 0; y < rows; y++)
      fail_unless (memcmp ((guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&a, p) +
              y * GST_VIDEO_FRAME_PLANE_STRIDE (&a, p),
              (guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&b, p) +
              y * GST_VIDEO_FRAME_PLANE_STRIDE (&b, p), row) == 0,
          "plane %u line %u differs", p, y);
  }
  gst_video_frame_unmap (&a);
  gst_video_frame_unmap (&b);
}

/* Pull @n frames from @h: each must be there and be @want's picture. */
static void
pull_same_pictures (GstHarness * h, gint n, GstBuffer * want, GstCaps * caps)
{
  gint i;

  for (i = 0; i < n; i++) {
    GstBuffer *b = gst_harness_pull (h);

    fail_unless (b != NULL, "frame %d did not come", i);
    assert_same_picture (b, want, caps);
    gst_buffer_unref (b);
  }
}

/* A frame from push_frames(): carries its number, the rest follows. */
static void
assert_pattern (GstBuffer * got, gsize size)
{
  assert_numbered_frame (got, size, pat);
}

static GstHarness *
consumer (const gchar * src_desc, const gchar * caps_str)
{
  gchar *desc = g_strdup_printf ("%s ! capsfilter caps=\"%s\"", src_desc,
      caps_str);
  GstHarness *h = gst_harness_new_parse (desc);

  g_free (desc);
  gst_harness_play (h);
  return h;
}

/* ------------------------------------------------------------------ */
/* tests */

#define YUY2 "video/x-raw,format=YUY2,width=320,height=240,framerate=30/1"

GST_START_TEST (test_mmap_zero_copy)
{
  gchar *desc = g_strdup_printf ("videotestsrc pattern=colors is-live=true ! " YUY2
      " ! vstreamsink name=sink io-mode=mmap device=%s", out_dev);
  Producer *p = producer_start (desc);
  GstBuffer *ref = reference_frame (YUY2);
  GstCaps *caps = gst_caps_from_string (YUY2);
  gchar *src = g_strdup_printf ("vstreamsrc io-mode=mmap device=%s", cap_dev);
  GstHarness *h;
  GstElement *vsrc;
  gint i;

  wait_streaming (p);
  /* each push waits for the test's pull: a harness queueing frames the
   * test has not pulled yet (a slow guest: TCG, the debug kernel) holds
   * the driver's buffers, and the source then rightly copies */
  h = gst_harness_new_parse (src);
  gst_harness_set_sink_caps_str (h, YUY2);
  gst_harness_set_blocking_push_mode (h);
  gst_harness_play (h);
  for (i = 0; i < 10; i++) {
    GstBuffer *b = gst_harness_pull (h);

    fail_unless (b != NULL);
    fail_unless (gst_memory_is_type (gst_buffer_peek_memory (b, 0),
            "VstreamMemory"), "not the driver's memory");
    assert_same_picture (b, ref, caps);
    gst_buffer_unref (b);
  }
  vsrc = harness_element (h, "vstreamsrc");
  fail_unless_equals_uint64 (stat_of (vsrc, "copies"), 0);
  fail_unless (stat_of (vsrc, "zero-copy") >= 10);
  fail_unless_equals_uint64 (stat_of (p->sink, "copies"), 0);
  fail_unless (stat_of (p->sink, "zero-copy") >= 10);
  GST_INFO ("sink %" G_GUINT64_FORMAT " frames, 0 copies",
      stat_of (p->sink, "frames"));
  gst_object_unref (vsrc);
  gst_harness_teardown (h);
  producer_stop (p);
  gst_buffer_unref (ref);
  gst_caps_unref (caps);
  g_free (src);
  g_free (desc);
}

GST_END_TEST;

/* What sits between a producer and vstreamsink in real pipelines: each
 * hands the sink buffers from a thread of its own while upstream renders
 * into (waits for) the sink pool's driver buffers.  A source that is not
 * live (a file, a decoder) runs ahead until all of them are out in the
 * queue.  The producer must go on past the pool's buffer count and its
 * picture reach a reader. */
static const struct
{
  const gchar *between;
  const gchar *io_mode;
} shapes[] = {
  {"queue", "mmap"},
  {"queue", "dmabuf"},
  {"queue", "userptr"},
  {"queue max-size-buffers=1", "mmap"},
  {"tee name=t ! queue", "mmap"},
  {"multiqueue", "mmap"},
};

GST_START_TEST (test_sink_pipeline_shapes)
{
  gboolean tee = g_str_has_prefix (shapes[__i__].between, "tee");
  gchar *desc = g_strdup_printf ("videotestsrc pattern=colors ! "
      YUY2 " ! %s ! vstreamsink name=sink io-mode=%s device=%s%s",
      shapes[__i__].between, shapes[__i__].io_mode, out_dev,
      tee ? " t. ! queue ! fakesink" : "");
  Producer *p = producer_start (desc);
  GstBuffer *ref = reference_frame (YUY2);
  GstCaps *caps = gst_caps_from_string (YUY2);
  gchar *src = g_strdup_printf ("vstreamsrc device=%s", cap_dev);
  GstHarness *h;
  gint i;

  GST_INFO ("%s", desc);
  /* a second at 30 fps: far past the pool's buffers (it stopped at 4) */
  for (i = 0; i < 600 && stat_of (p->sink, "frames") < 30; i++)
    g_usleep (100 * 1000);
  fail_unless (stat_of (p->sink, "frames") >= 30, "%s: the sink stopped at "
      "%" G_GUINT64_FORMAT " frames", desc, stat_of (p->sink, "frames"));
  h = consumer (src, YUY2);
  pull_same_pictures (h, 5, ref, caps);
  gst_harness_teardown (h);
  producer_stop (p);
  gst_buffer_unref (ref);
  gst_caps_unref (caps);
  g_free (src);
  g_free (desc);
}

GST_END_TEST;

/* A variable-rate producer (framerate=0/1, as RTP depayloaders, screen
 * capture and appsrc send) feeds the pipe; a reader gets its frames
 * bit-exact and a nominal rate it can use (the node's own). */
GST_START_TEST (test_variable_rate)
{
  Producer *p = producer_appsrc ("video/x-raw,format=YUY2,width=320,"
      "height=240,framerate=0/1,interlace-mode=progressive", "io-mode=mmap");
  gchar *src = g_strdup_printf ("vstreamsrc device=%s", cap_dev);
  GstHarness *h;
  GstCaps *caps;
  gint i, fps_n = 0, fps_d = 0;

  wait_streaming (p);
  h = consumer (src, "video/x-raw,format=YUY2,width=320,height=240");
  for (i = 0; i < 6; i++) {
    GstBuffer *b = gst_harness_pull (h);

    fail_unless (b != NULL);
    assert_pattern (b, p->size);
    gst_buffer_unref (b);
  }
  caps = gst_pad_get_current_caps (h->sinkpad);
  fail_unless (gst_structure_get_fraction (gst_caps_get_structure (caps, 0),
          "framerate", &fps_n, &fps_d));
  fail_unless (fps_n > 0 && fps_d > 0, "the reader sees %d/%d fps", fps_n,
      fps_d);
  gst_caps_unref (caps);
  gst_harness_teardown (h);
  producer_stop (p);
  g_free (src);
}

GST_END_TEST;

static const gchar *sink_modes[] = { "mmap", "userptr", "rw" };
static const gchar *src_modes[] = { "mmap", "userptr", "dmabuf", "rw" };

GST_START_TEST (test_io_modes)
{
  const gchar *smode = sink_modes[__i__ / G_N_ELEMENTS (src_modes)];
  const gchar *cmode = src_modes[__i__ % G_N_ELEMENTS (src_modes)];
  gchar *props = g_strdup_printf ("io-mode=%s", smode);
  gchar *caps = g_strdup_printf ("%s,interlace-mode=progressive", YUY2);
  Producer *p = producer_appsrc (caps, props);
  gchar *src = g_strdup_printf ("vstreamsrc io-mode=%s device=%s", cmode,
      cap_dev);
  GstHarness *h;
  gint i;

  GST_INFO ("sink %s -> src %s", smode, cmode);
  wait_streaming (p);
  h = consumer (src, YUY2);
  for (i = 0; i < 6; i++) {
    GstBuffer *b = gst_harness_pull (h);

    fail_unless (b != NULL);
    assert_pattern (b, p->size);
    gst_buffer_unref (b);
  }
  if (g_str_equal (smode, "userptr"))
    fail_unless (stat_of (p->sink, "zero-copy") > 0, "userptr not imported");
  gst_harness_teardown (h);
  producer_stop (p);
  g_free (src);
  g_free (caps);
  g_free (props);
}

GST_END_TEST;

static const gchar *formats[] = { "NV12", "I420", "YV12", "NV16", "Y42B",
  "GRAY8", "BGRx", "RGBA", "RGB", "RGB16", "UYVY"
};

GST_START_TEST (test_formats)
{
  gchar *caps = g_strdup_printf ("video/x-raw,format=%s,width=320,height=240,"
      "framerate=30/1", formats[__i__]);
  gchar *desc = g_strdup_printf ("videotestsrc pattern=colors is-live=true ! %s ! "
      "vstreamsink name=sink device=%s", caps, out_dev);
  Producer *p = producer_start (desc);
  GstBuffer *ref = reference_frame (caps);
  GstCaps *c = gst_caps_from_string (caps);
  gchar *src = g_strdup_printf ("vstreamsrc device=%s", cap_dev);
  GstHarness *h;

  wait_streaming (p);
  h = consumer (src, caps);
  pull_same_pictures (h, 1, ref, c);
  fail_unless_equals_uint64 (stat_of (p->sink, "copies"), 0);
  gst_harness_teardown (h);
  producer_stop (p);
  gst_buffer_unref (ref);
  gst_caps_unref (c);
  g_free (src);
  g_free (desc);
  g_free (caps);
}

GST_END_TEST;

static const gchar *interlace[][2] = {
  {"interleaved", "top-field-first"},
  {"interleaved", "bottom-field-first"},
  {"fields", "top-field-first"},
  {"fields", "bottom-field-first"},
  {"alternate", NULL},
};

GST_START_TEST (test_interlace_modes)
{
  const gchar *mode = interlace[__i__][0], *order = interlace[__i__][1];
  gboolean alt = g_str_equal (mode, "alternate");
  gchar *caps = g_strdup_printf ("video/x-raw%s,format=YUY2,width=320,"
      "height=240,framerate=60/1,interlace-mode=%s%s%s",
      alt ? "(format:Interlaced)" : "", mode, order ? ",field-order=" : "",
      order ? order : "");
  Producer *p = producer_appsrc (caps, "");
  gchar *src = g_strdup_printf ("vstreamsrc device=%s", cap_dev);
  GstHarness *h;
  GstCaps *got;
  gint i, tops = 0, bottoms = 0;

  GST_INFO ("caps %s", caps);
  wait_streaming (p);
  h = consumer (src, caps);
  for (i = 0; i < 8; i++) {
    GstBuffer *b = gst_harness_pull (h);

    fail_unless (b != NULL);
    assert_pattern (b, p->size);
    if (alt) {
      guint32 frame;

      gst_buffer_extract (b, 0, &frame, 4);
      /* the producer flags odd frames bottom: the flag must travel */
      if (GST_BUFFER_FLAG_IS_SET (b, GST_VIDEO_BUFFER_FLAG_TFF)) {
        fail_unless (!(frame & 1));
        tops++;
      } else {
        fail_unless (frame & 1);
        bottoms++;
      }
    } else {
      fail_unless (GST_BUFFER_FLAG_IS_SET (b, GST_VIDEO_BUFFER_FLAG_INTERLACED));
      fail_unless_equals_int (! !GST_BUFFER_FLAG_IS_SET (b,
              GST_VIDEO_BUFFER_FLAG_TFF), g_str_equal (order,
              "top-field-first"));
    }
    gst_buffer_unref (b);
  }
  if (alt)
    fail_unless (tops > 0 && bottoms > 0);
  got = gst_pad_get_current_caps (h->sinkpad);
  /* the writer's caps, plus the colorimetry the device states */
  fail_unless (gst_caps_is_subset (got, p->caps), "negotiated %"
      GST_PTR_FORMAT, got);
  gst_caps_unref (got);
  gst_harness_teardown (h);
  producer_stop (p);
  g_free (src);
  g_free (caps);
}

GST_END_TEST;

/* Stock v4l2src reads our capture node. */
GST_START_TEST (test_stock_v4l2src)
{
  gchar *desc = g_strdup_printf ("videotestsrc pattern=colors is-live=true ! " YUY2
      " ! vstreamsink name=sink device=%s", out_dev);
  Producer *p = producer_start (desc);
  GstBuffer *ref = reference_frame (YUY2);
  GstCaps *caps = gst_caps_from_string (YUY2);
  gchar *src = g_strdup_printf ("v4l2src device=%s", cap2_dev);
  GstHarness *h;

  wait_streaming (p);
  h = consumer (src, YUY2);
  pull_same_pictures (h, 3, ref, caps);
  gst_harness_teardown (h);
  producer_stop (p);
  gst_buffer_unref (ref);
  gst_caps_unref (caps);
  g_free (src);
  g_free (desc);
}

GST_END_TEST;

/* Stock v4l2sink feeds our output node, vstreamsrc reads it. */
GST_START_TEST (test_stock_v4l2sink)
{
  gchar *desc = g_strdup_printf ("videotestsrc pattern=colors is-live=true ! " YUY2
      " ! v4l2sink name=v4l2 device=%s", out_dev);
  GError *err = NULL;
  GstElement *pipe = gst_parse_launch (desc, &err);
  GstBuffer *ref = reference_frame (YUY2);
  GstCaps *caps = gst_caps_from_string (YUY2);
  gchar *src = g_strdup_printf ("vstreamsrc device=%s", cap_dev);
  GstHarness *h;
  gint i;

  fail_unless (pipe != NULL);
  fail_unless (gst_element_set_state (pipe, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  /* wait for the producer's format to lock the pipe */
  for (i = 0; i < 100; i++) {
    GstElement *probe = gst_element_factory_make ("vstreamsrc", NULL);
    GstCaps *c;

    g_object_set (probe, "device", cap_dev, NULL);
    gst_element_set_state (probe, GST_STATE_READY);
    c = gst_pad_query_caps (gst_element_get_static_pad (probe, "src"), NULL);
    gst_element_set_state (probe, GST_STATE_NULL);
    gst_object_unref (probe);
    if (gst_caps_get_size (c) == 1 && gst_caps_is_fixed (c)) {
      gst_caps_unref (c);
      break;
    }
    gst_caps_unref (c);
    g_usleep (100 * 1000);
  }
  g_usleep (500 * 1000);
  h = consumer (src, YUY2);
  pull_same_pictures (h, 1, ref, caps);
  gst_harness_teardown (h);
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (pipe);
  gst_buffer_unref (ref);
  gst_caps_unref (caps);
  g_free (src);
  g_free (desc);
}

GST_END_TEST;

GST_START_TEST (test_vivid_source)
{
  gchar *src;
  GstHarness *h;
  gint i;

  if (!need (vivid_dev, "VSTREAM_VIVID (a vivid capture node)"))
    return;
  src = g_strdup_printf ("vstreamsrc device=%s", vivid_dev);
  h = consumer (src, "video/x-raw,format=YUY2,width=640,height=480");
  for (i = 0; i < 3; i++) {
    GstBuffer *b = gst_harness_pull (h);

    fail_unless (b != NULL);
    fail_unless_equals_uint64 (gst_buffer_get_size (b), 640 * 480 * 2);
    gst_buffer_unref (b);
  }
  gst_harness_teardown (h);
  g_free (src);
}

GST_END_TEST;

/* Downstream keeps every buffer: the source copies instead of starving. */
GST_START_TEST (test_held_buffers)
{
  gchar *desc = g_strdup_printf ("videotestsrc pattern=colors is-live=true ! " YUY2
      " ! vstreamsink name=sink device=%s", out_dev);
  Producer *p = producer_start (desc);
  gchar *src = g_strdup_printf ("vstreamsrc device=%s min-buffers=3",
      cap_dev);
  GstBuffer *held[12];
  GstHarness *h;
  GstElement *vsrc;
  gint i;

  wait_streaming (p);
  h = consumer (src, YUY2);
  for (i = 0; i < 12; i++) {
    held[i] = gst_harness_pull (h);
    fail_unless (held[i] != NULL, "starved after %d held buffers", i);
  }
  vsrc = harness_element (h, "vstreamsrc");
  fail_unless (stat_of (vsrc, "copies") >= 9, "copies %" G_GUINT64_FORMAT,
      stat_of (vsrc, "copies"));
  for (i = 0; i < 12; i++)
    gst_buffer_unref (held[i]);
  gst_object_unref (vsrc);
  gst_harness_teardown (h);
  producer_stop (p);
  g_free (src);
  g_free (desc);
}

GST_END_TEST;

/* An application holds samples past the reader's pipeline: the frames
 * come through a tee and a videorate that duplicates them (its output
 * buffers are shallow copies of the frame it keeps, so they share the
 * driver buffer's memory), while the producer animates.  Each held sample
 * keeps the bytes it had when pulled: while the source goes on, after
 * the pipeline is gone, and after the producer stops. */
/* videotestsrc pattern=ball draws on black: most of the top line of a
 * YUY2 frame is black (Y 16), where the kernel's idle pattern (75 %
 * colour bars) has one black bar in eight. */
static gboolean
is_ball_picture (GstSample * sample)
{
  GstMapInfo map;
  gsize i, black = 0, width;

  fail_unless (gst_buffer_map (gst_sample_get_buffer (sample), &map,
          GST_MAP_READ));
  width = MIN (map.size, 320 * 2) / 2;
  for (i = 0; i < width; i++)
    black += map.data[2 * i] <= 20;
  gst_buffer_unmap (gst_sample_get_buffer (sample), &map);
  return black * 2 > width;
}

GST_START_TEST (test_samples_outlive_reader)
{
  gchar *desc = g_strdup_printf ("videotestsrc pattern=ball is-live=true ! "
      YUY2 " ! vstreamsink name=sink device=%s", out_dev);
  gchar *rdesc = g_strdup_printf ("vstreamsrc device=%s ! " YUY2
      " ! tee name=t ! queue ! videorate ! video/x-raw,framerate=60/1 "
      "! appsink name=app max-buffers=1  t. ! queue ! fakesink", cap_dev);
  Producer *p = producer_start (desc);
  GstElement *reader, *app;
  GstSample *samples[10];
  guint32 sums[10];
  gint i;

  wait_streaming (p);
  reader = gst_parse_launch (rdesc, NULL);
  fail_unless (reader != NULL);
  app = gst_bin_get_by_name (GST_BIN (reader), "app");
  fail_unless (gst_element_set_state (reader, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  pull_samples (app, samples, sums, 10);
  for (i = 0; i < 10; i++)
    fail_unless (is_ball_picture (samples[i]),
        "sample %d is not the producer's picture", i);
  fail_unless (shared_driver_frames (samples, 10) > 0,
      "videorate duplicated no driver buffer");
  /* the source cycles through its buffers meanwhile, never stalling */
  pull_and_drop_samples (app, 20);
  assert_samples_unchanged (samples, sums, 10, "while the reader ran");
  fail_unless (gst_element_set_state (reader, GST_STATE_NULL) ==
      GST_STATE_CHANGE_SUCCESS);
  gst_object_unref (app);
  gst_object_unref (reader);
  g_usleep (G_USEC_PER_SEC / 2);        /* the ball moves on */
  assert_samples_unchanged (samples, sums, 10, "after the reader's teardown");
  producer_stop (p);
  assert_samples_unchanged (samples, sums, 10, "after the producer stopped");
  for (i = 0; i < 10; i++)
    gst_sample_unref (samples[i]);
  g_free (rdesc);
  g_free (desc);
}

GST_END_TEST;

/* The next error on @bus comes within @timeout and names @what. */
static void
assert_bus_error_names (GstBus * bus, GstClockTime timeout, const gchar * what,
    const gchar * context)
{
  GstMessage *msg = gst_bus_timed_pop_filtered (bus, timeout,
      GST_MESSAGE_ERROR);
  GError *err = NULL;
  gchar *dbg = NULL;

  fail_unless (msg != NULL, "no error within %" GST_TIME_FORMAT " for %s",
      GST_TIME_ARGS (timeout), context);
  gst_message_parse_error (msg, &err, &dbg);
  fail_unless (strstr (err->message, what) != NULL, "'%s' does not name %s",
      err->message, what);
  g_error_free (err);
  g_free (dbg);
  gst_message_unref (msg);
}

static void
assert_error_names (const gchar * desc, const gchar * what)
{
  GstElement *pipe = gst_parse_launch (desc, NULL);
  GstBus *bus = gst_element_get_bus (pipe);

  gst_element_set_state (pipe, GST_STATE_PLAYING);
  assert_bus_error_names (bus, GST_SECOND, what, desc);
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (pipe);
}

GST_START_TEST (test_errors)
{
  gchar *d;

  assert_error_names ("vstreamsrc device=/dev/nonexistent ! fakesink",
      "/dev/nonexistent");
  d = g_strdup_printf ("vstreamsrc device=%s ! fakesink", out_dev);
  assert_error_names (d, out_dev);      /* an output node is no source */
  g_free (d);
  d = g_strdup_printf ("videotestsrc ! vstreamsink device=%s", cap_dev);
  assert_error_names (d, cap_dev);
  g_free (d);
  /* caps the device lacks (it stops at 1920x1088) */
  d = g_strdup_printf ("vstreamsrc device=%s ! video/x-raw,width=4000,"
      "height=3000 ! fakesink", cap_dev);
  assert_error_names (d, cap_dev);
  g_free (d);
  /* busy: another program owns the node's buffers with another format */
  {
    struct v4l2_format f = {.type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
    struct v4l2_requestbuffers r = {.count = 2,
      .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_MMAP
    };
    int fd = open (cap_dev, O_RDWR);

    fail_unless (fd >= 0);
    f.fmt.pix.width = 176;
    f.fmt.pix.height = 144;
    f.fmt.pix.pixelformat = V4L2_PIX_FMT_YUYV;
    fail_unless (ioctl (fd, VIDIOC_S_FMT, &f) == 0);
    fail_unless (ioctl (fd, VIDIOC_REQBUFS, &r) == 0);
    d = g_strdup_printf ("vstreamsrc device=%s ! video/x-raw,width=320,"
        "height=240 ! fakesink", cap_dev);
    assert_error_names (d, cap_dev);
    g_free (d);
    close (fd);
  }
}

GST_END_TEST;

/* The producer changes format mid-stream: the sink drains, frees its
 * buffers, sets the new format and goes on; a new reader gets it. */
GST_START_TEST (test_sink_renegotiates)
{
  Producer *p = producer_appsrc ("video/x-raw,format=YUY2,width=320,"
      "height=240,framerate=60/1", "");
  gchar *src = g_strdup_printf ("vstreamsrc device=%s", cap_dev);
  const gchar *b_str = "video/x-raw,format=NV12,width=640,height=480,"
      "framerate=60/1";
  GstHarness *h;
  GstBuffer *b;
  GstPad *pad;
  guint64 before;
  gint i;

  wait_streaming (p);
  h = consumer (src, "video/x-raw,format=YUY2,width=320,height=240");
  b = gst_harness_pull (h);
  assert_pattern (b, 320 * 240 * 2);
  gst_buffer_unref (b);
  gst_harness_teardown (h);

  g_atomic_pointer_set (&p->next_caps, gst_caps_from_string (b_str));
  /* frames queued before the new caps still drain in the old format */
  pad = gst_element_get_static_pad (p->sink, "sink");
  for (i = 0; i < 600; i++) {
    GstCaps *cur = gst_pad_get_current_caps (pad);
    gboolean switched = cur && gst_structure_has_field_typed
        (gst_caps_get_structure (cur, 0), "format", G_TYPE_STRING) &&
        g_str_equal (gst_structure_get_string (gst_caps_get_structure (cur,
                0), "format"), "NV12");

    gst_clear_caps (&cur);
    if (switched)
      break;
    g_usleep (100 * 1000);
  }
  gst_object_unref (pad);
  before = stat_of (p->sink, "frames");
  for (i = 0; i < 600 && stat_of (p->sink, "frames") < before + 10; i++)
    g_usleep (100 * 1000);
  fail_unless (stat_of (p->sink, "frames") >= before + 10,
      "sink stopped after renegotiation");
  h = consumer (src, b_str);
  for (i = 0; i < 3; i++) {
    b = gst_harness_pull (h);
    fail_unless (b != NULL);
    assert_pattern (b, 640 * 480 * 3 / 2);
    gst_buffer_unref (b);
  }
  gst_harness_teardown (h);
  producer_stop (p);
  g_free (src);
}

GST_END_TEST;

/* A reader stops and starts again on a live pipe. */
GST_START_TEST (test_reader_restart)
{
  gchar *desc = g_strdup_printf ("videotestsrc pattern=colors is-live=true ! "
      YUY2 " ! vstreamsink name=sink device=%s", out_dev);
  Producer *p = producer_start (desc);
  GstBuffer *ref = reference_frame (YUY2);
  GstCaps *caps = gst_caps_from_string (YUY2);
  gchar *src = g_strdup_printf ("vstreamsrc device=%s", cap_dev);
  gint round;

  wait_streaming (p);
  for (round = 0; round < 3; round++) {
    GstHarness *h = consumer (src, YUY2);

    GST_INFO ("round %d", round);
    pull_same_pictures (h, 3, ref, caps);
    gst_harness_teardown (h);
  }
  producer_stop (p);
  gst_buffer_unref (ref);
  gst_caps_unref (caps);
  g_free (src);
  g_free (desc);
}

GST_END_TEST;

/* The producer comes back with another format while vstreamsrc plays: the
 * source hears SOURCE_CHANGE, renegotiates and carries the new pictures. */
GST_START_TEST (test_source_change)
{
  const gchar *big = "video/x-raw,format=YUY2,width=640,height=480,"
      "framerate=30/1";
  gchar *d1 = g_strdup_printf ("videotestsrc pattern=colors is-live=true ! "
      YUY2 " ! vstreamsink name=sink device=%s", out_dev);
  gchar *d2 = g_strdup_printf ("videotestsrc pattern=colors is-live=true ! "
      "%s ! vstreamsink name=sink device=%s", big, out_dev);
  gchar *src = g_strdup_printf ("vstreamsrc device=%s", cap_dev);
  GstBuffer *ref = reference_frame (big), *ref_small = reference_frame (YUY2);
  GstCaps *bigcaps = gst_caps_from_string (big);
  GstCaps *smallcaps = gst_caps_from_string (YUY2);
  Producer *p = producer_start (d1);
  GstHarness *h;
  GstBuffer *b, *last;
  GstCaps *c;
  gint i, width = 0;

  wait_streaming (p);
  h = gst_harness_new_parse (src);
  gst_harness_play (h);
  /* kept through the change, as a video sink keeps its last frame: the
   * source must free the driver's buffers without waiting for it */
  last = gst_harness_pull (h);
  c = gst_pad_get_current_caps (h->sinkpad);
  gst_structure_get_int (gst_caps_get_structure (c, 0), "width", &width);
  fail_unless_equals_int (width, 320);
  gst_caps_unref (c);

  producer_stop (p);
  p = producer_start (d2);
  wait_streaming (p);
  /* judge each buffer by its own size: the pad's caps run ahead of the
   * small buffers still queued in the harness */
  for (i = 0; i < 300 && width != 640; i++) {
    b = gst_harness_pull (h);
    fail_unless (b != NULL);
    if (gst_buffer_get_size (b) >= 640 * 480 * 2)
      width = 640;
    gst_buffer_unref (b);
  }
  fail_unless_equals_int (width, 640);
  c = gst_pad_get_current_caps (h->sinkpad);
  gst_structure_get_int (gst_caps_get_structure (c, 0), "width", &width);
  gst_caps_unref (c);
  fail_unless_equals_int (width, 640);
  /* a few frames on, the pictures are the new producer's */
  for (i = 0; i < 3; i++)
    gst_buffer_unref (gst_harness_pull (h));
  b = gst_harness_pull (h);
  assert_same_picture (b, ref, bigcaps);
  gst_buffer_unref (b);
  /* the old frame's memory outlived its driver buffer, untouched */
  assert_same_picture (last, ref_small, smallcaps);
  gst_buffer_unref (last);

  gst_harness_teardown (h);
  producer_stop (p);
  gst_buffer_unref (ref);
  gst_buffer_unref (ref_small);
  gst_caps_unref (bigcaps);
  gst_caps_unref (smallcaps);
  g_free (src);
  g_free (d1);
  g_free (d2);
}

GST_END_TEST;

/* Answer the allocation query at the harness with @data, a plain video
 * pool, as a downstream element with its own pool would. */
static GstPadProbeReturn
offer_pool (GstPad * pad, GstPadProbeInfo * info, gpointer data)
{
  GstQuery *q = GST_PAD_PROBE_INFO_QUERY (info);

  if (GST_QUERY_TYPE (q) == GST_QUERY_ALLOCATION)
    gst_query_add_allocation_pool (q, GST_BUFFER_POOL (data), 0, 0, 0);
  return GST_PAD_PROBE_OK;
}

/* A colors producer on pipe 0 and a userptr reader whose downstream (the
 * harness) offers @offered. */
typedef struct
{
  Producer *p;
  GstHarness *h;
  GstBuffer *ref;
  GstCaps *caps;
} Offer;

static void
offer_start (Offer * o, GstBufferPool * offered)
{
  gchar *desc = g_strdup_printf ("videotestsrc pattern=colors is-live=true ! "
      YUY2 " ! vstreamsink name=sink device=%s", out_dev);
  gchar *src = g_strdup_printf ("vstreamsrc io-mode=userptr device=%s ! "
      "capsfilter caps=\"" YUY2 "\"", cap_dev);

  o->p = producer_start (desc);
  o->ref = reference_frame (YUY2);
  o->caps = gst_caps_from_string (YUY2);
  wait_streaming (o->p);
  o->h = gst_harness_new_parse (src);
  gst_pad_add_probe (o->h->sinkpad, GST_PAD_PROBE_TYPE_QUERY_DOWNSTREAM,
      offer_pool, offered, NULL);
  gst_harness_play (o->h);
  g_free (src);
  g_free (desc);
}

static void
offer_stop (Offer * o)
{
  gst_harness_teardown (o->h);
  producer_stop (o->p);
  gst_buffer_unref (o->ref);
  gst_caps_unref (o->caps);
}

/* io-mode=userptr captures into buffers of the pool downstream offers: the
 * frames arrive in that pool's buffers, bit-exact, with no copy; a
 * downstream holding many of them only makes the source use its own. */
GST_START_TEST (test_userptr_lends)
{
  GstBufferPool *offered = gst_video_buffer_pool_new ();
  GstBuffer *held[12];
  GstElement *vsrc;
  Offer o;
  gint i;

  offer_start (&o, offered);
  for (i = 0; i < 10; i++) {
    GstBuffer *b = gst_harness_pull (o.h);

    fail_unless (b != NULL, "frame %d did not come", i);
    fail_unless (b->pool == offered, "frame %d not in the offered pool", i);
    fail_unless (gst_memory_is_type (gst_buffer_peek_memory (b, 0),
            GST_ALLOCATOR_SYSMEM));
    assert_same_picture (b, o.ref, o.caps);
    gst_buffer_unref (b);
  }
  vsrc = harness_element (o.h, "vstreamsrc");
  fail_unless_equals_uint64 (stat_of (vsrc, "copies"), 0);
  for (i = 0; i < 12; i++) {
    held[i] = gst_harness_pull (o.h);
    fail_unless (held[i] != NULL, "starved after %d held buffers", i);
  }
  for (i = 0; i < 12; i++)
    gst_buffer_unref (held[i]);
  pull_same_pictures (o.h, 3, o.ref, o.caps);
  gst_object_unref (vsrc);
  offer_stop (&o);
  gst_object_unref (offered);
}

GST_END_TEST;

/* A downstream pool whose lines are padded cannot take the driver's
 * frames: the source captures into its own memory, pictures intact. */
GST_START_TEST (test_userptr_unfit_pool)
{
  GstBufferPool *offered = gst_video_buffer_pool_new ();
  GstStructure *config = gst_buffer_pool_get_config (offered);
  GstCaps *caps = gst_caps_from_string (YUY2);
  GstVideoAlignment align;
  GstVideoInfo info;
  Offer o;
  gint i;

  gst_video_alignment_reset (&align);
  align.padding_right = 32;
  fail_unless (gst_video_info_from_caps (&info, caps));
  gst_buffer_pool_config_set_params (config, caps, info.size, 0, 0);
  gst_buffer_pool_config_add_option (config,
      GST_BUFFER_POOL_OPTION_VIDEO_META);
  gst_buffer_pool_config_add_option (config,
      GST_BUFFER_POOL_OPTION_VIDEO_ALIGNMENT);
  gst_buffer_pool_config_set_video_alignment (config, &align);
  fail_unless (gst_buffer_pool_set_config (offered, config));
  offer_start (&o, offered);
  for (i = 0; i < 5; i++) {
    GstBuffer *b = gst_harness_pull (o.h);

    fail_unless (b != NULL, "frame %d did not come", i);
    fail_if (b->pool == offered, "frame %d in a pool of another layout", i);
    assert_same_picture (b, o.ref, o.caps);
    gst_buffer_unref (b);
  }
  offer_stop (&o);
  gst_object_unref (offered);
  gst_caps_unref (caps);
}

GST_END_TEST;

/* What a relay through pipe 1 saw: buffers its sink got, those of a plain
 * video pool, and the copies its source and sink made. */
typedef struct
{
  gint seen;
  gint in_video_pool;
  guint64 src_copies;
  guint64 sink_copies;
  guint64 sink_zero_copy;
} Relay;

/* Count the buffers passing, and those of a plain video pool, i.e. not
 * of a vstream pool. */
static GstPadProbeReturn
count_video_pool_buffers (GstPad * pad, GstPadProbeInfo * info, gpointer data)
{
  GstBuffer *b = GST_PAD_PROBE_INFO_BUFFER (info);
  Relay *r = data;

  g_atomic_int_inc (&r->seen);
  if (b->pool && G_OBJECT_TYPE (b->pool) == GST_TYPE_VIDEO_BUFFER_POOL)
    g_atomic_int_inc (&r->in_video_pool);
  return GST_PAD_PROBE_OK;
}

/*
 * A relay from pipe 0 to pipe 1: vstreamsrc io-mode=@src_mode on pipe 0's
 * capture node ! vstreamsink io-mode=@sink_mode on pipe 1's output node,
 * read on pipe 1: the pictures arrive intact and the relay posts no error.
 */
static void
relay_through_pipe1 (const gchar * src_mode, const gchar * sink_mode,
    Relay * r)
{
  gchar *desc = g_strdup_printf ("videotestsrc pattern=colors is-live=true ! "
      YUY2 " ! vstreamsink name=sink device=%s", out_dev);
  Producer *p = producer_start (desc), *mid;
  GstBuffer *ref = reference_frame (YUY2);
  GstCaps *caps = gst_caps_from_string (YUY2);
  gchar *mid_desc, *src;
  GstElement *vsrc;
  GstHarness *h;
  GstPad *pad;

  memset (r, 0, sizeof (*r));
  wait_streaming (p);
  mid_desc = g_strdup_printf ("vstreamsrc name=vsrc device=%s io-mode=%s ! "
      "vstreamsink name=sink device=%s io-mode=%s sync=false", cap_dev,
      src_mode, out1_dev, sink_mode);
  mid = producer_start (mid_desc);
  pad = gst_element_get_static_pad (mid->sink, "sink");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, count_video_pool_buffers,
      r, NULL);
  wait_streaming (mid);
  src = g_strdup_printf ("vstreamsrc device=%s", cap1_dev);
  h = consumer (src, YUY2);
  pull_same_pictures (h, 3, ref, caps);
  vsrc = gst_bin_get_by_name (GST_BIN (mid->pipe), "vsrc");
  r->src_copies = stat_of (vsrc, "copies");
  r->sink_copies = stat_of (mid->sink, "copies");
  r->sink_zero_copy = stat_of (mid->sink, "zero-copy");
  gst_object_unref (vsrc);
  gst_harness_teardown (h);
  producer_stop (mid);          /* fails the test on a relay error */
  gst_object_unref (pad);
  producer_stop (p);
  gst_buffer_unref (ref);
  gst_caps_unref (caps);
  g_free (src);
  g_free (mid_desc);
  g_free (desc);
}

/* Pipe 0's capture buffers, exported as dma-buf, feed pipe 1's output
 * node without a copy (io-mode=dmabuf ! io-mode=dmabuf-import). */
GST_START_TEST (test_dmabuf_chain)
{
  Relay r;

  if (!need (out1_dev, "VSTREAM_OUT1 (pipe 1's output)") ||
      !need (cap1_dev, "VSTREAM_CAP1 (pipe 1's capture)"))
    return;
  relay_through_pipe1 ("dmabuf", "dmabuf-import", &r);
  fail_unless (r.sink_zero_copy > 0);
  /* the sink copies only after a frame came as no dma-buf: one the
   * source had to copy because the sink held all of its buffers */
  fail_unless (r.sink_copies == 0 || r.src_copies > 0,
      "sink copied %" G_GUINT64_FORMAT " frames, source none", r.sink_copies);
}

GST_END_TEST;

/* Pipe 0's capture node writes straight into memory pipe 1's output node
 * reads (io-mode=userptr ! io-mode=userptr): the sink proposes page-aligned
 * plain memory, the source captures into it, the sink queues it as
 * USERPTR; no copy in user space. */
GST_START_TEST (test_userptr_chain)
{
  Relay r;

  if (!need (out1_dev, "VSTREAM_OUT1 (pipe 1's output)") ||
      !need (cap1_dev, "VSTREAM_CAP1 (pipe 1's capture)"))
    return;
  relay_through_pipe1 ("userptr", "userptr", &r);
  /* every frame the relay passed was captured into the sink's pool */
  fail_unless (r.seen > 0);
  fail_unless_equals_int (r.in_video_pool, r.seen);
  fail_unless_equals_uint64 (r.src_copies, 0);
  fail_unless_equals_uint64 (r.sink_copies, 0);
  fail_unless (r.sink_zero_copy > 0);
}

GST_END_TEST;

/* Whether this kernel pins a read-only mapping of a vb2-vmalloc dma-buf
 * for an output USERPTR, as the sink maps the memory it is given (read
 * only): 6.1 pins every userptr for writing and refuses it (EFAULT);
 * 6.2 and later pin output buffers for reading and take it.  Asked of the
 * kernel itself: pipe 0's capture buffer exported and mapped, queued on
 * pipe 1's output node. */
static gboolean
kernel_pins_dmabuf_mapping (void)
{
  struct v4l2_format f = {.type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
  struct v4l2_requestbuffers rb = {.count = 1,
    .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_MMAP };
  struct v4l2_exportbuffer eb = {.type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
    .flags = O_CLOEXEC };
  struct v4l2_buffer b = {.type = V4L2_BUF_TYPE_VIDEO_OUTPUT,
    .memory = V4L2_MEMORY_USERPTR };
  int cap = open (cap_dev, O_RDWR), out = open (out1_dev, O_RDWR);
  gboolean pins;
  void *map;

  fail_unless (cap >= 0 && out >= 0, "open %s, %s", cap_dev, out1_dev);
  fail_unless (ioctl (cap, VIDIOC_G_FMT, &f) == 0);
  f.type = V4L2_BUF_TYPE_VIDEO_OUTPUT;
  fail_unless (ioctl (out, VIDIOC_S_FMT, &f) == 0);
  fail_unless (ioctl (cap, VIDIOC_REQBUFS, &rb) == 0 && rb.count >= 1);
  fail_unless (ioctl (cap, VIDIOC_EXPBUF, &eb) == 0, "EXPBUF");
  map = mmap (NULL, f.fmt.pix.sizeimage, PROT_READ, MAP_SHARED, eb.fd, 0);
  fail_unless (map != MAP_FAILED, "mmap of the dma-buf: %s", g_strerror (errno));
  rb.type = V4L2_BUF_TYPE_VIDEO_OUTPUT;
  rb.memory = V4L2_MEMORY_USERPTR;
  fail_unless (ioctl (out, VIDIOC_REQBUFS, &rb) == 0);
  b.m.userptr = (unsigned long) map;
  b.length = b.bytesused = f.fmt.pix.sizeimage;
  pins = ioctl (out, VIDIOC_QBUF, &b) == 0;
  GST_INFO ("USERPTR QBUF of a dma-buf mapping: %s", pins ? "taken" :
      g_strerror (errno));
  munmap (map, f.fmt.pix.sizeimage);
  close (eb.fd);
  close (out);
  close (cap);
  return pins;
}

/* A userptr sink given a dma-buf's mapping: where the kernel pins it the
 * frames go without a copy, where it refuses (EFAULT) the sink copies
 * instead of failing; either way the pictures arrive intact. */
GST_START_TEST (test_userptr_unpinnable)
{
  gboolean pins;
  Relay r;

  if (!need (out1_dev, "VSTREAM_OUT1 (pipe 1's output)") ||
      !need (cap1_dev, "VSTREAM_CAP1 (pipe 1's capture)"))
    return;
  pins = kernel_pins_dmabuf_mapping ();
  relay_through_pipe1 ("dmabuf", "userptr", &r);
  if (pins) {
    fail_unless (r.sink_zero_copy > 0, "the kernel pins, yet no frame went "
        "without a copy");
    /* a copy only after the source had to copy (sink held its buffers) */
    fail_unless (r.sink_copies == 0 || r.src_copies > 0);
  } else {
    fail_unless (r.sink_copies > 0, "unpinnable memory, yet no copy");
  }
}

GST_END_TEST;

static const gchar *relay_src_modes[] = { "mmap", "userptr", "dmabuf", "rw" };
static const gchar *relay_sink_modes[] = { "mmap", "userptr", "dmabuf-import",
  "rw"
};

/* Every memory type of a source into every one of a sink, relayed from
 * pipe 0 to pipe 1: pictures intact, no error. */
GST_START_TEST (test_relay_modes)
{
  const gchar *src_mode = relay_src_modes[__i__ / 4];
  const gchar *sink_mode = relay_sink_modes[__i__ % 4];
  Relay r;

  if (!need (out1_dev, "VSTREAM_OUT1 (pipe 1's output)") ||
      !need (cap1_dev, "VSTREAM_CAP1 (pipe 1's capture)"))
    return;
  GST_INFO ("relay src %s -> sink %s", src_mode, sink_mode);
  relay_through_pipe1 (src_mode, sink_mode, &r);
  fail_unless (r.seen > 0);
}

GST_END_TEST;

/* vivid's S-Video input with an NTSC standard samples non-square pixels
 * (CROPCAP pixelaspect 11/10, y/x): the caps say pixel-aspect-ratio=10/11. */
GST_START_TEST (test_pixel_aspect_ratio)
{
  v4l2_std_id ntsc = V4L2_STD_NTSC_M;
  gint input = 2, par_n = 0, par_d = 0, fd;
  gchar *src;
  GstHarness *h;
  GstCaps *c;

  if (!need (vivid_dev, "VSTREAM_VIVID (a vivid capture node)"))
    return;
  fd = open (vivid_dev, O_RDWR);
  fail_unless (fd >= 0);
  fail_unless (ioctl (fd, VIDIOC_S_INPUT, &input) == 0, "S_INPUT 2");
  fail_unless (ioctl (fd, VIDIOC_S_STD, &ntsc) == 0, "S_STD NTSC");
  close (fd);
  src = g_strdup_printf ("vstreamsrc device=%s", vivid_dev);
  h = consumer (src, "video/x-raw,format=YUY2");
  gst_buffer_unref (gst_harness_pull (h));
  c = gst_pad_get_current_caps (h->sinkpad);
  fail_unless (gst_structure_get_fraction (gst_caps_get_structure (c, 0),
          "pixel-aspect-ratio", &par_n, &par_d), "no PAR in %" GST_PTR_FORMAT,
      c);
  fail_unless (par_n == 10 && par_d == 11, "PAR %d/%d", par_n, par_d);
  gst_caps_unref (c);
  gst_harness_teardown (h);
  g_free (src);
  /* back to the webcam input the other vivid tests expect */
  input = 0;
  fd = open (vivid_dev, O_RDWR);
  fail_unless (fd >= 0 && ioctl (fd, VIDIOC_S_INPUT, &input) == 0);
  close (fd);
}

GST_END_TEST;

static const gchar *colorimetries[] = { "bt601", "bt709", "bt2020" };

/* The producer's colorimetry travels through the pipe: the reader's caps
 * say what the writer's said. */
GST_START_TEST (test_colorimetry)
{
  const gchar *want = colorimetries[__i__];
  gchar *desc = g_strdup_printf ("videotestsrc is-live=true ! " YUY2
      ",colorimetry=%s ! vstreamsink name=sink device=%s", want, out_dev);
  Producer *p = producer_start (desc);
  gchar *src = g_strdup_printf ("vstreamsrc device=%s", cap_dev);
  GstHarness *h;
  GstCaps *c;
  const gchar *got;

  wait_streaming (p);
  h = consumer (src, YUY2);
  gst_buffer_unref (gst_harness_pull (h));
  c = gst_pad_get_current_caps (h->sinkpad);
  got = gst_structure_get_string (gst_caps_get_structure (c, 0),
      "colorimetry");
  fail_unless (got != NULL && g_str_equal (got, want), "caps %"
      GST_PTR_FORMAT ", want colorimetry %s", c, want);
  gst_caps_unref (c);
  gst_harness_teardown (h);
  producer_stop (p);
  g_free (src);
  g_free (desc);
}

GST_END_TEST;

/* The device goes away while playing (vivid unbound from its driver): an
 * error naming it within a second, and the pipeline still reaches NULL. */
GST_START_TEST (test_device_vanishes)
{
  GstElement *pipe;
  GstBus *bus;
  gchar *desc;
  gint64 t0;
  int fd;

  if (!need (vivid_dev, "VSTREAM_VIVID (a vivid capture node)"))
    return;
  desc = g_strdup_printf ("vstreamsrc device=%s ! fakesink", vivid_dev);
  pipe = gst_parse_launch (desc, NULL);
  bus = gst_element_get_bus (pipe);
  fail_unless (gst_element_set_state (pipe, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  fail_unless (gst_element_get_state (pipe, NULL, NULL, 20 * GST_SECOND) ==
      GST_STATE_CHANGE_SUCCESS);
  fd = open ("/sys/bus/platform/drivers/vivid/unbind", O_WRONLY);
  fail_unless (fd >= 0);
  t0 = g_get_monotonic_time ();
  fail_unless (write (fd, "vivid.0", 7) == 7);
  close (fd);
  assert_bus_error_names (bus, GST_SECOND, vivid_dev,
      "the device going away");
  fail_unless (g_get_monotonic_time () - t0 < G_USEC_PER_SEC,
      "the error took %" G_GINT64_FORMAT " us",
      g_get_monotonic_time () - t0);
  fail_unless (gst_element_set_state (pipe, GST_STATE_NULL) ==
      GST_STATE_CHANGE_SUCCESS);
  gst_object_unref (bus);
  gst_object_unref (pipe);
  g_free (desc);
}

GST_END_TEST;

static Suite *
gst_pipe_suite (void)
{
  Suite *s = suite_create ("vstream-devices");
  TCase *tc = tcase_create ("pipe");

  out_dev = g_getenv ("VSTREAM_OUT");
  cap_dev = g_getenv ("VSTREAM_CAP");
  cap2_dev = g_getenv ("VSTREAM_CAP2");
  vivid_dev = g_getenv ("VSTREAM_VIVID");
  out1_dev = g_getenv ("VSTREAM_OUT1");
  cap1_dev = g_getenv ("VSTREAM_CAP1");
  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_mmap_zero_copy);
  tcase_add_loop_test (tc, test_sink_pipeline_shapes, 0, G_N_ELEMENTS (shapes));
  tcase_add_test (tc, test_variable_rate);
  tcase_add_loop_test (tc, test_io_modes, 0,
      G_N_ELEMENTS (sink_modes) * G_N_ELEMENTS (src_modes));
  tcase_add_loop_test (tc, test_formats, 0, G_N_ELEMENTS (formats));
  tcase_add_loop_test (tc, test_interlace_modes, 0, G_N_ELEMENTS (interlace));
  tcase_add_test (tc, test_stock_v4l2src);
  tcase_add_test (tc, test_stock_v4l2sink);
  tcase_add_test (tc, test_vivid_source);
  tcase_add_test (tc, test_pixel_aspect_ratio);
  tcase_add_test (tc, test_held_buffers);
  tcase_add_test (tc, test_samples_outlive_reader);
  tcase_add_test (tc, test_errors);
  tcase_add_test (tc, test_sink_renegotiates);
  tcase_add_test (tc, test_reader_restart);
  tcase_add_test (tc, test_source_change);
  tcase_add_test (tc, test_dmabuf_chain);
  tcase_add_test (tc, test_userptr_lends);
  tcase_add_test (tc, test_userptr_unfit_pool);
  tcase_add_test (tc, test_userptr_chain);
  tcase_add_test (tc, test_userptr_unpinnable);
  tcase_add_loop_test (tc, test_colorimetry, 0, G_N_ELEMENTS (colorimetries));
  tcase_add_loop_test (tc, test_relay_modes, 0,
      G_N_ELEMENTS (relay_src_modes) * G_N_ELEMENTS (relay_sink_modes));
  tcase_add_test (tc, test_device_vanishes);     /* last: vivid is gone */
  return s;
}

GST_CHECK_MAIN (gst_pipe);
