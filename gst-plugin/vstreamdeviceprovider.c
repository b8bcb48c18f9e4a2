/* vstream GStreamer plugin: lists vstream's video nodes as GstDevices.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A static probe of the nodes the vstream driver made (found through
 * sysfs, without opening any other driver's node: opening a camera can
 * light its LED or take it from another application, and
 * v4l2deviceprovider lists those already).  Each capture node becomes a
 * Video/Source that makes a vstreamsrc, each output node a Video/Sink
 * that makes a vstreamsink, named by its card, which names the pipe and
 * the reader ("Meeting cam (reader 1)", as browsers list it; outputs get
 * " (output)").  Properties let an application pick one without parsing
 * names: vstream.pipe, vstream.direction ("output" or "capture"),
 * vstream.reader (capture nodes).
 *
 * Started by a device monitor (and built with GUdev), the provider also
 * follows udev's video4linux events in a thread of its own, as
 * v4l2deviceprovider does: a pipe that vstream-ctl adds appears as its
 * devices, one it deletes disappears.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/videodev2.h>

#ifdef HAVE_GUDEV
#include <gudev/gudev.h>
#endif

#include "vstreamdeviceprovider.h"
#include "vstreamobject.h"
#include "vstreamprobe.h"
#include "vstreamsysfs.h"
#include "vstreammplane.h"

struct _GstVstreamDeviceProvider
{
  GstDeviceProvider parent;
#ifdef HAVE_GUDEV
  /* between start() and stop(): the thread that runs the udev client's
   * events in a context of its own, and its loop */
  GThread *thread;
  GMainContext *context;
  GMainLoop *loop;
  /* the thread is ready (started) once it listed the nodes there are */
  GMutex lock;
  GCond cond;
  gboolean started;
#endif
};

struct _GstVstreamDevice
{
  GstDevice parent;
  gchar *path;
  gboolean output;
};

G_DEFINE_TYPE (GstVstreamDevice, gst_vstream_device, GST_TYPE_DEVICE);
G_DEFINE_TYPE (GstVstreamDeviceProvider, gst_vstream_device_provider,
    GST_TYPE_DEVICE_PROVIDER);
/* Marginal: device monitors skip providers of rank none. */
GST_DEVICE_PROVIDER_REGISTER_DEFINE (vstreamdeviceprovider,
    "vstreamdeviceprovider", GST_RANK_MARGINAL,
    GST_TYPE_VSTREAM_DEVICE_PROVIDER);

static GstElement *
gst_vstream_device_create_element (GstDevice * device, const gchar * name)
{
  GstVstreamDevice *dev = GST_VSTREAM_DEVICE (device);
  GstElement *e = gst_element_factory_make (dev->output ? "vstreamsink" :
      "vstreamsrc", name);

  if (e)
    g_object_set (e, "device", dev->path, NULL);
  return e;
}

static gboolean
gst_vstream_device_reconfigure_element (GstDevice * device,
    GstElement * element)
{
  g_object_set (element, "device", GST_VSTREAM_DEVICE (device)->path, NULL);
  return TRUE;
}

static void
gst_vstream_device_finalize (GObject * object)
{
  g_free (GST_VSTREAM_DEVICE (object)->path);
  G_OBJECT_CLASS (gst_vstream_device_parent_class)->finalize (object);
}

static void
gst_vstream_device_class_init (GstVstreamDeviceClass * klass)
{
  GST_DEVICE_CLASS (klass)->create_element = gst_vstream_device_create_element;
  GST_DEVICE_CLASS (klass)->reconfigure_element =
      gst_vstream_device_reconfigure_element;
  G_OBJECT_CLASS (klass)->finalize = gst_vstream_device_finalize;
}

static void
gst_vstream_device_init (GstVstreamDevice * dev)
{
}

/* "<pipe>-output", "<pipe>-capture" or "<pipe>-capture-<reader>": the
 * pipe's name and the reader's index; FALSE for other names. */
static gboolean
parse_node_name (const gchar * node_name, gchar ** pipe, gint * reader)
{
  const gchar *cap = g_strrstr (node_name, "-capture");
  gchar *end;

  *reader = -1;
  if (g_str_has_suffix (node_name, "-output")) {
    *pipe = g_strndup (node_name, strlen (node_name) - strlen ("-output"));
    return TRUE;
  }
  if (!cap)
    return FALSE;
  if (!cap[8]) {
    *reader = 0;
  } else if (cap[8] == '-' && g_ascii_isdigit (cap[9])) {
    *reader = (gint) g_ascii_strtoll (cap + 9, &end, 10);
    if (*end)
      return FALSE;
  } else {
    return FALSE;
  }
  *pipe = g_strndup (node_name, cap - node_name);
  return TRUE;
}

static GstDevice *
probe_node (const gchar * path)
{
  struct v4l2_capability cap = { 0 };
  GstVstreamDevice *dev;
  GstStructure *props;
  GstCaps *caps;
  gchar *name, *node_name = NULL, *sys, *pipe = NULL;
  gint reader = -1;
  guint32 dcaps;
  enum v4l2_buf_type type;
  gboolean output;
  gint fd;

  fd = open (path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return NULL;
  if (ioctl (fd, VIDIOC_QUERYCAP, &cap) < 0) {
    close (fd);
    return NULL;
  }
  dcaps = (cap.capabilities & V4L2_CAP_DEVICE_CAPS) ? cap.device_caps :
      cap.capabilities;
  output = ! !(dcaps & (V4L2_CAP_VIDEO_OUTPUT | V4L2_CAP_VIDEO_OUTPUT_MPLANE));
  if (output == ! !(dcaps & (V4L2_CAP_VIDEO_CAPTURE |
              V4L2_CAP_VIDEO_CAPTURE_MPLANE)) ||
      !(dcaps & V4L2_CAP_STREAMING)) {
    close (fd);
    return NULL;
  }
  if (gst_vstream_caps_are_mplane (dcaps, output))
    type = output ? V4L2_BUF_TYPE_VIDEO_OUTPUT_MPLANE :
        V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE;
  else
    type = output ? V4L2_BUF_TYPE_VIDEO_OUTPUT : V4L2_BUF_TYPE_VIDEO_CAPTURE;
  caps = gst_vstream_probe_fd_caps (fd, type, NULL);
  close (fd);
  if (gst_caps_is_empty (caps)) {
    gst_caps_unref (caps);
    return NULL;
  }

  sys = g_strdup_printf ("/sys/class/video4linux/%s/name",
      strrchr (path, '/') + 1);
  if (g_file_get_contents (sys, &node_name, NULL, NULL))
    g_strstrip (node_name);
  g_free (sys);
  /* vstream cards already name the reader, as browsers list them */
  name = g_strdup_printf (output ? "%s (output)" : "%s",
      (const gchar *) cap.card);
  props = gst_structure_new ("vstream-proplist",
      "device.path", G_TYPE_STRING, path,
      "device.api", G_TYPE_STRING, "v4l2",
      "v4l2.device.driver", G_TYPE_STRING, (const gchar *) cap.driver,
      "v4l2.device.card", G_TYPE_STRING, (const gchar *) cap.card,
      "v4l2.device.bus_info", G_TYPE_STRING, (const gchar *) cap.bus_info,
      "vstream.direction", G_TYPE_STRING, output ? "output" : "capture",
      NULL);
  if (node_name && parse_node_name (node_name, &pipe, &reader)) {
    gst_structure_set (props, "vstream.pipe", G_TYPE_STRING, pipe, NULL);
    if (!output)
      gst_structure_set (props, "vstream.reader", G_TYPE_INT, reader, NULL);
  }
  g_free (pipe);
  dev = g_object_new (GST_TYPE_VSTREAM_DEVICE, "display-name", name,
      "device-class", output ? "Video/Sink" : "Video/Source",
      "caps", caps, "properties", props, NULL);
  dev->path = g_strdup (path);
  dev->output = output;
  g_free (name);
  g_free (node_name);
  gst_caps_unref (caps);
  gst_structure_free (props);
  return GST_DEVICE (dev);
}

static GList *
gst_vstream_device_provider_probe (GstDeviceProvider * provider)
{
  GList *devices = NULL;
  GDir *dir = g_dir_open ("/dev", 0, NULL);
  const gchar *entry;
  GPtrArray *paths = g_ptr_array_new_with_free_func (g_free);
  guint i;

  if (!dir)
    return NULL;
  while ((entry = g_dir_read_name (dir)))
    if (g_str_has_prefix (entry, "video") && gst_vstream_sysfs_node_is_vstream (entry))
      g_ptr_array_add (paths, g_strconcat ("/dev/", entry, NULL));
  g_dir_close (dir);
  for (i = 0; i < paths->len; i++) {
    GstDevice *dev = probe_node (g_ptr_array_index (paths, i));

    if (dev)
      devices = g_list_prepend (devices, gst_object_ref_sink (dev));
  }
  g_ptr_array_free (paths, TRUE);
  return g_list_reverse (devices);
}

#ifdef HAVE_GUDEV
/* The provider's device for the node at @path (a reference), or NULL.
 * Under the object lock, not gst_device_provider_get_devices(): that
 * takes the lock gst_device_provider_stop() holds while stop() waits for
 * this thread. */
static GstDevice *
find_device (GstDeviceProvider * provider, const gchar * path)
{
  GstDevice *found = NULL;
  GList *l;

  GST_OBJECT_LOCK (provider);
  for (l = provider->devices; l && !found; l = l->next)
    if (!g_strcmp0 (GST_VSTREAM_DEVICE (l->data)->path, path))
      found = gst_object_ref (l->data);
  GST_OBJECT_UNLOCK (provider);
  return found;
}

static void
on_uevent (GUdevClient * client, const gchar * action, GUdevDevice * udev,
    GstDeviceProvider * provider)
{
  const gchar *path = g_udev_device_get_device_file (udev);
  GstDevice *dev;

  if (!path)
    return;
  dev = find_device (provider, path);
  if (!g_strcmp0 (action, "add") && !dev) {
    if (gst_vstream_sysfs_node_is_vstream (g_udev_device_get_name (udev)) &&
        (dev = probe_node (path)))
      gst_device_provider_device_add (provider, dev);
    return;
  }
  /* the node is gone: its sysfs with it, so only the path says whose */
  if (!g_strcmp0 (action, "remove") && dev)
    gst_device_provider_device_remove (provider, dev);
  if (dev)
    gst_object_unref (dev);
}

static gpointer
provider_thread (gpointer data)
{
  static const gchar *const subsystems[] = { "video4linux", NULL };
  GstVstreamDeviceProvider *self = data;
  GstDeviceProvider *provider = GST_DEVICE_PROVIDER (self);
  GUdevClient *client;
  GList *devices, *l;

  g_main_context_push_thread_default (self->context);
  /* listening before listing: a node added in between comes as an event
   * too, and on_uevent() skips a node that is listed already */
  client = g_udev_client_new (subsystems);
  g_signal_connect (client, "uevent", G_CALLBACK (on_uevent), provider);
  devices = gst_vstream_device_provider_probe (provider);
  for (l = devices; l; l = l->next)
    gst_device_provider_device_add (provider, l->data);
  g_list_free_full (devices, gst_object_unref);

  g_mutex_lock (&self->lock);
  self->started = TRUE;
  g_cond_signal (&self->cond);
  g_mutex_unlock (&self->lock);
  g_main_loop_run (self->loop);

  g_signal_handlers_disconnect_by_data (client, provider);
  g_object_unref (client);
  g_main_context_pop_thread_default (self->context);
  return NULL;
}

/* The nodes there are, as devices, before start() returns (a monitor's
 * first list has them); then their comings and goings. */
static gboolean
gst_vstream_device_provider_start (GstDeviceProvider * provider)
{
  GstVstreamDeviceProvider *self = GST_VSTREAM_DEVICE_PROVIDER (provider);

  self->context = g_main_context_new ();
  self->loop = g_main_loop_new (self->context, FALSE);
  self->started = FALSE;
  self->thread = g_thread_new ("vstream-devices", provider_thread, self);
  g_mutex_lock (&self->lock);
  while (!self->started)
    g_cond_wait (&self->cond, &self->lock);
  g_mutex_unlock (&self->lock);
  return TRUE;
}

static gboolean
quit_loop (gpointer loop)
{
  g_main_loop_quit (loop);
  return G_SOURCE_REMOVE;
}

static void
gst_vstream_device_provider_stop (GstDeviceProvider * provider)
{
  GstVstreamDeviceProvider *self = GST_VSTREAM_DEVICE_PROVIDER (provider);
  /* a source of the loop's own context: it quits the loop once the loop
   * runs, even if stop() comes before the thread got there */
  GSource *quit = g_idle_source_new ();

  g_source_set_callback (quit, quit_loop, self->loop, NULL);
  g_source_attach (quit, self->context);
  g_source_unref (quit);
  g_thread_join (self->thread);
  self->thread = NULL;
  g_main_loop_unref (self->loop);
  self->loop = NULL;
  g_main_context_unref (self->context);
  self->context = NULL;
}

static void
gst_vstream_device_provider_finalize (GObject * object)
{
  GstVstreamDeviceProvider *self = GST_VSTREAM_DEVICE_PROVIDER (object);

  g_mutex_clear (&self->lock);
  g_cond_clear (&self->cond);
  G_OBJECT_CLASS (gst_vstream_device_provider_parent_class)->finalize (object);
}
#endif

static void
gst_vstream_device_provider_class_init (GstVstreamDeviceProviderClass * klass)
{
  GstDeviceProviderClass *dclass = GST_DEVICE_PROVIDER_CLASS (klass);

  dclass->probe = gst_vstream_device_provider_probe;
#ifdef HAVE_GUDEV
  dclass->start = gst_vstream_device_provider_start;
  dclass->stop = gst_vstream_device_provider_stop;
  G_OBJECT_CLASS (klass)->finalize = gst_vstream_device_provider_finalize;
#endif
  gst_device_provider_class_set_static_metadata (dclass,
      "vstream device provider", "Source/Sink/Video",
      "Lists vstream's capture and output nodes for vstreamsrc and vstreamsink",
      "The vstream developers");
}

static void
gst_vstream_device_provider_init (GstVstreamDeviceProvider * provider)
{
#ifdef HAVE_GUDEV
  g_mutex_init (&provider->lock);
  g_cond_init (&provider->cond);
#endif
}
