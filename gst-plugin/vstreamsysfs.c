/* vstream GStreamer plugin: vstream's nodes found in sysfs, and the
 * vstream:// URI handler of both elements.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "vstreamsysfs.h"

GST_DEBUG_CATEGORY_EXTERN (gst_vstream_debug);
#define GST_CAT_DEFAULT gst_vstream_debug

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

/* Does sysfs name @name say a vstream output node (PIPE-output) or a
 * capture node (PIPE-capture, PIPE-capture-N)?  A pipe named x-capture
 * has an output node x-capture-output. */
static gboolean
names_direction (const gchar * name, gboolean output)
{
  const gchar *cap;

  if (output)
    return g_str_has_suffix (name, "-output");
  cap = g_strrstr (name, "-capture");
  if (!cap)
    return FALSE;
  cap += strlen ("-capture");
  if (*cap == '-' && g_ascii_isdigit (cap[1]))
    for (cap++; g_ascii_isdigit (*cap); cap++);
  return *cap == 0;
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
        names_direction (g_strstrip (name), output) &&
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

