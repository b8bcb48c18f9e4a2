/* vstream GStreamer plugin: the device core shared by vstreamsrc and
 * vstreamsink.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Opens and checks the node, keeps its probed caps (vstreamprobe.c), sets
 * the negotiated format and lays out frames in the driver's layout.
 * Every failure becomes an element error that names the device and the
 * cause.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <gst/base/gstbasesink.h>
#include <gst/allocators/allocators.h>

#include "vstreamobject.h"
#include "vstreamcontrols.h"
#include "vstreamformats.h"
#include "vstreammplane.h"
#include "vstreamprobe.h"
#include "vstreamsysfs.h"

GST_DEBUG_CATEGORY_EXTERN (gst_vstream_debug);
#define GST_CAT_DEFAULT gst_vstream_debug

GType
gst_vstream_io_mode_get_type (void)
{
  static GType type = 0;
  static const GEnumValue modes[] = {
    {GST_VSTREAM_IO_AUTO, "Pick the best the device offers (mmap)", "auto"},
    {GST_VSTREAM_IO_RW, "read()/write() with copies", "rw"},
    {GST_VSTREAM_IO_MMAP, "Driver buffers mapped into the process", "mmap"},
    {GST_VSTREAM_IO_USERPTR,
        "Process memory lent to the driver (src: downstream's buffers)",
        "userptr"},
    {GST_VSTREAM_IO_DMABUF, "Driver buffers exported as dma-buf", "dmabuf"},
    {GST_VSTREAM_IO_DMABUF_IMPORT, "Upstream dma-buf lent to the driver",
        "dmabuf-import"},
    {0, NULL, NULL},
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstVstreamIOMode", modes);
    g_once_init_leave (&type, t);
  }
  return type;
}

void
gst_vstream_object_install_properties (GObjectClass * gobject_class,
    const gchar * device_blurb, const gchar * stats_blurb)
{
  g_object_class_install_property (gobject_class, GST_VSTREAM_PROP_DEVICE,
      g_param_spec_string ("device", "Device", device_blurb, NULL,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));
  g_object_class_install_property (gobject_class, GST_VSTREAM_PROP_DEVICE_FD,
      g_param_spec_int ("device-fd", "File descriptor",
          "The open device's file descriptor (-1 when closed)", -1,
          G_MAXINT, -1, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  g_object_class_install_property (gobject_class,
      GST_VSTREAM_PROP_DEVICE_NAME, g_param_spec_string ("device-name",
          "Device name", "Card name the driver reports", NULL,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  g_object_class_install_property (gobject_class, GST_VSTREAM_PROP_IO_MODE,
      g_param_spec_enum ("io-mode", "I/O mode",
          "How frames move between the driver and the pipeline",
          GST_TYPE_VSTREAM_IO_MODE, GST_VSTREAM_IO_AUTO,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));
  g_object_class_install_property (gobject_class,
      GST_VSTREAM_PROP_MIN_BUFFERS, g_param_spec_uint ("min-buffers",
          "Minimum buffers",
          "Driver buffers to allocate (the driver may ask for more)", 2,
          VIDEO_MAX_FRAME, 4, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));
  g_object_class_install_property (gobject_class, GST_VSTREAM_PROP_STATS,
      g_param_spec_boxed ("stats", "Statistics", stats_blurb,
          GST_TYPE_STRUCTURE, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  g_object_class_install_property (gobject_class,
      GST_VSTREAM_PROP_EXTRA_CONTROLS, g_param_spec_boxed ("extra-controls",
          "Extra controls", "Device controls to set, by name as v4l2src "
          "names them (c,brightness=10,frames_without_producer=\"Last Frame\"): "
          "at open, and at once when set while open",
          GST_TYPE_STRUCTURE, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_PLAYING));
  gst_type_mark_as_plugin_api (GST_TYPE_VSTREAM_IO_MODE, 0);
}

gboolean
gst_vstream_object_set_property (GstVstreamObject * obj, guint prop_id,
    const GValue * value)
{
  switch (prop_id) {
    case GST_VSTREAM_PROP_DEVICE:
      GST_OBJECT_LOCK (obj->element);
      g_free (obj->device);
      obj->device = g_value_dup_string (value);
      obj->device_found = FALSE;
      GST_OBJECT_UNLOCK (obj->element);
      return TRUE;
    case GST_VSTREAM_PROP_EXTRA_CONTROLS:
      g_mutex_lock (&obj->controls_lock);
      g_clear_pointer (&obj->extra_controls, gst_structure_free);
      if (gst_value_get_structure (value))
        obj->extra_controls = gst_structure_copy (gst_value_get_structure
            (value));
      /* while playing too (as v4l2src since 1.28) */
      gst_vstream_controls_apply (obj);
      g_mutex_unlock (&obj->controls_lock);
      return TRUE;
    case GST_VSTREAM_PROP_IO_MODE:
      obj->req_mode = g_value_get_enum (value);
      return TRUE;
    case GST_VSTREAM_PROP_MIN_BUFFERS:
      obj->min_buffers = g_value_get_uint (value);
      return TRUE;
    default:
      return FALSE;
  }
}

gboolean
gst_vstream_object_get_property (GstVstreamObject * obj, guint prop_id,
    GValue * value)
{
  switch (prop_id) {
    case GST_VSTREAM_PROP_DEVICE:
      GST_OBJECT_LOCK (obj->element);
      g_value_set_string (value, obj->device);
      GST_OBJECT_UNLOCK (obj->element);
      return TRUE;
    case GST_VSTREAM_PROP_DEVICE_NAME:
      g_value_set_string (value, obj->device_name);
      return TRUE;
    case GST_VSTREAM_PROP_DEVICE_FD:
      g_value_set_int (value, obj->fd);
      return TRUE;
    case GST_VSTREAM_PROP_EXTRA_CONTROLS:
      g_mutex_lock (&obj->controls_lock);
      gst_value_set_structure (value, obj->extra_controls);
      g_mutex_unlock (&obj->controls_lock);
      return TRUE;
    case GST_VSTREAM_PROP_IO_MODE:
      g_value_set_enum (value, obj->req_mode);
      return TRUE;
    case GST_VSTREAM_PROP_MIN_BUFFERS:
      g_value_set_uint (value, obj->min_buffers);
      return TRUE;
    case GST_VSTREAM_PROP_STATS:
      g_value_take_boxed (value, gst_vstream_object_stats (obj, NULL));
      return TRUE;
    default:
      return FALSE;
  }
}

static int
default_ioctl (int fd, unsigned long request, void *arg)
{
  return ioctl (fd, request, arg);
}

static GstVstreamDeviceHooks hooks;

void
gst_vstream_set_device_hooks (const GstVstreamDeviceHooks * h)
{
  if (h)
    hooks = *h;
  else
    memset (&hooks, 0, sizeof (hooks));
}

/* A driver buffer mapped read/write; MAP_FAILED on error. */
void *
gst_vstream_mmap (gint fd, gsize length, off_t offset)
{
  if (hooks.mmap)
    return hooks.mmap (length, fd, offset);
  return mmap (NULL, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, offset);
}

void
gst_vstream_munmap (void *addr, gsize length)
{
  if (hooks.munmap)
    hooks.munmap (addr, length);
  else
    munmap (addr, length);
}

static GQuark
object_quark (void)
{
  return g_quark_from_static_string ("vstream-object");
}

GstVstreamObject *
gst_vstream_object_new (GstElement * element, enum v4l2_buf_type type)
{
  GstVstreamObject *obj = g_new0 (GstVstreamObject, 1);

  obj->refcount = 1;
  obj->element = element;
  obj->type = type;
  obj->fd = -1;
  obj->ioctl = hooks.ioctl ? hooks.ioctl : default_ioctl;
  obj->min_buffers = 4;
  g_mutex_init (&obj->stats_lock);
  g_mutex_init (&obj->controls_lock);
  g_object_set_qdata (G_OBJECT (element), object_quark (), obj);
  return obj;
}

GstVstreamObject *
gst_vstream_object_of (GstElement * element)
{
  return g_object_get_qdata (G_OBJECT (element), object_quark ());
}

GstVstreamObject *
gst_vstream_object_ref (GstVstreamObject * obj)
{
  g_atomic_int_inc (&obj->refcount);
  return obj;
}

void
gst_vstream_object_unref (GstVstreamObject * obj)
{
  if (!g_atomic_int_dec_and_test (&obj->refcount))
    return;
  gst_vstream_object_close (obj);
  g_mutex_clear (&obj->stats_lock);
  g_mutex_clear (&obj->controls_lock);
  g_clear_pointer (&obj->extra_controls, gst_structure_free);
  g_free (obj->device);
  g_free (obj);
}

/* The element is finalized: close its node and drop its reference; pools
 * and allocators still holding the object no longer post to it. */
void
gst_vstream_object_disown (GstVstreamObject * obj)
{
  gst_vstream_object_close (obj);
  obj->element = NULL;
  gst_vstream_object_unref (obj);
}

/* One call to the device (@func, or ioctl() if NULL), through
 * vstreammplane.c on a multi-planar one; retried when a signal interrupts
 * it. */
gint
gst_vstream_device_call (GstVstreamIoctlFunc func, gboolean mplane, gint fd,
    unsigned long request, void *arg)
{
  int ret;

  if (!func)
    func = default_ioctl;
  do
    ret = mplane ? gst_vstream_mplane_ioctl (func, fd, request, arg) :
        func (fd, request, arg);
  while (ret < 0 && errno == EINTR);
  return ret;
}

gint
gst_vstream_object_ioctl_fd (GstVstreamObject * obj, gint fd,
    unsigned long request, void *arg)
{
  return gst_vstream_device_call (obj->ioctl, obj->mplane, fd, request, arg);
}

gint
gst_vstream_object_ioctl (GstVstreamObject * obj, unsigned long request,
    void *arg)
{
  return gst_vstream_object_ioctl_fd (obj, obj->fd, request, arg);
}

static gboolean
is_output (GstVstreamObject * obj)
{
  return obj->type == V4L2_BUF_TYPE_VIDEO_OUTPUT;
}

/* The buffer type the device itself uses (obj->type is what the code
 * above vstreammplane.c speaks). */
enum v4l2_buf_type
gst_vstream_object_buf_type (GstVstreamObject * obj)
{
  if (!obj->mplane)
    return obj->type;
  return is_output (obj) ? V4L2_BUF_TYPE_VIDEO_OUTPUT_MPLANE :
      V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE;
}

gboolean
gst_vstream_object_is_open (GstVstreamObject * obj)
{
  return obj->fd >= 0;
}

gboolean
gst_vstream_object_open (GstVstreamObject * obj)
{
  struct stat st;
  guint32 caps;
  guint32 want = is_output (obj) ? V4L2_CAP_VIDEO_OUTPUT :
      V4L2_CAP_VIDEO_CAPTURE;

  if (!obj->device || obj->device_found) {
    /* looked for at each open: pipes come and go; the property may be
     * read meanwhile */
    gchar *found = gst_vstream_default_device (is_output (obj)), *old;

    GST_OBJECT_LOCK (obj->element);
    old = obj->device;
    obj->device = found;
    obj->device_found = TRUE;
    GST_OBJECT_UNLOCK (obj->element);
    g_free (old);
    GST_INFO_OBJECT (obj->element, "no device set: opening %s", found);
  }
  if (stat (obj->device, &st) < 0) {
    GST_ELEMENT_ERROR (obj->element, RESOURCE, NOT_FOUND,
        ("Device '%s' does not exist.", GST_STR_NULL (obj->device)),
        ("stat: %s", g_strerror (errno)));
    return FALSE;
  }
  if (!S_ISCHR (st.st_mode)) {
    GST_ELEMENT_ERROR (obj->element, RESOURCE, NOT_FOUND,
        ("'%s' is not a device.", obj->device), (NULL));
    return FALSE;
  }
  obj->fd = open (obj->device, O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (obj->fd < 0) {
    GST_ELEMENT_ERROR (obj->element, RESOURCE, OPEN_READ_WRITE,
        ("Could not open device '%s' for reading and writing.", obj->device),
        ("open: %s", g_strerror (errno)));
    return FALSE;
  }
  memset (&obj->vcap, 0, sizeof (obj->vcap));
  if (gst_vstream_object_ioctl (obj, VIDIOC_QUERYCAP, &obj->vcap) < 0) {
    GST_ELEMENT_ERROR (obj->element, RESOURCE, SETTINGS,
        ("Device '%s' is not a V4L2 device.", obj->device),
        ("VIDIOC_QUERYCAP: %s", g_strerror (errno)));
    goto fail;
  }
  caps = (obj->vcap.capabilities & V4L2_CAP_DEVICE_CAPS) ?
      obj->vcap.device_caps : obj->vcap.capabilities;
  obj->mplane = gst_vstream_caps_are_mplane (caps, is_output (obj));
  if (!(caps & want) && !obj->mplane) {
    GST_ELEMENT_ERROR (obj->element, RESOURCE, NOT_FOUND,
        ("Device '%s' is not a %s device.", obj->device,
            is_output (obj) ? "video output" : "video capture"),
        ("device caps 0x%08x", caps));
    goto fail;
  }
  g_free (obj->device_name);
  obj->device_name = g_strndup ((const gchar *) obj->vcap.card,
      sizeof (obj->vcap.card));
  {
    /* V4L2_FIELD_INTERLACED's field order is the standard's: M/NTSC sends
     * the bottom field first, every other standard (and a device with
     * none, ENOTTY) the top field */
    v4l2_std_id std = 0;

    obj->bottom_first = gst_vstream_object_ioctl (obj, VIDIOC_G_STD,
        &std) == 0 && (std & V4L2_STD_525_60) && !(std & V4L2_STD_625_50);
  }
  if (!is_output (obj)) {
    /* a producer that changes format tells its readers so */
    struct v4l2_event_subscription sub = {.type = V4L2_EVENT_SOURCE_CHANGE };

    obj->watch_source =
        gst_vstream_object_ioctl (obj, VIDIOC_SUBSCRIBE_EVENT, &sub) == 0;
  }
  GST_INFO_OBJECT (obj->element, "opened %s (%s), caps 0x%08x%s", obj->device,
      obj->device_name, caps, obj->mplane ? ", multi-planar" : "");
  g_mutex_lock (&obj->controls_lock);
  gst_vstream_controls_probe (obj);
  gst_vstream_controls_apply (obj);
  g_mutex_unlock (&obj->controls_lock);
  return TRUE;

fail:
  gst_vstream_object_close (obj);
  return FALSE;
}

/* Did the device say its source changed format since the last call? */
gboolean
gst_vstream_object_source_changed (GstVstreamObject * obj)
{
  struct v4l2_event ev;
  gboolean changed = FALSE;

  if (!obj->watch_source)
    return FALSE;
  memset (&ev, 0, sizeof (ev));
  while (gst_vstream_object_ioctl (obj, VIDIOC_DQEVENT, &ev) == 0)
    changed |= ev.type == V4L2_EVENT_SOURCE_CHANGE;
  return changed;
}

void
gst_vstream_object_close (GstVstreamObject * obj)
{
  g_mutex_lock (&obj->controls_lock);
  if (obj->fd >= 0)
    close (obj->fd);
  obj->fd = -1;
  gst_vstream_controls_clear (obj);
  g_mutex_unlock (&obj->controls_lock);
  obj->watch_source = FALSE;
  gst_caps_replace (&obj->probed_caps, NULL);
  gst_caps_replace (&obj->caps, NULL);
  gst_caps_replace (&obj->nego_caps, NULL);
  g_clear_pointer (&obj->device_name, g_free);
}

GstCaps *
gst_vstream_object_probe_caps (GstVstreamObject * obj)
{
  if (!obj->probed_caps) {
    obj->probed_caps = gst_vstream_probe_fd_caps (obj->fd,
        gst_vstream_object_buf_type (obj), obj->ioctl);
    GST_DEBUG_OBJECT (obj->element, "probed caps %" GST_PTR_FORMAT,
        obj->probed_caps);
  }
  return gst_caps_ref (obj->probed_caps);
}

#if GST_CHECK_VERSION(1, 24, 0)
/*
 * GStreamer >= 1.24 negotiates dma-bufs as video/x-raw(memory:DMABuf),
 * format=DMA_DRM, drm-format=FOURCC[:MODIFIER].  In the dma-buf io-modes
 * each system-memory structure gets such a twin (linear: V4L2 single-plane
 * buffers have no modifier), after the system ones so that pipelines that
 * map the memory negotiate as before, and consumers that need dma-bufs
 * (VA, GL, Wayland, v4l2codecs) link without a download.
 */
GstCaps *
gst_vstream_caps_add_dma_drm (GstCaps * caps)
{
  GstCaps *drm = gst_caps_new_empty ();
  guint i, n = gst_caps_get_size (caps);

  for (i = 0; i < n; i++) {
    GstStructure *s = gst_caps_get_structure (caps, i);
    const gchar *fmt = gst_structure_get_string (s, "format");
    GstVideoFormat vf = fmt ? gst_video_format_from_string (fmt) :
        GST_VIDEO_FORMAT_UNKNOWN;
    guint32 fourcc = gst_video_dma_drm_fourcc_from_format (vf);
    GstCapsFeatures *f = gst_caps_get_features (caps, i);
    GstStructure *d;
    gchar *name;

    if (!gst_structure_has_name (s, "video/x-raw") || !fourcc ||
        (f && !gst_caps_features_is_any (f) &&
            gst_caps_features_contains (f,
                GST_CAPS_FEATURE_FORMAT_INTERLACED)))
      continue;
    name = gst_video_dma_drm_fourcc_to_string (fourcc, 0);
    d = gst_structure_copy (s);
    gst_structure_set (d, "format", G_TYPE_STRING, "DMA_DRM",
        "drm-format", G_TYPE_STRING, name, NULL);
    g_free (name);
    gst_caps_append_structure_full (drm, d,
        gst_caps_features_new (GST_CAPS_FEATURE_MEMORY_DMABUF, NULL));
  }
  return gst_caps_merge (caps, drm);
}

/* DMA_DRM caps as the system-memory caps they stand for; NULL if not. */
static GstCaps *
plain_from_dma_drm (GstCaps * caps)
{
  GstVideoInfoDmaDrm drm;
  GstVideoInfo info;

  if (!gst_video_is_dma_drm_caps (caps) ||
      !gst_video_info_dma_drm_from_caps (&drm, caps) ||
      !gst_video_info_dma_drm_to_video_info (&drm, &info))
    return NULL;
  return gst_video_info_to_caps (&info);
}
#endif

/*
 * An output takes framerate=0/1 too: a variable rate, as RTP depayloaders,
 * screen capture, appsrc and VFR files send it.  No S_PARM then: the node
 * keeps the rate it has, which readers see as its nominal rate, and the
 * driver paces the frames to it (docs/reference.md, "Frame rates").
 */
static GstCaps *
allow_variable_rate (GstCaps * caps)
{
  GValue zero = G_VALUE_INIT;
  guint i;

  g_value_init (&zero, GST_TYPE_FRACTION);
  gst_value_set_fraction (&zero, 0, 1);
  caps = gst_caps_make_writable (caps);
  for (i = 0; i < gst_caps_get_size (caps); i++) {
    GstStructure *s = gst_caps_get_structure (caps, i);
    const GValue *rates = gst_structure_get_value (s, "framerate");
    GValue both = G_VALUE_INIT;

    if (!rates || gst_value_intersect (NULL, rates, &zero))
      continue;
    /* a range starts at 0/1 instead; a rate or a list of rates gets 0/1
     * as one more, after them, so fixation still picks one of them (a
     * list holding a range would fail accept-caps: is_subset) */
    if (GST_VALUE_HOLDS_FRACTION_RANGE (rates)) {
      g_value_init (&both, GST_TYPE_FRACTION_RANGE);
      gst_value_set_fraction_range (&both, &zero,
          gst_value_get_fraction_range_max (rates));
    } else {
      g_value_init (&both, GST_TYPE_LIST);
      if (GST_VALUE_HOLDS_LIST (rates))
        g_value_copy (rates, &both);
      else
        gst_value_list_append_value (&both, rates);
      gst_value_list_append_value (&both, &zero);
    }
    gst_structure_take_value (s, "framerate", &both);
  }
  g_value_unset (&zero);
  return caps;
}

GstCaps *
gst_vstream_object_get_caps (GstVstreamObject * obj, GstCaps * filter,
    GstPadTemplate * templ)
{
  GstCaps *caps, *tmp;

  if (!gst_vstream_object_is_open (obj)) {
    caps = gst_pad_template_get_caps (templ);
  } else {
    caps = gst_vstream_object_probe_caps (obj);
    if (is_output (obj))
      caps = allow_variable_rate (caps);
#if GST_CHECK_VERSION(1, 24, 0)
    /* the modes that move dma-bufs: a source's export, a sink's import */
    if (obj->req_mode == (is_output (obj) ? GST_VSTREAM_IO_DMABUF_IMPORT :
            GST_VSTREAM_IO_DMABUF))
      caps = gst_vstream_caps_add_dma_drm (caps);
#endif
  }
  if (filter) {
    tmp = gst_caps_intersect_full (filter, caps, GST_CAPS_INTERSECT_FIRST);
    gst_caps_unref (caps);
    caps = tmp;
  }
  return caps;
}

gboolean
gst_vstream_object_get_current (GstVstreamObject * obj,
    struct v4l2_format *fmt, struct v4l2_fract *tpf)
{
  struct v4l2_streamparm parm = {.type = obj->type };

  memset (fmt, 0, sizeof (*fmt));
  fmt->type = obj->type;
  if (gst_vstream_object_ioctl (obj, VIDIOC_G_FMT, fmt) < 0)
    return FALSE;
  tpf->numerator = 0;
  tpf->denominator = 0;
  if (gst_vstream_object_ioctl (obj, VIDIOC_G_PARM, &parm) == 0)
    *tpf = is_output (obj) ? parm.parm.output.timeperframe :
        parm.parm.capture.timeperframe;
  return TRUE;
}

/* The V4L2 colorimetry fields for @caps' colorimetry; caps without one
 * mean what GStreamer assumes for the format and size. */
static void
colorimetry_from_caps (GstCaps * caps, struct v4l2_pix_format *pix)
{
  const gchar *str = gst_structure_get_string (gst_caps_get_structure (caps,
          0), "colorimetry");
  GstVideoColorimetry c;
  GstVideoInfo info;

  if (str && gst_video_colorimetry_from_string (&c, str))
    gst_vstream_colorimetry_to_v4l2 (&c, pix);
  else if (!str && gst_video_info_from_caps (&info, caps))
    gst_vstream_colorimetry_to_v4l2 (&info.colorimetry, pix);
}

static gboolean set_format (GstVstreamObject * obj, GstCaps * caps);

/* Sets obj->caps to the system-memory caps @caps stand for (DMA_DRM caps
 * since GStreamer 1.24), obj->nego_caps to @caps. */
gboolean
gst_vstream_object_set_format (GstVstreamObject * obj, GstCaps * caps)
{
  gboolean ok;
#if GST_CHECK_VERSION(1, 24, 0)
  GstCaps *plain = plain_from_dma_drm (caps);

  if (plain) {
    GST_INFO_OBJECT (obj->element, "%s: DMA_DRM caps, as %" GST_PTR_FORMAT,
        obj->device, plain);
    ok = set_format (obj, plain);
    gst_caps_unref (plain);
    if (ok)
      gst_caps_replace (&obj->nego_caps, caps);
    return ok;
  }
  if (gst_video_is_dma_drm_caps (caps)) {
    GST_ELEMENT_ERROR (obj->element, CORE, NEGOTIATION,
        ("Device '%s' cannot handle caps %" GST_PTR_FORMAT, obj->device,
            caps), ("a DRM format without a linear GStreamer equivalent"));
    return FALSE;
  }
#endif
  ok = set_format (obj, caps);
  if (ok)
    gst_caps_replace (&obj->nego_caps, caps);
  return ok;
}

/* Were memory:DMABuf caps negotiated (no system-memory copy may go out)? */
gboolean
gst_vstream_object_dmabuf_caps (GstVstreamObject * obj)
{
  GstCapsFeatures *f;

  if (!obj->nego_caps || gst_caps_is_empty (obj->nego_caps))
    return FALSE;
  f = gst_caps_get_features (obj->nego_caps, 0);
  return f && gst_caps_features_contains (f, GST_CAPS_FEATURE_MEMORY_DMABUF);
}

/*
 * S_FMT @fmt.  A multi-planar device that offers a format only with one
 * memory per colour plane (NV12M where caps say NV12, as SoC cameras do)
 * gets that twin instead, and *@f becomes it.
 */
static gint
try_format (GstVstreamObject * obj, struct v4l2_format *fmt,
    const GstVstreamFormat ** f)
{
  const GstVstreamFormat *twin = gst_vstream_format_twin (*f);
  struct v4l2_format again = *fmt;
  gint ret, err;

  ret = gst_vstream_object_ioctl (obj, VIDIOC_S_FMT, fmt);
  err = errno;
  /* refused (some drivers say EINVAL for a format they lack) or changed */
  if ((ret == 0 && fmt->fmt.pix.pixelformat == (*f)->fourcc) ||
      (ret < 0 && err != EINVAL) || !obj->mplane || !twin)
    goto first;
  again.fmt.pix.pixelformat = twin->fourcc;
  if (gst_vstream_object_ioctl (obj, VIDIOC_S_FMT, &again) < 0 ||
      again.fmt.pix.pixelformat != twin->fourcc)
    goto first;                 /* the caller names the first answer */
  GST_INFO_OBJECT (obj->element, "%s: %" GST_FOURCC_FORMAT " as %"
      GST_FOURCC_FORMAT, obj->device, GST_FOURCC_ARGS ((*f)->fourcc),
      GST_FOURCC_ARGS (twin->fourcc));
  *fmt = again;
  *f = twin;
  return 0;

first:
  errno = err;
  return ret;
}

/* obj->layout for the format just set, @pix. */
static gboolean
memory_layout (GstVstreamObject * obj, const struct v4l2_pix_format *pix,
    const GstVstreamFormat * f)
{
  /* a multi-planar type passes vstreammplane.c untouched */
  struct v4l2_format mp = {.type = gst_vstream_object_buf_type (obj) };

  memset (&obj->layout, 0, sizeof (obj->layout));
  obj->layout.n_mem = 1;
  obj->layout.size[0] = pix->sizeimage;
  obj->layout.stride[0] = pix->bytesperline;
  if (!obj->mplane)
    return TRUE;
  if (gst_vstream_object_ioctl (obj, VIDIOC_G_FMT, &mp) < 0 ||
      !gst_vstream_mplane_layout (&mp.fmt.pix_mp, &obj->layout)) {
    GST_ELEMENT_ERROR (obj->element, RESOURCE, SETTINGS,
        ("Device '%s' did not say its format.", obj->device),
        ("VIDIOC_G_FMT: %s", g_strerror (errno)));
    return FALSE;
  }
  if (obj->layout.n_mem > 1 && !f->per_plane) {
    GST_ELEMENT_ERROR (obj->element, RESOURCE, SETTINGS,
        ("Device '%s' gave %u memory planes for %" GST_FOURCC_FORMAT ".",
            obj->device, obj->layout.n_mem, GST_FOURCC_ARGS (f->fourcc)),
        (NULL));
    return FALSE;
  }
  return TRUE;
}

static gboolean
set_format (GstVstreamObject * obj, GstCaps * caps)
{
  GstStructure *s = gst_caps_get_structure (caps, 0);
  const GstVstreamFormat *f = gst_vstream_format_from_structure (s);
  struct v4l2_format fmt = {.type = obj->type };
  struct v4l2_streamparm parm = {.type = obj->type };
  gint width = 0, height = 0, fps_n = 0, fps_d = 1;
  guint32 field;
  gchar *str;

  if (!f || !gst_structure_get_int (s, "width", &width) ||
      !gst_structure_get_int (s, "height", &height)) {
    GST_ELEMENT_ERROR (obj->element, CORE, NEGOTIATION,
        ("Device '%s' cannot handle caps %" GST_PTR_FORMAT, obj->device,
            caps), ("unknown format or size missing"));
    return FALSE;
  }
  gst_structure_get_fraction (s, "framerate", &fps_n, &fps_d);
  field = gst_vstream_field_from_caps (s);
  if (field == V4L2_FIELD_ALTERNATE)
    height /= 2;

  fmt.fmt.pix.pixelformat = f->fourcc;
  fmt.fmt.pix.width = width;
  fmt.fmt.pix.height = height;
  fmt.fmt.pix.field = field;
  if (is_output (obj))
    colorimetry_from_caps (caps, &fmt.fmt.pix);
  if (try_format (obj, &fmt, &f) < 0) {
    if (errno == EBUSY)
      GST_ELEMENT_ERROR (obj->element, RESOURCE, BUSY,
          ("Device '%s' is busy.", obj->device),
          ("VIDIOC_S_FMT: %s", g_strerror (errno)));
    else
      GST_ELEMENT_ERROR (obj->element, RESOURCE, SETTINGS,
          ("Device '%s' refused the format.", obj->device),
          ("VIDIOC_S_FMT: %s", g_strerror (errno)));
    return FALSE;
  }
  if (fmt.fmt.pix.pixelformat != f->fourcc ||
      fmt.fmt.pix.width != (guint) width ||
      fmt.fmt.pix.height != (guint) height || fmt.fmt.pix.field != field) {
    str = gst_caps_to_string (caps);
    GST_ELEMENT_ERROR (obj->element, CORE, NEGOTIATION,
        ("Device '%s' cannot do %s.", obj->device, str),
        ("it offered %" GST_FOURCC_FORMAT " %ux%u field %u instead",
            GST_FOURCC_ARGS (fmt.fmt.pix.pixelformat), fmt.fmt.pix.width,
            fmt.fmt.pix.height, fmt.fmt.pix.field));
    g_free (str);
    return FALSE;
  }

  if (fps_n > 0) {
    struct v4l2_fract *t = is_output (obj) ?
        &parm.parm.output.timeperframe : &parm.parm.capture.timeperframe;

    t->numerator = fps_d;
    t->denominator = fps_n;
    if (gst_vstream_object_ioctl (obj, VIDIOC_S_PARM, &parm) < 0)
      GST_WARNING_OBJECT (obj->element, "S_PARM %d/%d failed: %s", fps_d,
          fps_n, g_strerror (errno));
    else
      obj->tpf = *t;
  }

  if (!memory_layout (obj, &fmt.fmt.pix, f))
    return FALSE;
  if (!gst_vstream_info_from_v4l2 (&obj->info, &fmt.fmt.pix, &obj->layout,
          caps)) {
    GST_ELEMENT_ERROR (obj->element, CORE, NEGOTIATION,
        ("Invalid caps %" GST_PTR_FORMAT " for device '%s'.", caps,
            obj->device), (NULL));
    return FALSE;
  }
  obj->format = fmt;
  gst_caps_replace (&obj->caps, caps);

  obj->mode = obj->req_mode;
  if (obj->mode == GST_VSTREAM_IO_AUTO)
    obj->mode = (obj->vcap.device_caps & V4L2_CAP_STREAMING) ?
        GST_VSTREAM_IO_MMAP : GST_VSTREAM_IO_RW;
  if (obj->mode == GST_VSTREAM_IO_RW && obj->layout.n_mem > 1) {
    GST_ELEMENT_ERROR (obj->element, RESOURCE, SETTINGS,
        ("Device '%s' cannot read or write %" GST_FOURCC_FORMAT " frames.",
            obj->device, GST_FOURCC_ARGS (f->fourcc)),
        ("read()/write() carry one memory plane; use a streaming io-mode"));
    return FALSE;
  }
  GST_INFO_OBJECT (obj->element, "format %" GST_FOURCC_FORMAT " %ux%u "
      "field %u bpl %u size %u, io-mode %d",
      GST_FOURCC_ARGS (fmt.fmt.pix.pixelformat), fmt.fmt.pix.width,
      fmt.fmt.pix.height, fmt.fmt.pix.field, fmt.fmt.pix.bytesperline,
      fmt.fmt.pix.sizeimage, obj->mode);
  return TRUE;
}

/* Buffers to allocate: the property, or more if the device needs them. */
guint
gst_vstream_object_buffer_count (GstVstreamObject * obj)
{
  struct v4l2_control ctrl = {
    .id = is_output (obj) ? V4L2_CID_MIN_BUFFERS_FOR_OUTPUT :
        V4L2_CID_MIN_BUFFERS_FOR_CAPTURE,
  };
  guint count = MAX (obj->min_buffers, 2);

  if (gst_vstream_object_ioctl (obj, VIDIOC_G_CTRL, &ctrl) == 0)
    count = MAX (count, (guint) ctrl.value + 1);
  return MIN (count, VIDEO_MAX_FRAME);
}

/* The counters, set in @s (a new structure if NULL); returns @s. */
GstStructure *
gst_vstream_object_stats (GstVstreamObject * obj, GstStructure * s)
{
  if (!s)
    s = gst_structure_new_empty ("vstream-stats");
  g_mutex_lock (&obj->stats_lock);
  gst_structure_set (s, "frames", G_TYPE_UINT64, obj->frames,
      "drops", G_TYPE_UINT64, obj->drops,
      "copies", G_TYPE_UINT64, obj->copies,
      "zero-copy", G_TYPE_UINT64, obj->zero_copy, NULL);
  g_mutex_unlock (&obj->stats_lock);
  return s;
}

void
gst_vstream_object_reset_stats (GstVstreamObject * obj)
{
  g_mutex_lock (&obj->stats_lock);
  obj->frames = obj->drops = obj->copies = obj->zero_copy = 0;
  g_mutex_unlock (&obj->stats_lock);
}

void
gst_vstream_object_count (GstVstreamObject * obj, guint frames, guint drops,
    guint copies, guint zero_copy)
{
  g_mutex_lock (&obj->stats_lock);
  obj->frames += frames;
  obj->drops += drops;
  obj->copies += copies;
  obj->zero_copy += zero_copy;
  g_mutex_unlock (&obj->stats_lock);
}

/* layout_fits() for a memory per colour plane (NV12M): plane p is
 * memory p, from its start, with the driver's stride and size. */
static gboolean
planes_fit (GstVstreamObject * obj, GstCaps * caps, GstBuffer * buf)
{
  GstVideoMeta *meta = gst_buffer_get_video_meta (buf);
  GstVideoInfo def;
  guint p;

  if (gst_buffer_n_memory (buf) != obj->layout.n_mem)
    return FALSE;
  if (!meta && !gst_video_info_from_caps (&def, caps))
    return FALSE;
  for (p = 0; p < obj->layout.n_mem; p++) {
    gint stride = meta ? meta->stride[p] : def.stride[p];
    gsize offset = meta ? meta->offset[p] : def.offset[p];
    guint idx, len;
    gsize skip;

    if (stride != (gint) obj->layout.stride[p] ||
        gst_buffer_peek_memory (buf, p)->size < obj->layout.size[p] ||
        !gst_buffer_find_memory (buf, offset, 1, &idx, &len, &skip) ||
        idx != p || skip != 0)
      return FALSE;
  }
  return TRUE;
}

/* Does @buf (of @caps) have exactly the driver's layout, so that its
 * bytes can go to the device as they are? */
gboolean
gst_vstream_object_layout_fits (GstVstreamObject * obj, GstCaps * caps,
    GstBuffer * buf)
{
  GstVideoMeta *meta = gst_buffer_get_video_meta (buf);
  GstVideoInfo def;
  guint p;

  if (obj->layout.n_mem > 1)
    return planes_fit (obj, caps, buf);
  if (gst_buffer_n_memory (buf) != 1 ||
      gst_buffer_get_size (buf) < obj->format.fmt.pix.sizeimage)
    return FALSE;
  if (GST_VIDEO_INFO_FORMAT (&obj->info) == GST_VIDEO_FORMAT_ENCODED)
    return TRUE;
  if (!meta && !gst_video_info_from_caps (&def, caps))
    return FALSE;
  for (p = 0; p < GST_VIDEO_INFO_N_PLANES (&obj->info); p++) {
    gint stride = meta ? meta->stride[p] : def.stride[p];
    gsize offset = meta ? meta->offset[p] : def.offset[p];

    if (stride != obj->info.stride[p] || offset != obj->info.offset[p])
      return FALSE;
  }
  return TRUE;
}

/* Copy raw frame @src (of @caps, any strides) into @dst in the driver's
 * layout (obj->info: its bytesperline and plane offsets). */
gboolean
gst_vstream_object_copy_frame (GstVstreamObject * obj, GstCaps * caps,
    GstBuffer * src, GstBuffer * dst)
{
  GstVideoInfo src_info;
  GstVideoFrame sf, df;
  gboolean ok;

  if (!gst_video_info_from_caps (&src_info, caps))
    return FALSE;
  if (!gst_video_frame_map (&sf, &src_info, src, GST_MAP_READ))
    return FALSE;
  if (!gst_video_frame_map (&df, &obj->info, dst, GST_MAP_WRITE)) {
    gst_video_frame_unmap (&sf);
    return FALSE;
  }
  ok = gst_video_frame_copy (&df, &sf);
  gst_video_frame_unmap (&df);
  gst_video_frame_unmap (&sf);
  return ok;
}
