/* Helpers the gst-check programs share: tests/unit/test-lifetime.c (host,
 * canned device) and tests/vm/gst-pipe.c (guest, real device).
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef VS_GST_CHECK_HELPERS_H
#define VS_GST_CHECK_HELPERS_H

#include <string.h>
#include <gst/gst.h>
#include <gst/app/gstappsink.h>
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>

/* One counter of a vstream element's "stats" property. */
static inline guint64
stat_of (GstElement * e, const gchar * field)
{
  GstStructure *s = NULL;
  guint64 v = 0;

  g_object_get (e, "stats", &s, NULL);
  fail_unless (s != NULL && gst_structure_get_uint64 (s, field, &v),
      "no %s in stats", field);
  gst_structure_free (s);
  return v;
}

/* FNV-1a over @buf's bytes: what a held frame must keep. */
static inline guint32
checksum (GstBuffer * buf)
{
  GstMapInfo map;
  guint32 h = 2166136261u;
  gsize i;

  fail_unless (gst_buffer_map (buf, &map, GST_MAP_READ));
  for (i = 0; i < map.size; i++)
    h = (h ^ map.data[i]) * 16777619u;
  gst_buffer_unmap (buf, &map);
  return h;
}

/* The element of @factory in @h's bin, a reference. */
static inline GstElement *
harness_element (GstHarness * h, const gchar * factory)
{
  GstIterator *it = gst_bin_iterate_elements (GST_BIN (h->element));
  GValue v = G_VALUE_INIT;
  GstElement *found = NULL;

  while (!found && gst_iterator_next (it, &v) == GST_ITERATOR_OK) {
    GstElement *e = g_value_get_object (&v);

    if (g_str_equal (GST_OBJECT_NAME (gst_element_get_factory (e)), factory))
      found = gst_object_ref (e);
    g_value_reset (&v);
  }
  g_value_unset (&v);
  gst_iterator_free (it);
  return found;
}

/* A frame of @size bytes that carries its number in the first four and
 * @pattern (number, offset) in every other byte. */
static inline void
assert_numbered_frame (GstBuffer * buf, gsize size,
    guint8 (*pattern) (guint32 frame, gsize i))
{
  GstMapInfo map;
  guint32 frame;
  gsize i;

  fail_unless (gst_buffer_map (buf, &map, GST_MAP_READ));
  fail_unless_equals_uint64 (map.size, size);
  memcpy (&frame, map.data, 4);
  for (i = 4; i < map.size; i++)
    if (map.data[i] != pattern (frame, i))
      fail ("frame %u: byte %" G_GSIZE_FORMAT " differs", frame, i);
  gst_buffer_unmap (buf, &map);
}

/* Pull @n samples from @appsink and keep them, with the checksum each had
 * when pulled (@sums may be NULL). */
static inline void
pull_samples (GstElement * appsink, GstSample ** samples, guint32 * sums,
    gint n)
{
  gint i;

  for (i = 0; i < n; i++) {
    samples[i] = gst_app_sink_try_pull_sample (GST_APP_SINK (appsink),
        10 * GST_SECOND);
    fail_unless (samples[i] != NULL, "sample %d did not come", i);
    if (sums)
      sums[i] = checksum (gst_sample_get_buffer (samples[i]));
  }
}

/* Pull @n samples from @appsink and let them go: the source cycles
 * through its buffers meanwhile. */
static inline void
pull_and_drop_samples (GstElement * appsink, gint n)
{
  gint i;

  for (i = 0; i < n; i++) {
    GstSample *s = gst_app_sink_try_pull_sample (GST_APP_SINK (appsink),
        10 * GST_SECOND);

    fail_unless (s != NULL, "sample %d did not come", i);
    gst_sample_unref (s);
  }
}

/* Every held sample still has the bytes it had when it was pulled. */
static inline void
assert_samples_unchanged (GstSample ** samples, const guint32 * sums,
    gint n, const gchar * when)
{
  gint i;

  for (i = 0; i < n; i++)
    fail_unless (checksum (gst_sample_get_buffer (samples[i])) == sums[i],
        "sample %d changed %s", i, when);
}

/* How often two samples in a row share one driver memory: videorate's
 * duplicates of a frame the source pushed without a copy. */
static inline gint
shared_driver_frames (GstSample ** samples, gint n)
{
  gint i, shared = 0;

  for (i = 0; i + 1 < n; i++) {
    GstMemory *m = gst_buffer_peek_memory (gst_sample_get_buffer
        (samples[i]), 0);

    shared += m == gst_buffer_peek_memory (gst_sample_get_buffer
        (samples[i + 1]), 0) && gst_memory_is_type (m, "VstreamMemory");
  }
  return shared;
}

#endif
