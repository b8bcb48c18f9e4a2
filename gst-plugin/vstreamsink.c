/* vstream GStreamer plugin: vstreamsink, a V4L2 output sink.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Feeds frames to any V4L2 output node: a vstream pipe's output node makes
 * them a virtual camera.  Upstream renders straight into the driver's
 * buffers through the pool offered in propose_allocation.
 *
 *   gst-launch-1.0 videotestsrc ! vstreamsink device=/dev/video0
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <unistd.h>

#include "vstreamsink.h"
#include "vstreamobject.h"
#include "vstreamsysfs.h"
#include "vstreamcontrols.h"
#include "vstreambufferpool.h"
#include "vstreamformats.h"

GST_DEBUG_CATEGORY_STATIC (gst_vstream_sink_debug);
#define GST_CAT_DEFAULT gst_vstream_sink_debug

struct _GstVstreamSink
{
  GstVideoSink parent;
  GstVstreamObject *obj;
  GstBufferPool *pool;          /* replaced under the object lock */
  gboolean flushing;            /* unlock() to unlock_stop(): object lock */
  GstPoll *poll;                /* write() mode: wait for room, flushable */
  GstPollFD pollfd;
  GstBuffer *scratch;           /* write() mode: a frame in the driver's layout */
};

#define gst_vstream_sink_parent_class parent_class
G_DEFINE_TYPE_WITH_CODE (GstVstreamSink, gst_vstream_sink, GST_TYPE_VIDEO_SINK,
    GST_DEBUG_CATEGORY_INIT (gst_vstream_sink_debug, "vstreamsink", 0,
        "vstream video sink");
    G_IMPLEMENT_INTERFACE (GST_TYPE_URI_HANDLER,
        gst_vstream_uri_handler_init)
    G_IMPLEMENT_INTERFACE (GST_TYPE_COLOR_BALANCE,
        gst_vstream_color_balance_init));
GST_ELEMENT_REGISTER_DEFINE (vstreamsink, "vstreamsink", GST_RANK_NONE,
    GST_TYPE_VSTREAM_SINK);

static void
gst_vstream_sink_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstVstreamSink *self = GST_VSTREAM_SINK (object);

  if (!gst_vstream_object_set_property (self->obj, prop_id, value))
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
gst_vstream_sink_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstVstreamSink *self = GST_VSTREAM_SINK (object);

  /* GstBaseSink's stats (rendered, dropped, average-rate) stay, with
   * ours beside them: applications read either */
  if (prop_id == GST_VSTREAM_PROP_STATS)
    g_value_take_boxed (value, gst_vstream_object_stats (self->obj,
            gst_base_sink_get_stats (GST_BASE_SINK (self))));
  else if (!gst_vstream_object_get_property (self->obj, prop_id, value))
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static GstStateChangeReturn
gst_vstream_sink_change_state (GstElement * element,
    GstStateChange transition)
{
  GstVstreamSink *sink = GST_VSTREAM_SINK (element);
  GstStateChangeReturn ret;

  if (transition == GST_STATE_CHANGE_NULL_TO_READY) {
    if (!gst_vstream_object_open (sink->obj))
      return GST_STATE_CHANGE_FAILURE;
    gst_vstream_object_reset_stats (sink->obj);
    gst_poll_fd_init (&sink->pollfd);
    sink->pollfd.fd = sink->obj->fd;
    gst_poll_add_fd (sink->poll, &sink->pollfd);
    gst_poll_fd_ctl_write (sink->poll, &sink->pollfd, TRUE);
  }
  ret = GST_ELEMENT_CLASS (parent_class)->change_state (element, transition);
  if (transition == GST_STATE_CHANGE_READY_TO_NULL) {
    gst_poll_remove_fd (sink->poll, &sink->pollfd);
    gst_vstream_object_close (sink->obj);
  }
  return ret;
}

static GstCaps *
gst_vstream_sink_get_caps (GstBaseSink * bsink, GstCaps * filter)
{
  GstVstreamSink *sink = GST_VSTREAM_SINK (bsink);

  return gst_vstream_object_get_caps (sink->obj, filter,
      gst_element_class_get_pad_template (GST_ELEMENT_GET_CLASS (sink),
          "sink"));
}

/* Caps without interlace-mode are progressive (GStreamer's default), but
 * are no subset of our probed caps, which name the mode: accept them. */
static gboolean
gst_vstream_sink_query (GstBaseSink * bsink, GstQuery * query)
{
  GstCaps *caps, *full, *ours;
  gboolean ok;
  guint i;

  if (GST_QUERY_TYPE (query) != GST_QUERY_ACCEPT_CAPS)
    return GST_BASE_SINK_CLASS (parent_class)->query (bsink, query);
  gst_query_parse_accept_caps (query, &caps);
  full = gst_caps_copy (caps);
  for (i = 0; i < gst_caps_get_size (full); i++) {
    GstStructure *s = gst_caps_get_structure (full, i);

    if (gst_structure_has_name (s, "video/x-raw") &&
        !gst_structure_has_field (s, "interlace-mode"))
      gst_structure_set (s, "interlace-mode", G_TYPE_STRING, "progressive",
          NULL);
  }
  ours = gst_vstream_sink_get_caps (bsink, NULL);
  ok = gst_caps_is_subset (full, ours);
  gst_caps_unref (ours);
  gst_caps_unref (full);
  gst_query_set_accept_caps_result (query, ok);
  return TRUE;
}

/* Make @pool (a new one, or NULL) the element's: see
 * gst_vstream_buffer_pool_replace() */
static void
gst_vstream_sink_set_pool (GstVstreamSink * sink, GstBufferPool * pool)
{
  gst_vstream_buffer_pool_replace (GST_OBJECT (sink), &sink->pool, pool,
      &sink->flushing);
}

static void
gst_vstream_sink_release_pool (GstVstreamSink * sink)
{
  gst_vstream_sink_set_pool (sink, NULL);
}

static gboolean
gst_vstream_sink_set_caps (GstBaseSink * bsink, GstCaps * caps)
{
  GstVstreamSink *sink = GST_VSTREAM_SINK (bsink);
  GstVstreamObject *obj = sink->obj;

  if (sink->pool && obj->nego_caps && gst_caps_is_equal (caps, obj->nego_caps))
    return TRUE;
  /* renegotiation: drain, stop, free, set the new format */
  if (sink->pool)
    gst_vstream_buffer_pool_drain (GST_VSTREAM_BUFFER_POOL (sink->pool));
  gst_vstream_sink_release_pool (sink);
  gst_clear_buffer (&sink->scratch);
  if (!gst_vstream_object_set_format (obj, caps))
    return FALSE;
  if (obj->mode == GST_VSTREAM_IO_RW)
    return TRUE;
  /* Activated by upstream if it takes the pool, else at the first frame */
  gst_vstream_sink_set_pool (sink, gst_vstream_buffer_pool_new (obj,
          obj->caps));
  return TRUE;
}

/* userptr: a plain video pool of pinnable memory */
static void
propose_userptr_pool (GstVstreamSink * sink, GstQuery * query)
{
  GstVstreamObject *obj = sink->obj;
  GstBufferPool *pool = gst_video_buffer_pool_new ();
  GstStructure *config = gst_buffer_pool_get_config (pool);
  guint size = MAX (obj->info.size, obj->format.fmt.pix.sizeimage);
  GstAllocationParams params;

  gst_vstream_buffer_pool_pinnable_params (&params);
  gst_vstream_buffer_pool_config_pinnable (pool, config, obj->caps, size, 0,
      0);
  if (gst_buffer_pool_set_config (pool, config)) {
    gst_query_add_allocation_pool (query, pool, size, 0, 0);
    gst_query_add_allocation_param (query, NULL, &params);
  }
  gst_object_unref (pool);
}

static gboolean
gst_vstream_sink_propose_allocation (GstBaseSink * bsink, GstQuery * query)
{
  GstVstreamSink *sink = GST_VSTREAM_SINK (bsink);
  GstVstreamObject *obj = sink->obj;
  GstCaps *caps;
  gboolean need_pool;

  gst_query_parse_allocation (query, &caps, &need_pool);
  gst_query_add_allocation_meta (query, GST_VIDEO_META_API_TYPE, NULL);
  if (!sink->pool || !need_pool || !caps || !obj->nego_caps ||
      !gst_caps_is_equal (caps, obj->nego_caps))
    return TRUE;
  /* mmap/dmabuf: upstream renders into the driver's buffers */
  if (obj->mode == GST_VSTREAM_IO_MMAP || obj->mode == GST_VSTREAM_IO_DMABUF)
    gst_query_add_allocation_pool (query, sink->pool, obj->info.size,
        gst_vstream_object_buffer_count (obj),
        gst_vstream_object_buffer_count (obj));
  /* userptr: plain page-aligned memory the driver can pin, so what
   * upstream renders (or a userptr vstreamsrc captures) is imported */
  if (obj->mode == GST_VSTREAM_IO_USERPTR)
    propose_userptr_pool (sink, query);
  return TRUE;
}

/*
 * write() all of @len bytes, waiting in poll() while the device has no
 * room (the fd is non-blocking), so a waiting sink costs no CPU and
 * unlock() wakes it at once.
 */
static GstFlowReturn
write_all (GstVstreamSink * sink, const guint8 * data, gsize len)
{
  GstVstreamObject *obj = sink->obj;
  gsize done = 0;
  gssize n;

  while (done < len) {
    n = write (obj->fd, data + done, len - done);
    if (n >= 0) {
      done += n;
      continue;
    }
    if (errno == EINTR)
      continue;
    if (errno != EAGAIN)
      goto error;
    if (gst_poll_wait (sink->poll, GST_CLOCK_TIME_NONE) < 0) {
      if (errno == EBUSY)
        return GST_FLOW_FLUSHING;
      if (errno != EINTR && errno != EAGAIN)
        goto error;
    }
  }
  return GST_FLOW_OK;

error:
  GST_ELEMENT_ERROR (sink, RESOURCE, WRITE,
      ("Could not write to device '%s'.", obj->device),
      ("write: %s", g_strerror (errno)));
  return GST_FLOW_ERROR;
}

/*
 * io-mode=rw: one write() a frame, in the driver's layout: its
 * bytesperline can differ from GStreamer's stride (RGB at odd widths), so
 * such frames are first copied line by line.  A compressed frame is
 * written at its own length: vstream (and vb2's write_immediately) make
 * each write() of a compressed format one frame.
 */
static GstFlowReturn
write_frame (GstVstreamSink * sink, GstBuffer * buf)
{
  GstVstreamObject *obj = sink->obj;
  gsize size = obj->format.fmt.pix.sizeimage;
  gboolean encoded =
      GST_VIDEO_INFO_FORMAT (&obj->info) == GST_VIDEO_FORMAT_ENCODED;
  GstBuffer *frame = buf;
  GstFlowReturn ret;
  GstMapInfo map;

  if (!encoded && !gst_vstream_object_layout_fits (obj, obj->caps, buf)) {
    /* obj->info.size: sizeimage, or more if the planes need it */
    if (!sink->scratch)
      sink->scratch = gst_buffer_new_allocate (NULL, obj->info.size, NULL);
    if (!gst_vstream_object_copy_frame (obj, obj->caps, buf, sink->scratch)) {
      GST_ELEMENT_ERROR (sink, STREAM, FORMAT,
          ("Could not copy a frame for device '%s'.", obj->device), (NULL));
      return GST_FLOW_ERROR;
    }
    frame = sink->scratch;
  }
  if (!gst_buffer_map (frame, &map, GST_MAP_READ)) {
    GST_ELEMENT_ERROR (sink, RESOURCE, READ,
        ("Could not read a frame for device '%s'.", obj->device), (NULL));
    return GST_FLOW_ERROR;
  }
  ret = write_all (sink, map.data, encoded ? MIN (map.size, size) : size);
  gst_buffer_unmap (frame, &map);
  if (ret == GST_FLOW_OK)
    gst_vstream_object_count (obj, 1, 0, 1, 0);
  return ret;
}

/* dmabuf-import can queue only dma-bufs of the driver's layout: for
 * anything else use driver buffers (mmap) and copy into them. */
static void
gst_vstream_sink_fall_back_to_mmap (GstVstreamSink * sink, GstBuffer * buf)
{
  GstVstreamObject *obj = sink->obj;
  GstMemory *mem = gst_buffer_peek_memory (buf, 0);

  GST_INFO_OBJECT (sink, "%s: upstream sent %s memory, no dma-buf of the "
      "device's layout: copying into mmap buffers", obj->device,
      mem->allocator ? mem->allocator->mem_type : "unknown");
  gst_vstream_buffer_pool_drain (GST_VSTREAM_BUFFER_POOL (sink->pool));
  gst_vstream_sink_release_pool (sink);
  obj->mode = GST_VSTREAM_IO_MMAP;
  gst_vstream_sink_set_pool (sink, gst_vstream_buffer_pool_new (obj,
          obj->caps));
}

static GstFlowReturn
gst_vstream_sink_show_frame (GstVideoSink * vsink, GstBuffer * buf)
{
  GstVstreamSink *sink = GST_VSTREAM_SINK (vsink);

  if (!sink->obj->caps)
    return GST_FLOW_NOT_NEGOTIATED;
  if (!sink->pool)
    return write_frame (sink, buf);
  if (!gst_buffer_pool_is_active (sink->pool) &&
      !gst_buffer_pool_set_active (sink->pool, TRUE))
    return GST_FLOW_ERROR;
  if (sink->obj->mode == GST_VSTREAM_IO_DMABUF_IMPORT &&
      !gst_vstream_buffer_pool_imports (GST_VSTREAM_BUFFER_POOL (sink->pool),
          buf)) {
    gst_vstream_sink_fall_back_to_mmap (sink, buf);
    if (!gst_buffer_pool_set_active (sink->pool, TRUE))
      return GST_FLOW_ERROR;
  }
  return gst_vstream_buffer_pool_render (GST_VSTREAM_BUFFER_POOL
      (sink->pool), buf);
}

static gboolean
gst_vstream_sink_event (GstBaseSink * bsink, GstEvent * event)
{
  GstVstreamSink *sink = GST_VSTREAM_SINK (bsink);

  /* Let the device take every queued frame before EOS goes on. */
  if (GST_EVENT_TYPE (event) == GST_EVENT_EOS && sink->pool)
    gst_vstream_buffer_pool_drain (GST_VSTREAM_BUFFER_POOL (sink->pool));
  return GST_BASE_SINK_CLASS (parent_class)->event (bsink, event);
}

static gboolean
gst_vstream_sink_stop (GstBaseSink * bsink)
{
  GstVstreamSink *sink = GST_VSTREAM_SINK (bsink);

  gst_vstream_sink_release_pool (sink);
  gst_clear_buffer (&sink->scratch);
  gst_caps_replace (&sink->obj->caps, NULL);
  gst_caps_replace (&sink->obj->nego_caps, NULL);
  return TRUE;
}

/* unlock/unlock_stop: wake (or re-arm) a render waiting on the device */
static void
gst_vstream_sink_set_flushing (GstVstreamSink * sink, gboolean flushing)
{
  gst_poll_set_flushing (sink->poll, flushing);
  gst_vstream_buffer_pool_owner_set_flushing (GST_OBJECT (sink), &sink->pool,
      &sink->flushing, flushing);
}

static gboolean
gst_vstream_sink_unlock (GstBaseSink * bsink)
{
  gst_vstream_sink_set_flushing (GST_VSTREAM_SINK (bsink), TRUE);
  return TRUE;
}

static gboolean
gst_vstream_sink_unlock_stop (GstBaseSink * bsink)
{
  gst_vstream_sink_set_flushing (GST_VSTREAM_SINK (bsink), FALSE);
  return TRUE;
}

/*
 * A frame goes to the device once: showing the preroll buffer and then
 * rendering it would send the first frame twice.  Set here, not in init:
 * show-preroll-frame is a construct property, so g_object_new() sets its
 * default after init.
 */
static void
gst_vstream_sink_constructed (GObject * object)
{
  G_OBJECT_CLASS (parent_class)->constructed (object);
  g_object_set (object, "show-preroll-frame", FALSE, NULL);
}

static void
gst_vstream_sink_finalize (GObject * object)
{
  GstVstreamSink *sink = GST_VSTREAM_SINK (object);

  gst_vstream_object_disown (sink->obj);
  gst_poll_free (sink->poll);
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static void
gst_vstream_sink_class_init (GstVstreamSinkClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseSinkClass *basesink_class = GST_BASE_SINK_CLASS (klass);
  GstVideoSinkClass *videosink_class = GST_VIDEO_SINK_CLASS (klass);
  GstCaps *caps = gst_vstream_all_caps ();

  gobject_class->set_property = gst_vstream_sink_set_property;
  gobject_class->get_property = gst_vstream_sink_get_property;
  gobject_class->finalize = gst_vstream_sink_finalize;
  gobject_class->constructed = gst_vstream_sink_constructed;

  gst_vstream_object_install_properties (gobject_class,
      "V4L2 output node to feed (default: the first vstream output node, "
      "else /dev/video0)",
      "GstBaseSink's rendered, dropped and average-rate, and frames, "
      "copies and zero-copy (driver or imported) frames queued");

  gst_element_class_set_static_metadata (element_class,
      "vstream video sink", "Sink/Video",
      "Feeds frames to a V4L2 output device, rendering into its buffers",
      "The vstream developers");
  gst_element_class_add_pad_template (element_class,
      gst_pad_template_new ("sink", GST_PAD_SINK, GST_PAD_ALWAYS, caps));
  gst_caps_unref (caps);

  element_class->change_state = gst_vstream_sink_change_state;
  basesink_class->get_caps = gst_vstream_sink_get_caps;
  basesink_class->set_caps = gst_vstream_sink_set_caps;
  basesink_class->query = gst_vstream_sink_query;
  basesink_class->propose_allocation = gst_vstream_sink_propose_allocation;
  basesink_class->event = gst_vstream_sink_event;
  basesink_class->stop = gst_vstream_sink_stop;
  basesink_class->unlock = gst_vstream_sink_unlock;
  basesink_class->unlock_stop = gst_vstream_sink_unlock_stop;
  videosink_class->show_frame = gst_vstream_sink_show_frame;
}

static void
gst_vstream_sink_init (GstVstreamSink * sink)
{
  sink->obj = gst_vstream_object_new (GST_ELEMENT (sink),
      V4L2_BUF_TYPE_VIDEO_OUTPUT);
  sink->poll = gst_poll_new (TRUE);
}


