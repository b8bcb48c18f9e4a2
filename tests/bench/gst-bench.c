/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * gst-bench: the producer's frames per second reaching the element named
 * "sink" of a consumer pipeline, measured after a warm-up, with an optional
 * producer pipeline playing in the same process (e.g. one feeding a device
 * node the consumer reads), and how long each took to get there.
 *
 *   gst-bench [-p PRODUCER] -c CONSUMER [-t SECONDS] [-w WARMUP_BUFFERS]
 *
 * The element named "stamp" (in the producer, or in the consumer when
 * there is none: an identity) writes a magic number, a sequence number and
 * the monotonic time into the first bytes of every frame it passes.  Only
 * frames that arrive at "sink" with that stamp and a sequence number not
 * seen before count: a device's idle picture, or a frame handed over
 * twice, never does.  Prints "fps=N frames=N foreign=N lat_p50_ms=N
 * lat_p99_ms=N" (foreign: frames without the stamp or seen before; lat:
 * stamp to sink), or "error=..." and exits 1 when a pipeline fails.
 */
#include <gst/gst.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STAMP_MAGIC G_GUINT64_CONSTANT (0x76737472626e6368)     /* "vstrbnch" */

typedef struct {
  GMainLoop *loop;
  guint64 seq;                  /* next stamp */
  guint64 last_seq;             /* newest stamp seen at the sink */
  guint foreign;
  GArray *lat;                  /* gint64 us, stamp to sink */
  guint warmup;
  gdouble secs;
  guint seen;
  guint counted;
  gint64 t0;
  gint64 t_last;
  gboolean failed;
} Bench;

static GstPadProbeReturn
stamp_buffer (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  Bench *b = user_data;
  GstBuffer *buf = gst_buffer_make_writable (GST_PAD_PROBE_INFO_BUFFER (info));
  GstMapInfo map;

  info->data = buf;
  if (gst_buffer_map (buf, &map, GST_MAP_WRITE)) {
    guint64 v[3] = { STAMP_MAGIC, ++b->seq, g_get_monotonic_time () };

    if (map.size >= sizeof (v))
      memcpy (map.data, v, sizeof (v));
    gst_buffer_unmap (buf, &map);
  }
  return GST_PAD_PROBE_OK;
}

/* The frame's stamp time if it is the producer's and new, else -1. */
static gint64
stamped (Bench * b, GstBuffer * buf)
{
  GstMapInfo map;
  guint64 v[3] = { 0 };

  if (gst_buffer_map (buf, &map, GST_MAP_READ)) {
    if (map.size >= sizeof (v))
      memcpy (v, map.data, sizeof (v));
    gst_buffer_unmap (buf, &map);
  }
  if (v[0] != STAMP_MAGIC || v[1] <= b->last_seq)
    return -1;
  b->last_seq = v[1];
  return (gint64) v[2];
}

static GstPadProbeReturn
count_buffer (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  Bench *b = user_data;
  gint64 now = g_get_monotonic_time ();
  gint64 sent = stamped (b, GST_PAD_PROBE_INFO_BUFFER (info));

  if (sent < 0) {
    b->foreign++;
    return GST_PAD_PROBE_OK;
  }
  if (b->seen++ < b->warmup)
    return GST_PAD_PROBE_OK;
  if (!b->t0)
    b->t0 = now;
  else if (now - b->t0 < b->secs * G_USEC_PER_SEC) {
    gint64 us = now - sent;

    b->counted++;
    b->t_last = now;
    g_array_append_val (b->lat, us);
  } else
    g_main_loop_quit (b->loop);
  return GST_PAD_PROBE_OK;
}

static gboolean
on_message (GstBus * bus, GstMessage * msg, gpointer user_data)
{
  Bench *b = user_data;
  GError *err = NULL;
  gchar *dbg = NULL;

  switch (GST_MESSAGE_TYPE (msg)) {
    case GST_MESSAGE_ERROR:
      gst_message_parse_error (msg, &err, &dbg);
      printf ("error=%s: %s\n", GST_OBJECT_NAME (msg->src), err->message);
      g_clear_error (&err);
      g_free (dbg);
      b->failed = TRUE;
      g_main_loop_quit (b->loop);
      break;
    case GST_MESSAGE_EOS:
      g_main_loop_quit (b->loop);
      break;
    default:
      break;
  }
  return TRUE;
}

static gboolean
on_timeout (gpointer user_data)
{
  Bench *b = user_data;

  printf ("error=timeout after %u buffers\n", b->seen);
  b->failed = TRUE;
  g_main_loop_quit (b->loop);
  return G_SOURCE_REMOVE;
}

static gboolean
quit_loop (gpointer user_data)
{
  g_main_loop_quit (((Bench *) user_data)->loop);
  return G_SOURCE_REMOVE;
}

static gint
cmp_i64 (gconstpointer a, gconstpointer b)
{
  gint64 x = *(const gint64 *) a, y = *(const gint64 *) b;

  return x < y ? -1 : x > y;
}

/* Hook the stamp onto the src pad of @p's element named "stamp". */
static gboolean
add_stamp (GstElement * p, Bench * b)
{
  GstElement *e = gst_bin_get_by_name (GST_BIN (p), "stamp");
  GstPad *pad;

  if (!e)
    return FALSE;
  pad = gst_element_get_static_pad (e, "src");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, stamp_buffer, b, NULL);
  gst_object_unref (pad);
  gst_object_unref (e);
  return TRUE;
}

static GstElement *
launch (const gchar * desc, Bench * b)
{
  GError *err = NULL;
  GstElement *p = gst_parse_launch (desc, &err);
  GstBus *bus;

  if (!p) {
    printf ("error=%s\n", err ? err->message : "parse");
    exit (1);
  }
  bus = gst_element_get_bus (p);
  gst_bus_add_watch (bus, on_message, b);
  gst_object_unref (bus);
  return p;
}

int
main (int argc, char **argv)
{
  Bench b = {.warmup = 10,.secs = 3 };
  const gchar *pdesc = NULL, *cdesc = NULL;
  GstElement *prod = NULL, *cons, *sink;
  GstPad *pad;
  int opt;

  gst_init (&argc, &argv);
  while ((opt = getopt (argc, argv, "p:c:t:w:")) != -1) {
    switch (opt) {
      case 'p':
        pdesc = optarg;
        break;
      case 'c':
        cdesc = optarg;
        break;
      case 't':
        b.secs = atof (optarg);
        break;
      case 'w':
        b.warmup = atoi (optarg);
        break;
      default:
        return 2;
    }
  }
  if (!cdesc)
    return 2;
  b.loop = g_main_loop_new (NULL, FALSE);
  b.lat = g_array_new (FALSE, FALSE, sizeof (gint64));

  if (pdesc) {
    prod = launch (pdesc, &b);
    if (!add_stamp (prod, &b)) {
      printf ("error=no element named stamp in the producer\n");
      return 1;
    }
    gst_element_set_state (prod, GST_STATE_PLAYING);
    if (gst_element_get_state (prod, NULL, NULL, 30 * GST_SECOND) ==
        GST_STATE_CHANGE_FAILURE) {
      /* the bus has the reason */
      g_timeout_add (100, quit_loop, &b);
      g_main_loop_run (b.loop);
      if (!b.failed)
        printf ("error=producer did not start\n");
      return 1;
    }
  }
  cons = launch (cdesc, &b);
  if (!pdesc && !add_stamp (cons, &b)) {
    printf ("error=no element named stamp\n");
    return 1;
  }
  sink = gst_bin_get_by_name (GST_BIN (cons), "sink");
  if (!sink) {
    printf ("error=no element named sink\n");
    return 1;
  }
  pad = gst_element_get_static_pad (sink, "sink");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, count_buffer, &b, NULL);
  gst_object_unref (pad);
  gst_object_unref (sink);

  g_timeout_add_seconds (60 + b.secs, on_timeout, &b);
  gst_element_set_state (cons, GST_STATE_PLAYING);
  g_main_loop_run (b.loop);

  /* a failed pipeline is not torn down: the error is what is reported, and
   * stock v4l2sink crashed here once its peer had failed (v4l2loopback
   * with exclusive_caps=1) */
  if (b.failed) {
    fflush (stdout);
    _exit (1);
  }
  gst_element_set_state (cons, GST_STATE_NULL);
  if (prod)
    gst_element_set_state (prod, GST_STATE_NULL);
  if (!b.counted || b.t_last <= b.t0) {
    printf ("error=no producer's buffers after the warm-up (%u seen, %u foreign)\n",
        b.seen, b.foreign);
    return 1;
  }
  g_array_sort (b.lat, cmp_i64);
  printf ("fps=%.1f frames=%u foreign=%u lat_p50_ms=%.1f lat_p99_ms=%.1f\n",
      b.counted * (gdouble) G_USEC_PER_SEC / (b.t_last - b.t0), b.counted,
      b.foreign, g_array_index (b.lat, gint64, b.lat->len / 2) / 1000.0,
      g_array_index (b.lat, gint64, (b.lat->len * 99) / 100) / 1000.0);
  g_array_unref (b.lat);
  gst_object_unref (cons);
  if (prod)
    gst_object_unref (prod);
  return 0;
}
