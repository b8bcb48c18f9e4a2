/* vstream GStreamer plugin: the device core shared by vstreamsrc and
 * vstreamsink.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Opens and checks the node, probes its caps from ENUM_FMT,
 * ENUM_FRAMESIZES, ENUM_FRAMEINTERVALS and TRY_FMT (per field), and sets
 * the negotiated format.  Every failure becomes an element error that names
 * the device and the cause.
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
      g_free (obj->device);
      obj->device = g_value_dup_string (value);
      obj->device_found = FALSE;
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
      g_value_set_string (value, obj->device);
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

/* One call to the device, through vstreammplane.c on a multi-planar one;
 * retried when a signal interrupts it. */
static int
device_call (GstVstreamIoctlFunc func, gboolean mplane, gint fd,
    unsigned long request, void *arg)
{
  int ret;

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
  return device_call (obj->ioctl, obj->mplane, fd, request, arg);
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
    /* looked for at each open: pipes come and go */
    g_free (obj->device);
    obj->device = gst_vstream_default_device (is_output (obj));
    obj->device_found = TRUE;
    GST_INFO_OBJECT (obj->element, "no device set: opening %s", obj->device);
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
  return device_call (d->func, d->mplane, d->fd, req, arg);
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
  ProbeDev dev = {.fd = fd,.func = func ? func : default_ioctl };
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

/*
 * URIs: vstream:///dev/videoN names a node; vstream://PIPE the output
 * node of pipe PIPE for a sink, its (first) capture node for a source,
 * and vstream://PIPE/N a source's reader N.  Pipes are found by their
 * nodes' sysfs names (PIPE-output, PIPE-capture[-N]) under
 * $VSTREAM_SYSFS or /sys, so a name works whatever /dev/videoN it got.
 */
static const gchar *
sysfs_root (void)
{
  const gchar *root = g_getenv ("VSTREAM_SYSFS");

  return root && *root ? root : "/sys";
}

/* Is video node @node (videoN) the vstream driver's?  Asks sysfs only. */
gboolean
gst_vstream_sysfs_node_is_vstream (const gchar * node)
{
  gchar *link = g_build_filename (sysfs_root (), "class", "video4linux", node,
      "device", "driver", NULL);
  gchar *target = g_file_read_link (link, NULL);
  gchar *base = target ? g_path_get_basename (target) : NULL;
  gboolean yes = base && g_str_equal (base, "vstream");

  g_free (base);
  g_free (target);
  g_free (link);
  return yes;
}

/* The node of an element whose device is not set: the lowest-numbered
 * vstream output node for a sink, capture node for a source, else
 * /dev/video0 as v4l2src.  Asks sysfs only. */
gchar *
gst_vstream_default_device (gboolean output)
{
  gchar *dirname = g_build_filename (sysfs_root (), "class", "video4linux",
      NULL);
  GDir *dir = g_dir_open (dirname, 0, NULL);
  const gchar *entry;
  guint64 best = G_MAXUINT64, n;

  while (dir && (entry = g_dir_read_name (dir))) {
    gchar *file = g_build_filename (dirname, entry, "name", NULL);
    gchar *name = NULL;

    if (g_str_has_prefix (entry, "video") &&
        g_ascii_string_to_unsigned (entry + 5, 10, 0, G_MAXUINT32, &n, NULL)
        && n < best && g_file_get_contents (file, &name, NULL, NULL) &&
        (output ? g_str_has_suffix (g_strstrip (name), "-output") :
            strstr (name, "-capture") != NULL) &&
        gst_vstream_sysfs_node_is_vstream (entry))
      best = n;
    g_free (name);
    g_free (file);
  }
  if (dir)
    g_dir_close (dir);
  g_free (dirname);
  if (best == G_MAXUINT64)
    return g_strdup ("/dev/video0");
  return g_strdup_printf ("/dev/video%" G_GUINT64_FORMAT, best);
}

static gchar *
find_node_by_name (const gchar * want)
{
  gchar *dirname = g_build_filename (sysfs_root (), "class", "video4linux",
      NULL);
  GDir *dir = g_dir_open (dirname, 0, NULL);
  const gchar *entry;
  gchar *found = NULL;

  while (dir && !found && (entry = g_dir_read_name (dir))) {
    gchar *file = g_build_filename (dirname, entry, "name", NULL);
    gchar *name = NULL;

    if (g_file_get_contents (file, &name, NULL, NULL) &&
        g_str_equal (g_strstrip (name), want) &&
        gst_vstream_sysfs_node_is_vstream (entry))
      found = g_strconcat ("/dev/", entry, NULL);
    g_free (name);
    g_free (file);
  }
  if (dir)
    g_dir_close (dir);
  g_free (dirname);
  return found;
}

/* The device node @uri names, for a sink (@output) or a source. */
static gchar *
uri_to_device (const gchar * uri, gboolean output, GError ** error)
{
  gchar *loc = NULL, *slash, *path = NULL, *want;
  guint64 reader = 0;
  gboolean have_reader = FALSE;

  if (gst_uri_has_protocol (uri, "vstream"))
    loc = gst_uri_get_location (uri);
  if (!loc || !*loc) {
    g_free (loc);
    g_set_error (error, GST_URI_ERROR, GST_URI_ERROR_BAD_URI,
        "'%s' is not vstream:///dev/videoN, vstream://PIPE or "
        "vstream://PIPE/READER", uri);
    return NULL;
  }
  if (loc[0] == '/')
    return loc;
  slash = strchr (loc, '/');
  if (slash) {
    *slash = 0;
    have_reader = !output &&
        g_ascii_string_to_unsigned (slash + 1, 10, 0, 63, &reader, NULL);
    if (!have_reader) {
      g_set_error (error, GST_URI_ERROR, GST_URI_ERROR_BAD_URI, "'%s': %s",
          uri, output ? "a sink takes vstream://PIPE" :
          "the reader is a number: vstream://PIPE/N");
      g_free (loc);
      return NULL;
    }
  }
  if (output) {
    want = g_strconcat (loc, "-output", NULL);
    path = find_node_by_name (want);
  } else {
    /* several readers: PIPE-capture-N; one: PIPE-capture */
    want = g_strdup_printf ("%s-capture-%u", loc, (guint) reader);
    path = find_node_by_name (want);
    if (!path && !have_reader) {
      g_free (want);
      want = g_strconcat (loc, "-capture", NULL);
      path = find_node_by_name (want);
    }
  }
  g_free (want);
  g_free (loc);
  if (!path)
    g_set_error (error, GST_URI_ERROR, GST_URI_ERROR_BAD_REFERENCE,
        "no vstream %s node for '%s' (vstream-ctl list shows the pipes)",
        output ? "output" : "capture", uri);
  return path;
}

/* The GstURIHandler of vstreamsrc and vstreamsink: through "device". */
static GstURIType
uri_get_type (GType type)
{
  return g_type_is_a (type, GST_TYPE_BASE_SINK) ? GST_URI_SINK : GST_URI_SRC;
}

static const gchar *const *
uri_get_protocols (GType type)
{
  static const gchar *const protocols[] = { "vstream", NULL };

  return protocols;
}

static gchar *
uri_get_uri (GstURIHandler * handler)
{
  gchar *device = NULL, *uri;

  g_object_get (handler, "device", &device, NULL);
  uri = device ? g_strconcat ("vstream://", device, NULL) : NULL;
  g_free (device);
  return uri;
}

static gboolean
uri_set_uri (GstURIHandler * handler, const gchar * uri, GError ** error)
{
  gchar *path;

  GstState state;

  GST_OBJECT_LOCK (handler);
  state = GST_STATE (handler);
  GST_OBJECT_UNLOCK (handler);
  /* in READY the old node is open already */
  if (state != GST_STATE_NULL) {
    g_set_error (error, GST_URI_ERROR, GST_URI_ERROR_BAD_STATE,
        "the device can change only in the NULL state");
    return FALSE;
  }
  path = uri_to_device (uri, GST_IS_BASE_SINK (handler), error);
  if (!path)
    return FALSE;
  g_object_set (handler, "device", path, NULL);
  g_free (path);
  return TRUE;
}

void
gst_vstream_uri_handler_init (gpointer g_iface, gpointer iface_data)
{
  GstURIHandlerInterface *iface = g_iface;

  iface->get_type = uri_get_type;
  iface->get_protocols = uri_get_protocols;
  iface->get_uri = uri_get_uri;
  iface->set_uri = uri_set_uri;
}

/* The device's crop bounds; FALSE if it has none (cannot crop). */
gboolean
gst_vstream_object_crop_bounds (GstVstreamObject * obj, struct v4l2_rect *r)
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
gboolean
gst_vstream_object_crop (GstVstreamObject * obj, const struct v4l2_rect *r)
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
