/* Host unit tests: vstreamsink io-mode=rw (write()) against a device
 * whose ioctls are canned and whose writes are real: the device node is
 * a pseudo-terminal in raw mode, a character device with a kernel buffer
 * of bounded room, so write() fills it, returns EAGAIN on the
 * non-blocking fd and poll() waits for room exactly as on a V4L2 output
 * node.  The test reads the frames back from the master side.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <termios.h>
#include <unistd.h>

#include "gst-check-helpers.h"
#include "vstreamobject.h"
#include "vstreamsink.h"

GST_DEBUG_CATEGORY (gst_vstream_debug);

/* RGB at an odd width: the driver's lines are W * 3 bytes, GStreamer's
 * are padded to a multiple of 4 */
#define W 333
#define H 256
#define BPL (W * 3)
#define SIZEIMAGE (BPL * H)
#define GST_STRIDE ((BPL + 3) & ~3)

static struct
{
  gint master;                  /* our side of the pty */
  gint slave;                   /* kept open: the raw mode stays */
  gchar *path;                  /* the "device" the sink opens */
  gboolean mjpeg;
} dev;

static int
fake_ioctl (int fd, unsigned long req, void *arg)
{
  switch (req) {
    case VIDIOC_QUERYCAP:{
      struct v4l2_capability *c = arg;

      memset (c, 0, sizeof (*c));
      g_strlcpy ((gchar *) c->card, "fake rw", sizeof (c->card));
      c->device_caps = V4L2_CAP_READWRITE | V4L2_CAP_VIDEO_OUTPUT;
      c->capabilities = c->device_caps | V4L2_CAP_DEVICE_CAPS;
      return 0;
    }
    case VIDIOC_ENUM_FMT:{
      struct v4l2_fmtdesc *d = arg;

      if (d->index > 0)
        break;
      d->pixelformat = dev.mjpeg ? V4L2_PIX_FMT_MJPEG : V4L2_PIX_FMT_RGB24;
      d->flags = dev.mjpeg ? V4L2_FMT_FLAG_COMPRESSED : 0;
      return 0;
    }
    case VIDIOC_ENUM_FRAMESIZES:{
      struct v4l2_frmsizeenum *fs = arg;

      if (fs->index > 0)
        break;
      fs->type = V4L2_FRMSIZE_TYPE_DISCRETE;
      fs->discrete.width = W;
      fs->discrete.height = H;
      return 0;
    }
    case VIDIOC_ENUM_FRAMEINTERVALS:{
      struct v4l2_frmivalenum *fi = arg;

      if (fi->index > 0)
        break;
      fi->type = V4L2_FRMIVAL_TYPE_DISCRETE;
      fi->discrete.numerator = 1;
      fi->discrete.denominator = 30;
      return 0;
    }
    case VIDIOC_TRY_FMT:
    case VIDIOC_S_FMT:
    case VIDIOC_G_FMT:{
      struct v4l2_format *f = arg;

      memset (&f->fmt, 0, sizeof (f->fmt));
      f->fmt.pix.width = W;
      f->fmt.pix.height = H;
      f->fmt.pix.field = V4L2_FIELD_NONE;
      f->fmt.pix.colorspace = V4L2_COLORSPACE_SRGB;
      if (dev.mjpeg) {
        f->fmt.pix.pixelformat = V4L2_PIX_FMT_MJPEG;
        f->fmt.pix.sizeimage = SIZEIMAGE;
      } else {
        f->fmt.pix.pixelformat = V4L2_PIX_FMT_RGB24;
        f->fmt.pix.bytesperline = BPL;
        f->fmt.pix.sizeimage = SIZEIMAGE;
      }
      return 0;
    }
    case VIDIOC_G_PARM:
    case VIDIOC_S_PARM:{
      struct v4l2_streamparm *p = arg;

      p->parm.output.timeperframe.numerator = 1;
      p->parm.output.timeperframe.denominator = 30;
      return 0;
    }
    default:
      break;
  }
  errno = EINVAL;
  return -1;
}

static void
dev_setup (void)
{
  struct termios t;

  dev.master = posix_openpt (O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
  fail_unless (dev.master >= 0);
  fail_unless (grantpt (dev.master) == 0 && unlockpt (dev.master) == 0);
  dev.path = g_strdup (ptsname (dev.master));
  dev.slave = open (dev.path, O_RDWR | O_NOCTTY | O_CLOEXEC);
  fail_unless (dev.slave >= 0);
  /* raw: bytes pass unchanged (no \n -> \r\n), no echo */
  fail_unless (tcgetattr (dev.slave, &t) == 0);
  cfmakeraw (&t);
  fail_unless (tcsetattr (dev.slave, TCSANOW, &t) == 0);
  dev.mjpeg = FALSE;
}

static void
dev_teardown (void)
{
  close (dev.slave);
  close (dev.master);
  g_clear_pointer (&dev.path, g_free);
}

/* Read exactly @len bytes from the master side, within 10 s. */
static void
read_exact (guint8 * dst, gsize len)
{
  gint64 end = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
  gsize got = 0;

  while (got < len) {
    gssize n = read (dev.master, dst + got, len - got);

    if (n > 0) {
      got += n;
      continue;
    }
    fail_unless (n < 0 && (errno == EAGAIN || errno == EINTR),
        "read: %s", g_strerror (errno));
    fail_unless (g_get_monotonic_time () < end, "only %" G_GSIZE_FORMAT
        " of %" G_GSIZE_FORMAT " bytes arrived", got, len);
    g_usleep (1000);
  }
}

static guint8
value (guint frame, guint line, guint x)
{
  return (guint8) (frame * 31 + line * 7 + x);
}

/* A frame in GStreamer's layout: padded lines, the padding poisoned. */
static GstBuffer *
make_frame (guint frame)
{
  GstBuffer *buf = gst_buffer_new_allocate (NULL, GST_STRIDE * H, NULL);
  GstMapInfo map;
  guint y, x;

  fail_unless (gst_buffer_map (buf, &map, GST_MAP_WRITE));
  memset (map.data, 0xee, map.size);
  for (y = 0; y < H; y++)
    for (x = 0; x < BPL; x++)
      map.data[y * GST_STRIDE + x] = value (frame, y, x);
  gst_buffer_unmap (buf, &map);
  return buf;
}

static GstHarness *
rw_harness (const gchar * caps)
{
  gchar *desc = g_strdup_printf ("vstreamsink io-mode=rw device=%s "
      "sync=false enable-last-sample=false", dev.path);
  GstHarness *h = gst_harness_new_parse (desc);

  g_free (desc);
  gst_harness_play (h);
  gst_harness_set_src_caps_str (h, caps);
  return h;
}

#define RGB_CAPS "video/x-raw,format=RGB,width=333,height=256,framerate=30/1"

/* Pushes buffers from its own thread: a frame does not fit in the pty at
 * once, so a push returns only as the test reads. */
typedef struct
{
  GstHarness *h;
  GstBuffer *bufs[4];
  guint n;
  GstFlowReturn ret;
  gint64 done_at;
} Pusher;

static gpointer
push_all (gpointer data)
{
  Pusher *p = data;
  guint i;

  p->ret = GST_FLOW_OK;
  for (i = 0; i < p->n && p->ret == GST_FLOW_OK; i++)
    p->ret = gst_harness_push (p->h, p->bufs[i]);
  for (; i < p->n; i++)
    gst_buffer_unref (p->bufs[i]);
  p->done_at = g_get_monotonic_time ();
  return NULL;
}

static gdouble
cpu_seconds (void)
{
  struct rusage ru;

  fail_unless (getrusage (RUSAGE_SELF, &ru) == 0);
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
      (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* Frames whose stride differs from the driver's arrive in the driver's
 * layout, every byte, and the padding never reaches the device. */
GST_START_TEST (test_padded_rgb_bit_exact)
{
  Pusher p = {.h = rw_harness (RGB_CAPS),.n = 3 };
  guint8 *got = g_malloc (SIZEIMAGE);
  GstElement *sink;
  GThread *t;
  guint f, y, x;

  fail_unless (GST_STRIDE != BPL);
  for (f = 0; f < p.n; f++)
    p.bufs[f] = make_frame (f);
  t = g_thread_new ("push", push_all, &p);
  for (f = 0; f < p.n; f++) {
    read_exact (got, SIZEIMAGE);
    for (y = 0; y < H; y++)
      for (x = 0; x < BPL; x++)
        fail_unless (got[y * BPL + x] == value (f, y, x),
            "frame %u line %u byte %u: %u, want %u", f, y, x,
            got[y * BPL + x], value (f, y, x));
  }
  g_thread_join (t);
  fail_unless_equals_int (p.ret, GST_FLOW_OK);
  sink = harness_element (p.h, "vstreamsink");
  fail_unless_equals_int (stat_of (sink, "frames"), 3);
  gst_object_unref (sink);
  g_free (got);
  gst_harness_teardown (p.h);
}

GST_END_TEST;

/* A sink waiting for the device to take a frame sleeps in poll(): it
 * costs no CPU, and a flush wakes it at once with FLUSHING. */
GST_START_TEST (test_blocked_write_idle_and_flushable)
{
  Pusher p = {.h = rw_harness (RGB_CAPS),.n = 1 };
  gdouble cpu0, cpu;
  gint64 flushed_at;
  guint8 probe;
  GThread *t;

  p.bufs[0] = make_frame (0);
  t = g_thread_new ("push", push_all, &p);
  /* the pty fills: the first bytes arrive, the rest waits */
  read_exact (&probe, 1);
  g_usleep (G_USEC_PER_SEC / 5);
  fail_unless (p.done_at == 0, "the frame fit: the test proves nothing");
  cpu0 = cpu_seconds ();
  g_usleep (G_USEC_PER_SEC);
  cpu = cpu_seconds () - cpu0;
  g_print ("rw sink blocked for 1 s used %.3f s of CPU\n", cpu);
  fail_unless (cpu < 0.2, "a blocked write() used %.3f s of CPU in 1 s", cpu);
  fail_unless (p.done_at == 0);

  flushed_at = g_get_monotonic_time ();
  fail_unless (gst_harness_push_event (p.h, gst_event_new_flush_start ()));
  g_thread_join (t);
  g_print ("flush ended the blocked write in %.1f ms\n",
      (p.done_at - flushed_at) / 1000.0);
  fail_unless_equals_int (p.ret, GST_FLOW_FLUSHING);
  /* generous against a loaded machine; typically well under 1 ms */
  fail_unless (p.done_at - flushed_at < G_USEC_PER_SEC,
      "flush took %" G_GINT64_FORMAT " us", p.done_at - flushed_at);
  fail_unless (gst_harness_push_event (p.h, gst_event_new_flush_stop (TRUE)));
  gst_harness_teardown (p.h);
}

GST_END_TEST;

/* A compressed frame is one write() of its own length, not sizeimage. */
GST_START_TEST (test_mjpeg_frames_at_their_length)
{
  static const gsize sizes[] = { 1000, 70000, 200 };
  Pusher p = {.n = 3 };
  gsize total = 0, off = 0, i, j;
  guint8 *got;
  GThread *t;

  dev.mjpeg = TRUE;
  p.h = rw_harness ("image/jpeg,parsed=true,width=333,height=256,framerate=30/1");
  for (i = 0; i < p.n; i++) {
    GstMapInfo map;

    p.bufs[i] = gst_buffer_new_allocate (NULL, sizes[i], NULL);
    fail_unless (gst_buffer_map (p.bufs[i], &map, GST_MAP_WRITE));
    for (j = 0; j < sizes[i]; j++)
      map.data[j] = (guint8) (i * 100 + j);
    gst_buffer_unmap (p.bufs[i], &map);
    total += sizes[i];
  }
  t = g_thread_new ("push", push_all, &p);
  got = g_malloc (total);
  read_exact (got, total);
  g_thread_join (t);
  fail_unless_equals_int (p.ret, GST_FLOW_OK);
  for (i = 0; i < p.n; off += sizes[i], i++)
    for (j = 0; j < sizes[i]; j++)
      fail_unless (got[off + j] == (guint8) (i * 100 + j),
          "frame %u byte %u", (guint) i, (guint) j);
  /* and nothing more: no frame was padded to sizeimage */
  g_usleep (G_USEC_PER_SEC / 10);
  fail_unless (read (dev.master, got, 1) < 0 && errno == EAGAIN,
      "bytes beyond the frames' own lengths");
  g_free (got);
  gst_harness_teardown (p.h);
}

GST_END_TEST;

static Suite *
vstream_rwsink_suite (void)
{
  static const GstVstreamDeviceHooks hooks = {.ioctl = fake_ioctl };
  Suite *s = suite_create ("vstream-rwsink");
  TCase *tc = tcase_create ("rwsink");

  GST_DEBUG_CATEGORY_INIT (gst_vstream_debug, "vstream", 0, "vstream tests");
  gst_vstream_set_device_hooks (&hooks);
  GST_ELEMENT_REGISTER (vstreamsink, NULL);
  suite_add_tcase (s, tc);
  tcase_set_timeout (tc, 60);
  tcase_add_checked_fixture (tc, dev_setup, dev_teardown);
  tcase_add_test (tc, test_padded_rgb_bit_exact);
  tcase_add_test (tc, test_blocked_write_idle_and_flushable);
  tcase_add_test (tc, test_mjpeg_frames_at_their_length);
  return s;
}

GST_CHECK_MAIN (vstream_rwsink);
