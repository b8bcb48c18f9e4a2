/* vstream GStreamer plugin: vstreamsrc, a V4L2 capture source.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Reads frames from any V4L2 capture node (a vstream pipe's capture node,
 * vivid, a webcam) and pushes the driver's own buffers downstream; see
 * vstreambufferpool.c for when a frame is copied instead.
 *
 *   gst-launch-1.0 vstreamsrc device=/dev/video1 ! videoconvert ! autovideosink
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "vstreamsrc.h"
#include "vstreamobject.h"
#include "vstreamsysfs.h"
#include "vstreamcontrols.h"
#include "vstreambufferpool.h"
#include "vstreamformats.h"

GST_DEBUG_CATEGORY_STATIC (gst_vstream_src_debug);
#define GST_CAT_DEFAULT gst_vstream_src_debug

struct _GstVstreamSrc
{
  GstPushSrc parent;
  GstVstreamObject *obj;
  GstBufferPool *pool;          /* replaced under the object lock */
  gboolean flushing;            /* unlock() to unlock_stop(): object lock */
  GstPoll *poll;                /* read() mode only */
  GstPollFD pollfd;
  gboolean have_seq;
  guint32 last_seq;
  GstClockTime last_drv;        /* the last driver timestamp used */
  gboolean bad_drv;             /* one was not: said once */
  guint64 processed;
  guint64 dropped;
  gboolean need_plain;          /* downstream takes no GstVideoMeta ... */
  GstVideoInfo plain;           /* ... and reads this default layout */

  /* crop-top, crop-left, crop-bottom, crop-right, as v4l2src has them */
  guint crop[4];
  struct v4l2_rect crop_bounds; /* the device's, once known */
  struct v4l2_rect crop_rect;   /* what set_caps asks for ... */
  gboolean apply_crop;          /* ... when TRUE; else the default */
};

enum
{
  PROP_CROP_TOP = GST_VSTREAM_PROP_EXTRA_CONTROLS + 1,
  PROP_CROP_LEFT,
  PROP_CROP_BOTTOM,
  PROP_CROP_RIGHT,
  PROP_CROP_BOUNDS,
};

#define gst_vstream_src_parent_class parent_class
G_DEFINE_TYPE_WITH_CODE (GstVstreamSrc, gst_vstream_src, GST_TYPE_PUSH_SRC,
    GST_DEBUG_CATEGORY_INIT (gst_vstream_src_debug, "vstreamsrc", 0,
        "vstream video source");
    G_IMPLEMENT_INTERFACE (GST_TYPE_URI_HANDLER,
        gst_vstream_uri_handler_init)
    G_IMPLEMENT_INTERFACE (GST_TYPE_COLOR_BALANCE,
        gst_vstream_color_balance_init));
GST_ELEMENT_REGISTER_DEFINE (vstreamsrc, "vstreamsrc", GST_RANK_NONE,
    GST_TYPE_VSTREAM_SRC);

/* The device's crop bounds; FALSE if it has none (cannot crop). */
static gboolean
crop_bounds (GstVstreamObject * obj, struct v4l2_rect *r)
{
  struct v4l2_selection sel = {.type = obj->type,
    .target = V4L2_SEL_TGT_CROP_BOUNDS
  };

  if (gst_vstream_object_ioctl (obj, VIDIOC_G_SELECTION, &sel) < 0)
    return FALSE;
  *r = sel.r;
  return TRUE;
}

/* Crop to @r, or back to the default with NULL (where the device can
 * crop at all: a device that cannot is no failure then). */
static gboolean
crop (GstVstreamObject * obj, const struct v4l2_rect *r)
{
  struct v4l2_selection sel = {.type = obj->type,
    .target = V4L2_SEL_TGT_CROP_DEFAULT
  };

  if (!r) {
    if (gst_vstream_object_ioctl (obj, VIDIOC_G_SELECTION, &sel) < 0)
      return TRUE;
  } else {
    sel.r = *r;
  }
  sel.target = V4L2_SEL_TGT_CROP;
  return gst_vstream_object_ioctl (obj, VIDIOC_S_SELECTION, &sel) == 0 || !r;
}

static void
gst_vstream_src_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstVstreamSrc *self = GST_VSTREAM_SRC (object);

  if (prop_id >= PROP_CROP_TOP && prop_id <= PROP_CROP_RIGHT)
    self->crop[prop_id - PROP_CROP_TOP] = g_value_get_uint (value);
  else if (!gst_vstream_object_set_property (self->obj, prop_id, value))
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
gst_vstream_src_get_property (GObject * object, guint prop_id, GValue * value,
    GParamSpec * pspec)
{
  GstVstreamSrc *self = GST_VSTREAM_SRC (object);

  if (prop_id >= PROP_CROP_TOP && prop_id <= PROP_CROP_RIGHT) {
    g_value_set_uint (value, self->crop[prop_id - PROP_CROP_TOP]);
  } else if (prop_id == PROP_CROP_BOUNDS) {
    const gint r[4] = { self->crop_bounds.left, self->crop_bounds.top,
      (gint) self->crop_bounds.width, (gint) self->crop_bounds.height
    };
    GValue v = G_VALUE_INIT;
    guint i;

    g_value_init (&v, G_TYPE_INT);
    for (i = 0; i < 4; i++) {
      g_value_set_int (&v, r[i]);
      gst_value_array_append_value (value, &v);
    }
    g_value_unset (&v);
  } else if (!gst_vstream_object_get_property (self->obj, prop_id, value)) {
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
  }
}

/*
 * Crop as v4l2src does: the margins are taken from the device's crop
 * bounds (VIDIOC_G_SELECTION), the rectangle left is set before the
 * format (set_caps) and is the size negotiation prefers.  Margins that
 * leave nothing, or a device without cropping, are a warning: the
 * source goes on uncropped.
 */
static void
gst_vstream_src_setup_crop (GstVstreamSrc * src)
{
  guint top = src->crop[0], left = src->crop[1];
  guint bottom = src->crop[2], right = src->crop[3];
  struct v4l2_rect *b = &src->crop_bounds;
  gboolean want = top || left || bottom || right;

  src->apply_crop = FALSE;
  if (!crop_bounds (src->obj, b)) {
    if (want)
      GST_ELEMENT_WARNING (src, RESOURCE, SETTINGS,
          ("Device '%s' cannot crop: capturing the whole frame.",
              src->obj->device), ("VIDIOC_G_SELECTION: %s",
              g_strerror (errno)));
    return;
  }
  g_object_notify (G_OBJECT (src), "crop-bounds");
  if (!want)
    return;
  if ((guint64) left + right >= b->width || (guint64) top + bottom >= b->height) {
    GST_ELEMENT_WARNING (src, RESOURCE, SETTINGS,
        ("Cropping %u,%u,%u,%u (top, left, bottom, right) leaves nothing "
            "of device '%s''s %ux%u: capturing the whole frame.", top, left,
            bottom, right, src->obj->device, b->width, b->height), (NULL));
    return;
  }
  src->crop_rect.left = b->left + left;
  src->crop_rect.top = b->top + top;
  src->crop_rect.width = b->width - left - right;
  src->crop_rect.height = b->height - top - bottom;
  src->apply_crop = TRUE;
}

static GstStateChangeReturn
gst_vstream_src_change_state (GstElement * element, GstStateChange transition)
{
  GstVstreamSrc *src = GST_VSTREAM_SRC (element);
  GstStateChangeReturn ret;

  if (transition == GST_STATE_CHANGE_NULL_TO_READY) {
    if (!gst_vstream_object_open (src->obj))
      return GST_STATE_CHANGE_FAILURE;
    gst_vstream_object_reset_stats (src->obj);
    src->processed = src->dropped = 0;
    gst_poll_fd_init (&src->pollfd);
    src->pollfd.fd = src->obj->fd;
    gst_poll_add_fd (src->poll, &src->pollfd);
    gst_poll_fd_ctl_read (src->poll, &src->pollfd, TRUE);
  }
  ret = GST_ELEMENT_CLASS (parent_class)->change_state (element, transition);
  if (transition == GST_STATE_CHANGE_READY_TO_NULL) {
    gst_poll_remove_fd (src->poll, &src->pollfd);
    gst_vstream_object_close (src->obj);
  }
  return ret;
}

static GstCaps *
gst_vstream_src_get_caps (GstBaseSrc * bsrc, GstCaps * filter)
{
  GstVstreamSrc *src = GST_VSTREAM_SRC (bsrc);

  return gst_vstream_object_get_caps (src->obj, filter,
      gst_element_class_get_pad_template (GST_ELEMENT_GET_CLASS (src), "src"));
}

/* Prefer what the device is set to now: for a vstream capture node that
 * is the producer's format. */
/* Name the device when downstream takes none of its formats: the base
 * class would only say "not-negotiated". */
static gboolean
gst_vstream_src_negotiate (GstBaseSrc * bsrc)
{
  GstVstreamSrc *src = GST_VSTREAM_SRC (bsrc);
  GstCaps *mine = gst_pad_query_caps (GST_BASE_SRC_PAD (bsrc), NULL);
  GstCaps *peer = gst_pad_peer_query_caps (GST_BASE_SRC_PAD (bsrc), mine);
  gboolean none = gst_caps_is_empty (peer);

  if (none) {
    gchar *offer = gst_caps_to_string (mine);

    GST_ELEMENT_ERROR (src, CORE, NEGOTIATION,
        ("Downstream accepts none of the formats device '%s' offers.",
            src->obj->device), ("device offers %s", offer));
    g_free (offer);
  }
  gst_caps_unref (peer);
  gst_caps_unref (mine);
  if (none)
    return FALSE;
  gst_vstream_src_setup_crop (src);
  return GST_BASE_SRC_CLASS (parent_class)->negotiate (bsrc);
}

static GstCaps *
gst_vstream_src_fixate (GstBaseSrc * bsrc, GstCaps * caps)
{
  GstVstreamSrc *src = GST_VSTREAM_SRC (bsrc);
  struct v4l2_format fmt;
  struct v4l2_fract tpf = { 0, 0 };
  GstStructure *s;

  caps = gst_caps_make_writable (caps);
  if (gst_vstream_object_get_current (src->obj, &fmt, &tpf)) {
    GstStructure *pref = gst_vstream_structure_new (fmt.fmt.pix.pixelformat,
        fmt.fmt.pix.field);

    if (pref) {
      GstCaps *want, *both;

      /* cropping: its rectangle is the size to have */
      if (src->apply_crop) {
        fmt.fmt.pix.width = src->crop_rect.width;
        fmt.fmt.pix.height = src->crop_rect.height;
      }
      gst_structure_set (pref, "width", G_TYPE_INT, fmt.fmt.pix.width,
          "height", G_TYPE_INT, fmt.fmt.pix.field == V4L2_FIELD_ALTERNATE ?
          fmt.fmt.pix.height * 2 : fmt.fmt.pix.height, NULL);
      want = gst_caps_new_full (pref, NULL);
      if (fmt.fmt.pix.field == V4L2_FIELD_ALTERNATE)
        gst_caps_set_features (want, 0,
            gst_caps_features_new (GST_CAPS_FEATURE_FORMAT_INTERLACED, NULL));
#if GST_CHECK_VERSION(1, 24, 0)
      /* DMA_DRM caps prefer the same format and size */
      want = gst_vstream_caps_add_dma_drm (want);
#endif
      both = gst_caps_intersect_full (caps, want, GST_CAPS_INTERSECT_FIRST);
      gst_caps_unref (want);
      if (!gst_caps_is_empty (both)) {
        gst_caps_unref (caps);
        caps = both;
      } else {
        gst_caps_unref (both);
      }
    }
  }
  caps = gst_caps_truncate (caps);
  s = gst_caps_get_structure (caps, 0);
  gst_structure_fixate_field_nearest_int (s, "width", 640);
  gst_structure_fixate_field_nearest_int (s, "height", 480);
  if (tpf.numerator && tpf.denominator)
    gst_structure_fixate_field_nearest_fraction (s, "framerate",
        tpf.denominator, tpf.numerator);
  else
    gst_structure_fixate_field_nearest_fraction (s, "framerate", 30, 1);
  return GST_BASE_SRC_CLASS (parent_class)->fixate (bsrc, caps);
}

/* Make @pool (a new one, or NULL) the element's: see
 * gst_vstream_buffer_pool_replace() */
static void
gst_vstream_src_set_pool (GstVstreamSrc * src, GstBufferPool * pool)
{
  gst_vstream_buffer_pool_replace (GST_OBJECT (src), &src->pool, pool,
      &src->flushing);
}

static void
gst_vstream_src_release_pool (GstVstreamSrc * src)
{
  gst_vstream_src_set_pool (src, NULL);
}

static gboolean
gst_vstream_src_set_caps (GstBaseSrc * bsrc, GstCaps * caps)
{
  GstVstreamSrc *src = GST_VSTREAM_SRC (bsrc);
  GstVstreamObject *obj = src->obj;

  if (src->pool && obj->nego_caps && gst_caps_is_equal (caps, obj->nego_caps))
    return TRUE;
  /* renegotiation: stop, free the buffers, set the new format */
  gst_vstream_src_release_pool (src);
  if (!crop (obj, src->apply_crop ? &src->crop_rect : NULL))
    GST_ELEMENT_WARNING (src, RESOURCE, SETTINGS,
        ("Device '%s' refused the crop %ux%u at %d,%d: capturing the whole "
            "frame.", obj->device, src->crop_rect.width,
            src->crop_rect.height, src->crop_rect.left, src->crop_rect.top),
        ("VIDIOC_S_SELECTION: %s", g_strerror (errno)));
  if (!gst_vstream_object_set_format (obj, caps))
    return FALSE;
  src->have_seq = FALSE;
  src->last_drv = GST_CLOCK_TIME_NONE;
  if (obj->mode == GST_VSTREAM_IO_DMABUF_IMPORT) {
    GST_ELEMENT_ERROR (src, RESOURCE, SETTINGS,
        ("io-mode dmabuf-import is for vstreamsink; device '%s' cannot "
            "capture into imported buffers here.", obj->device), (NULL));
    return FALSE;
  }
  if (obj->mode == GST_VSTREAM_IO_RW)
    return TRUE;
  /* started in decide_allocation(), when downstream's needs are known */
  gst_vstream_src_set_pool (src, gst_vstream_buffer_pool_new (obj, obj->caps));
  return TRUE;
}

/* Start the pool with enough buffers that downstream can hold @held of
 * them (a queue, an encoder's reference frames) and the driver still
 * have its own minimum, so that holding them does not force copies. */
static gboolean
start_pool (GstVstreamSrc * src, guint held)
{
  GstStructure *config = gst_buffer_pool_get_config (src->pool);
  GstCaps *caps;
  guint size, min, max;

  gst_buffer_pool_config_get_params (config, &caps, &size, &min, &max);
  min = MIN (min + held, VIDEO_MAX_FRAME);
  gst_buffer_pool_config_set_params (config, caps, size, min, min);
  if (!gst_buffer_pool_set_config (src->pool, config))
    GST_DEBUG_OBJECT (src, "pool adjusted the buffer count");
  if (gst_buffer_pool_set_active (src->pool, TRUE))
    return TRUE;
  gst_vstream_src_release_pool (src);
  return FALSE;
}

/* Does @buf keep GStreamer's default layout for our caps, so that a peer
 * without GstVideoMeta reads it right? */
static gboolean
default_layout (GstVstreamSrc * src, GstBuffer * buf)
{
  GstVideoMeta *meta = gst_buffer_get_video_meta (buf);
  guint p;

  for (p = 0; meta && p < meta->n_planes; p++)
    if (meta->stride[p] != src->plain.stride[p] ||
        meta->offset[p] != src->plain.offset[p])
      return FALSE;
  return TRUE;
}

/* A frame in the driver's strides, for a peer that cannot read them: copy
 * it into the default layout (as v4l2src does); the driver buffer goes
 * back at once. */
static GstFlowReturn
copy_to_default_layout (GstVstreamSrc * src, GstBuffer ** buf)
{
  GstBuffer *copy = gst_buffer_new_allocate (NULL, src->plain.size, NULL);
  GstVideoFrame from, to;
  gboolean ok = FALSE;

  if (gst_video_frame_map (&from, &src->obj->info, *buf, GST_MAP_READ)) {
    if (gst_video_frame_map (&to, &src->plain, copy, GST_MAP_WRITE)) {
      ok = gst_video_frame_copy (&to, &from);
      gst_video_frame_unmap (&to);
    }
    gst_video_frame_unmap (&from);
  }
  gst_buffer_copy_into (copy, *buf, GST_BUFFER_COPY_FLAGS |
      GST_BUFFER_COPY_TIMESTAMPS, 0, -1);
  gst_buffer_unref (*buf);
  *buf = copy;
  if (!ok) {
    GST_ELEMENT_ERROR (src, STREAM, FAILED, ("Device '%s': could not copy a "
            "frame into the layout downstream reads.", src->obj->device),
        (NULL));
    return GST_FLOW_ERROR;
  }
  gst_vstream_object_count (src->obj, 0, 0, 1, 0);
  return GST_FLOW_OK;
}

/* Configure and activate downstream's @theirs for frames of our format.
 * An active pool keeps its configuration: it must already fit. */
static gboolean
configure_lender (GstVstreamSrc * src, GstBufferPool * theirs, guint size,
    guint min, guint max, gboolean * activated)
{
  GstVstreamObject *obj = src->obj;
  GstStructure *config = gst_buffer_pool_get_config (theirs);
  GstCaps *caps = NULL;
  gboolean ok;

  *activated = FALSE;
  if (gst_buffer_pool_is_active (theirs)) {
    ok = gst_buffer_pool_config_get_params (config, &caps, NULL, NULL, NULL)
        && caps && gst_caps_is_equal (caps, obj->caps);
    gst_structure_free (config);
    return ok;
  }
  size = MAX (size, obj->format.fmt.pix.sizeimage);
  gst_vstream_buffer_pool_config_pinnable (theirs, config, obj->caps, size,
      min, max);
  if (!gst_buffer_pool_set_config (theirs, config)) {
    /* the pool may have adjusted the request: take it if still valid */
    config = gst_buffer_pool_get_config (theirs);
    if (!gst_buffer_pool_config_validate_params (config, obj->caps, size,
            min, max)) {
      gst_structure_free (config);
      return FALSE;
    }
    if (!gst_buffer_pool_set_config (theirs, config))
      return FALSE;
  }
  *activated = gst_buffer_pool_set_active (theirs, TRUE);
  return *activated;
}

/*
 * mmap/dmabuf push the driver's buffers: nothing to allocate.  userptr
 * captures into buffers of the pool downstream proposes when its memory
 * can be lent to the driver; the base class then keeps that pool active.
 */
static gboolean
gst_vstream_src_decide_allocation (GstBaseSrc * bsrc, GstQuery * query)
{
  GstVstreamSrc *src = GST_VSTREAM_SRC (bsrc);
  GstVstreamObject *obj = src->obj;
  GstBufferPool *theirs = NULL;
  guint size = 0, min = 0, max = 0;
  gboolean activated = FALSE, lend = FALSE;

  /* the driver's strides go out in a GstVideoMeta; a peer that cannot
   * take one gets frames copied into the default layout */
  src->need_plain = !gst_query_find_allocation_meta (query,
      GST_VIDEO_META_API_TYPE, NULL) &&
      gst_video_info_from_caps (&src->plain, obj->caps) &&
      GST_VIDEO_INFO_FORMAT (&src->plain) != GST_VIDEO_FORMAT_ENCODED;
  if (gst_query_get_n_allocation_pools (query) > 0)
    gst_query_parse_nth_allocation_pool (query, 0, NULL, NULL, &min, NULL);
  if (src->pool && !gst_buffer_pool_is_active (src->pool) &&
      !start_pool (src, min))
    return FALSE;
  min = 0;
  if (src->pool && obj->mode == GST_VSTREAM_IO_USERPTR) {
    if (gst_query_get_n_allocation_pools (query) > 0)
      gst_query_parse_nth_allocation_pool (query, 0, &theirs, &size, &min,
          &max);
    /* NULL, or a pool that does not fit, ends an earlier loan */
    lend = theirs && configure_lender (src, theirs, size, min, max,
        &activated) && gst_vstream_buffer_pool_set_lender
        (GST_VSTREAM_BUFFER_POOL (src->pool), theirs);
    if (!lend)
      gst_vstream_buffer_pool_set_lender (GST_VSTREAM_BUFFER_POOL (src->pool),
          NULL);
    GST_INFO_OBJECT (src, "%s: frames go into %s", obj->device,
        lend ? GST_OBJECT_NAME (theirs) : "the pool's own memory");
  }
  if (!lend) {
    if (activated)
      gst_buffer_pool_set_active (theirs, FALSE);
    while (gst_query_get_n_allocation_pools (query) > 0)
      gst_query_remove_nth_allocation_pool (query, 0);
  }
  gst_clear_object (&theirs);
  return TRUE;
}

static gboolean
gst_vstream_src_stop (GstBaseSrc * bsrc)
{
  GstVstreamSrc *src = GST_VSTREAM_SRC (bsrc);

  gst_vstream_src_release_pool (src);
  gst_caps_replace (&src->obj->caps, NULL);
  gst_caps_replace (&src->obj->nego_caps, NULL);
  return TRUE;
}

/* unlock/unlock_stop: wake (or re-arm) a create() waiting on the device */
static void
gst_vstream_src_set_flushing (GstVstreamSrc * src, gboolean flushing)
{
  gst_vstream_buffer_pool_owner_set_flushing (GST_OBJECT (src), &src->pool,
      &src->flushing, flushing);
  gst_poll_set_flushing (src->poll, flushing);
}

static gboolean
gst_vstream_src_unlock (GstBaseSrc * bsrc)
{
  gst_vstream_src_set_flushing (GST_VSTREAM_SRC (bsrc), TRUE);
  return TRUE;
}

static gboolean
gst_vstream_src_unlock_stop (GstBaseSrc * bsrc)
{
  gst_vstream_src_set_flushing (GST_VSTREAM_SRC (bsrc), FALSE);
  return TRUE;
}

/* How long one buffer lasts: a frame, or a field for ALTERNATE. */
static GstClockTime
period (GstVstreamObject * obj)
{
  if (!obj->tpf.denominator)
    return GST_CLOCK_TIME_NONE;
  return gst_util_uint64_scale (GST_SECOND, obj->tpf.numerator,
      obj->tpf.denominator * (obj->format.fmt.pix.field ==
          V4L2_FIELD_ALTERNATE ? 2 : 1));
}

static gboolean
gst_vstream_src_query (GstBaseSrc * bsrc, GstQuery * query)
{
  GstVstreamSrc *src = GST_VSTREAM_SRC (bsrc);
  GstVstreamObject *obj = src->obj;

  if (GST_QUERY_TYPE (query) == GST_QUERY_LATENCY && obj->caps &&
      obj->tpf.denominator) {
    GstClockTime frame = period (obj);
    guint count = src->pool ?
        gst_vstream_buffer_pool_count (GST_VSTREAM_BUFFER_POOL (src->pool)) : 1;

    /* a buffer is late by up to one period; the driver holds at most
     * count of them */
    gst_query_set_latency (query, TRUE, frame, frame * count);
    return TRUE;
  }
  return GST_BASE_SRC_CLASS (parent_class)->query (bsrc, query);
}

static GstFlowReturn
read_frame (GstVstreamSrc * src, GstBuffer ** out)
{
  GstVstreamObject *obj = src->obj;
  gsize size = obj->format.fmt.pix.sizeimage;
  GstBuffer *buf = gst_buffer_new_allocate (NULL, size, NULL);
  GstMapInfo map;
  gssize n;

  gst_buffer_map (buf, &map, GST_MAP_WRITE);
  for (;;) {
    n = read (obj->fd, map.data, size);
    if (n >= 0 || (errno != EAGAIN && errno != EINTR))
      break;
    if (gst_poll_wait (src->poll, GST_CLOCK_TIME_NONE) < 0 && errno == EBUSY) {
      gst_buffer_unmap (buf, &map);
      gst_buffer_unref (buf);
      return GST_FLOW_FLUSHING;
    }
  }
  gst_buffer_unmap (buf, &map);
  if (n <= 0) {
    gst_buffer_unref (buf);
    GST_ELEMENT_ERROR (src, RESOURCE, READ,
        ("Could not read from device '%s'.", obj->device),
        ("read: %s", n < 0 ? g_strerror (errno) : "end of stream"));
    return GST_FLOW_ERROR;
  }
  gst_buffer_set_size (buf, n);
  GST_BUFFER_PTS (buf) = g_get_monotonic_time () * GST_USECOND;
  gst_vstream_object_count (obj, 1, 0, 1, 0);
  *out = buf;
  return GST_FLOW_OK;
}

/*
 * The driver's timestamp of @buf (CLOCK_MONOTONIC, or NONE: the pool keeps
 * only those) as running time on the pipeline clock.  As v4l2src does, a
 * timestamp in the future, going backwards or older than the clock itself
 * is not used, and a buffer without one is taken to be a period late.
 */
static void
timestamp (GstVstreamSrc * src, GstBuffer * buf)
{
  GstClock *clock = gst_element_get_clock (GST_ELEMENT_CAST (src));
  GstClockTime drv = GST_BUFFER_PTS (buf), pts = GST_CLOCK_TIME_NONE;
  GstVstreamObject *obj = src->obj;
  GstClockTime dur = period (obj);

  if (clock) {
    GstClockTime now = gst_clock_get_time (clock);
    GstClockTime base = gst_element_get_base_time (GST_ELEMENT_CAST (src));
    GstClockTime mono = g_get_monotonic_time () * GST_USECOND;
    GstClockTime delay = GST_CLOCK_TIME_IS_VALID (dur) ? dur : 0;
    const gchar *bad = NULL;

    if (!GST_CLOCK_TIME_IS_VALID (drv))
      ;
    else if (drv > mono)
      bad = "in the future";
    else if (GST_CLOCK_TIME_IS_VALID (src->last_drv) && drv < src->last_drv)
      bad = "going backwards";
    else if (mono - drv > drv)
      bad = "older than the clock";
    else {
      delay = mono - drv;
      src->last_drv = drv;
    }
    if (bad && !src->bad_drv)
      GST_WARNING_OBJECT (src, "device %s: timestamp %" GST_TIME_FORMAT
          " is %s, not used", obj->device, GST_TIME_ARGS (drv), bad);
    src->bad_drv |= bad != NULL;
    pts = now >= base + delay ? now - base - delay : 0;
    gst_object_unref (clock);
  }
  GST_BUFFER_PTS (buf) = pts;
  GST_BUFFER_DTS (buf) = GST_CLOCK_TIME_NONE;
  GST_BUFFER_DURATION (buf) = dur;
}

/* Sequence gaps are frames the driver dropped: count them and say so in a
 * QoS message about @buf, timestamped already (running time). */
static void
count_drops (GstVstreamSrc * src, GstBuffer * buf)
{
  GstSegment *segment = &GST_BASE_SRC (src)->segment;
  GstClockTime pts = GST_BUFFER_PTS (buf);
  guint32 seq = GST_BUFFER_OFFSET (buf);
  guint32 dropped = 0;
  GstMessage *qos;

  if (src->have_seq && seq > src->last_seq + 1)
    dropped = seq - src->last_seq - 1;
  src->have_seq = TRUE;
  src->last_seq = seq;
  src->processed++;
  if (!dropped)
    return;
  src->dropped += dropped;
  gst_vstream_object_count (src->obj, 0, dropped, 0, 0);
  GST_INFO_OBJECT (src, "device %s dropped %u frame(s) before %u",
      src->obj->device, dropped, seq);
  qos = gst_message_new_qos (GST_OBJECT (src), TRUE,
      gst_segment_to_running_time (segment, GST_FORMAT_TIME, pts),
      gst_segment_to_stream_time (segment, GST_FORMAT_TIME, pts), pts,
      GST_BUFFER_DURATION (buf));
  gst_message_set_qos_stats (qos, GST_FORMAT_BUFFERS, src->processed,
      src->dropped);
  gst_element_post_message (GST_ELEMENT (src), qos);
}

/*
 * A raw frame that ends before its last plane's last line (bytesused too
 * small, as with V4L2_BUF_FLAG_ERROR) cannot be mapped as a video frame
 * downstream, and a frame the driver flagged in error has a damaged
 * picture: neither is pushed, as v4l2src drops them.  The driver's
 * sizeimage may be larger than that end: it is not what is checked.
 */
static gboolean
whole_frame (GstVstreamSrc * src, GstBuffer * buf)
{
  GstVideoInfo *info = &src->obj->info;
  GstVideoMeta *meta = gst_buffer_get_video_meta (buf);
  guint last = GST_VIDEO_INFO_N_PLANES (info) - 1;
  gint comp[GST_VIDEO_MAX_COMPONENTS];

  if (GST_BUFFER_FLAG_IS_SET (buf, GST_BUFFER_FLAG_CORRUPTED))
    return FALSE;
  if (GST_VIDEO_INFO_FORMAT (info) == GST_VIDEO_FORMAT_ENCODED)
    return TRUE;
  /* where the planes are: the meta says (a memory per plane moves them) */
  gst_video_format_info_component (info->finfo, last, comp);
  return gst_buffer_get_size (buf) >= (meta ? meta->offset[last] :
      info->offset[last]) + (gsize) (meta ? meta->stride[last] :
      info->stride[last]) * GST_VIDEO_INFO_COMP_HEIGHT (info, comp[0]);
}

static GstFlowReturn
gst_vstream_src_create (GstPushSrc * psrc, GstBuffer ** out)
{
  GstVstreamSrc *src = GST_VSTREAM_SRC (psrc);
  GstFlowReturn ret;
  GstBuffer *buf = NULL;

  if (!src->obj->caps)
    return GST_FLOW_NOT_NEGOTIATED;
  if (src->pool && gst_vstream_object_source_changed (src->obj)) {
    /* The producer changed format: give the buffers back so the node
     * follows it, then take what it offers now. */
    GST_INFO_OBJECT (src, "source change on %s: renegotiating",
        src->obj->device);
    gst_vstream_src_release_pool (src);
    gst_caps_replace (&src->obj->probed_caps, NULL);
    gst_caps_replace (&src->obj->caps, NULL);
    gst_caps_replace (&src->obj->nego_caps, NULL);
    if (!gst_base_src_negotiate (GST_BASE_SRC (src)))
      return GST_FLOW_NOT_NEGOTIATED;
  }
  if (!src->pool)
    ret = read_frame (src, &buf);
  else {
    while ((ret = gst_buffer_pool_acquire_buffer (src->pool, &buf,
                NULL)) == GST_FLOW_OK && !whole_frame (src, buf)) {
      /* its sequence number is skipped: count_drops() counts it */
      GST_WARNING_OBJECT (src, "device %s sent a %s frame (%" G_GSIZE_FORMAT
          " of %" G_GSIZE_FORMAT " bytes): dropped", src->obj->device,
          GST_BUFFER_FLAG_IS_SET (buf, GST_BUFFER_FLAG_CORRUPTED) ?
          "corrupted" : "short", gst_buffer_get_size (buf),
          src->obj->info.size);
      gst_buffer_unref (buf);
    }
    if (ret == GST_FLOW_OK) {
      gst_vstream_object_count (src->obj, 1, 0, 0, 0);
      if (src->need_plain && !default_layout (src, buf))
        ret = copy_to_default_layout (src, &buf);
      else
        ret = gst_vstream_buffer_pool_maybe_copy
            (GST_VSTREAM_BUFFER_POOL (src->pool), &buf);
    }
  }
  if (ret != GST_FLOW_OK)
    return ret;
  /* driver time in, running time out: QoS speaks running time */
  timestamp (src, buf);
  if (src->pool)
    count_drops (src, buf);
  *out = buf;
  return GST_FLOW_OK;
}

static void
gst_vstream_src_finalize (GObject * object)
{
  GstVstreamSrc *src = GST_VSTREAM_SRC (object);

  gst_vstream_object_disown (src->obj);
  gst_poll_free (src->poll);
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static void
gst_vstream_src_class_init (GstVstreamSrcClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseSrcClass *basesrc_class = GST_BASE_SRC_CLASS (klass);
  GstPushSrcClass *pushsrc_class = GST_PUSH_SRC_CLASS (klass);
  GstCaps *caps = gst_vstream_all_caps ();

  gobject_class->set_property = gst_vstream_src_set_property;
  gobject_class->get_property = gst_vstream_src_get_property;
  gobject_class->finalize = gst_vstream_src_finalize;

  gst_vstream_object_install_properties (gobject_class,
      "V4L2 capture node to read (default: the first vstream capture "
      "node, else /dev/video0)",
      "frames, drops (sequence gaps), copies and zero-copy pushes");
  {
    static const gchar *edges[] = { "top", "left", "bottom", "right" };
    guint i;

    for (i = 0; i < G_N_ELEMENTS (edges); i++) {
      gchar *name = g_strdup_printf ("crop-%s", edges[i]);
      gchar *blurb = g_strdup_printf ("Pixels to crop at the %s of the "
          "device's frame (its crop bounds)", edges[i]);

      g_object_class_install_property (gobject_class, PROP_CROP_TOP + i,
          g_param_spec_uint (name, name, blurb, 0, G_MAXUINT, 0,
              G_PARAM_READWRITE | GST_PARAM_MUTABLE_READY));
      g_free (name);
      g_free (blurb);
    }
  }
  g_object_class_install_property (gobject_class, PROP_CROP_BOUNDS,
      gst_param_spec_array ("crop-bounds", "Crop bounds",
          "The device's crop bounds, <x, y, width, height>, once negotiating",
          g_param_spec_int ("rect-value", "Rectangle value",
              "x, y, width or height", G_MININT, G_MAXINT, 0,
              G_PARAM_READABLE | G_PARAM_STATIC_STRINGS),
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));

  gst_element_class_set_static_metadata (element_class,
      "vstream video source", "Source/Video",
      "Captures frames from a V4L2 capture device without copying them",
      "The vstream developers");
  gst_element_class_add_pad_template (element_class,
      gst_pad_template_new ("src", GST_PAD_SRC, GST_PAD_ALWAYS, caps));
  gst_caps_unref (caps);

  element_class->change_state = gst_vstream_src_change_state;
  basesrc_class->get_caps = gst_vstream_src_get_caps;
  basesrc_class->negotiate = gst_vstream_src_negotiate;
  basesrc_class->fixate = gst_vstream_src_fixate;
  basesrc_class->set_caps = gst_vstream_src_set_caps;
  basesrc_class->decide_allocation = gst_vstream_src_decide_allocation;
  basesrc_class->stop = gst_vstream_src_stop;
  basesrc_class->unlock = gst_vstream_src_unlock;
  basesrc_class->unlock_stop = gst_vstream_src_unlock_stop;
  basesrc_class->query = gst_vstream_src_query;
  pushsrc_class->create = gst_vstream_src_create;

}

static void
gst_vstream_src_init (GstVstreamSrc * src)
{
  src->obj = gst_vstream_object_new (GST_ELEMENT (src),
      V4L2_BUF_TYPE_VIDEO_CAPTURE);
  src->poll = gst_poll_new (TRUE);
  src->last_drv = GST_CLOCK_TIME_NONE;
  gst_base_src_set_format (GST_BASE_SRC (src), GST_FORMAT_TIME);
  gst_base_src_set_live (GST_BASE_SRC (src), TRUE);
}

