/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * gst-bench: buffers per second reaching the element named "sink" of a
 * consumer pipeline, measured after a warm-up, with an optional producer
 * pipeline playing in the same process (e.g. one feeding a device node the
 * consumer reads).
 *
 *   gst-bench [-p PRODUCER] -c CONSUMER [-t SECONDS] [-w WARMUP_BUFFERS]
 *
 * Prints "fps=N frames=N", or "error=..." and exits 1 when a pipeline
 * fails (e.g. cannot negotiate).
 */
#include <gst/gst.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct {
  GMainLoop *loop;
  guint warmup;
  gdouble secs;
  guint seen;
  guint counted;
  gint64 t0;
  gint64 t_last;
  gboolean failed;
} Bench;

static GstPadProbeReturn
count_buffer (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  Bench *b = user_data;
  gint64 now = g_get_monotonic_time ();

  if (b->seen++ < b->warmup)
    return GST_PAD_PROBE_OK;
  if (!b->t0)
    b->t0 = now;
  else if (now - b->t0 < b->secs * G_USEC_PER_SEC) {
    b->counted++;
    b->t_last = now;
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

  if (pdesc) {
    prod = launch (pdesc, &b);
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

  gst_element_set_state (cons, GST_STATE_NULL);
  if (prod)
    gst_element_set_state (prod, GST_STATE_NULL);
  if (b.failed)
    return 1;
  if (!b.counted || b.t_last <= b.t0) {
    printf ("error=no buffers after the warm-up (%u seen)\n", b.seen);
    return 1;
  }
  printf ("fps=%.1f frames=%u\n",
      b.counted * (gdouble) G_USEC_PER_SEC / (b.t_last - b.t0), b.counted);
  gst_object_unref (cons);
  if (prod)
    gst_object_unref (prod);
  return 0;
}
