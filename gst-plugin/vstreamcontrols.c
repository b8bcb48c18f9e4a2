/* vstream GStreamer plugin: device controls for vstreamsrc and
 * vstreamsink: the extra-controls property and GstColorBalance.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Controls are found by name as v4l2src names them: the driver's name in
 * lower case, every other character '_' ("Frames Without Producer" is
 * frames_without_producer).  A menu control also takes the name of an
 * item.  A control that is missing or refuses a value is a warning that
 * names it, not an error: the stream works without it.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <string.h>

#include "vstreamcontrols.h"

GST_DEBUG_CATEGORY_EXTERN (gst_vstream_debug);
#define GST_CAT_DEFAULT gst_vstream_debug

static gchar *
normalise_name (const gchar * name)
{
  gchar *s = g_ascii_strdown (name, -1);
  gchar *p;

  for (p = s; *p; p++)
    if (!g_ascii_isalnum (*p))
      *p = '_';
  return s;
}

/* The control named @name (normalised), or FALSE. */
static gboolean
find_control (GstVstreamObject * obj, const gchar * name,
    struct v4l2_queryctrl *qc)
{
  memset (qc, 0, sizeof (*qc));
  qc->id = V4L2_CTRL_FLAG_NEXT_CTRL;
  while (gst_vstream_object_ioctl (obj, VIDIOC_QUERYCTRL, qc) == 0) {
    gchar *n = normalise_name ((const gchar *) qc->name);
    gboolean match = g_str_equal (n, name);

    g_free (n);
    if (match && qc->type != V4L2_CTRL_TYPE_CTRL_CLASS &&
        !(qc->flags & V4L2_CTRL_FLAG_DISABLED))
      return TRUE;
    qc->id |= V4L2_CTRL_FLAG_NEXT_CTRL;
  }
  return FALSE;
}

/* The index of menu item @item of control @qc, or -1. */
static gint
find_menu_item (GstVstreamObject * obj, const struct v4l2_queryctrl *qc,
    const gchar * item)
{
  struct v4l2_querymenu qm;
  gint i;

  if (qc->type != V4L2_CTRL_TYPE_MENU)
    return -1;
  for (i = qc->minimum; i <= qc->maximum; i++) {
    memset (&qm, 0, sizeof (qm));
    qm.id = qc->id;
    qm.index = i;
    if (gst_vstream_object_ioctl (obj, VIDIOC_QUERYMENU, &qm) == 0 &&
        !g_ascii_strcasecmp ((const gchar *) qm.name, item))
      return i;
  }
  return -1;
}

static gboolean
apply_one (GQuark field, const GValue * value, gpointer data)
{
  GstVstreamObject *obj = data;
  const gchar *name = g_quark_to_string (field);
  struct v4l2_queryctrl qc;
  struct v4l2_control c = { 0 };
  gchar *shown;

  if (!find_control (obj, name, &qc)) {
    GST_VSTREAM_ELEMENT_WARNING (obj, RESOURCE, SETTINGS,
        ("Device '%s' has no control '%s'.", obj->device, name), (NULL));
    return TRUE;
  }
  c.id = qc.id;
  if (G_VALUE_HOLDS_INT (value))
    c.value = g_value_get_int (value);
  else if (G_VALUE_HOLDS_UINT (value))
    c.value = (gint) g_value_get_uint (value);
  else if (G_VALUE_HOLDS_BOOLEAN (value))
    c.value = g_value_get_boolean (value);
  else if (G_VALUE_HOLDS_STRING (value) &&
      (c.value = find_menu_item (obj, &qc, g_value_get_string (value))) >= 0)
    ;
  else {
    shown = gst_value_serialize (value);
    GST_VSTREAM_ELEMENT_WARNING (obj, RESOURCE, SETTINGS,
        ("Control '%s' of device '%s' does not take %s.", name, obj->device,
            shown), ("a number, a boolean, or a menu item's name"));
    g_free (shown);
    return TRUE;
  }
  if (gst_vstream_object_ioctl (obj, VIDIOC_S_CTRL, &c) < 0) {
    gint err = errno;

    shown = gst_value_serialize (value);
    GST_VSTREAM_ELEMENT_WARNING (obj, RESOURCE, SETTINGS,
        ("Could not set control '%s' of device '%s' to %s.", name,
            obj->device, shown), ("VIDIOC_S_CTRL: %s", g_strerror (err)));
    g_free (shown);
    return TRUE;
  }
  GST_INFO ("%s: control %s = %d", obj->device, name, c.value);
  return TRUE;
}

/* Called with obj->controls_lock held. */
void
gst_vstream_controls_apply (GstVstreamObject * obj)
{
  if (obj->extra_controls && obj->fd >= 0)
    gst_structure_foreach (obj->extra_controls, apply_one, obj);
}

/* ColorBalance: the device's brightness, contrast, saturation and hue,
 * labelled as videobalance labels them. */
static const struct
{
  guint32 id;
  const gchar *label;
} balance_ctrls[] = {
  {V4L2_CID_BRIGHTNESS, "BRIGHTNESS"},
  {V4L2_CID_CONTRAST, "CONTRAST"},
  {V4L2_CID_SATURATION, "SATURATION"},
  {V4L2_CID_HUE, "HUE"},
};

static GQuark
cid_quark (void)
{
  return g_quark_from_static_string ("vstream-cid");
}

void
gst_vstream_controls_probe (GstVstreamObject * obj)
{
  guint i;

  gst_vstream_controls_clear (obj);
  for (i = 0; i < G_N_ELEMENTS (balance_ctrls); i++) {
    struct v4l2_queryctrl qc = {.id = balance_ctrls[i].id };
    GstColorBalanceChannel *ch;

    if (gst_vstream_object_ioctl (obj, VIDIOC_QUERYCTRL, &qc) < 0 ||
        (qc.flags & V4L2_CTRL_FLAG_DISABLED) ||
        qc.type != V4L2_CTRL_TYPE_INTEGER)
      continue;
    ch = g_object_new (GST_TYPE_COLOR_BALANCE_CHANNEL, NULL);
    ch->label = g_strdup (balance_ctrls[i].label);
    ch->min_value = qc.minimum;
    ch->max_value = qc.maximum;
    g_object_set_qdata (G_OBJECT (ch), cid_quark (),
        GUINT_TO_POINTER (qc.id));
    obj->channels = g_list_append (obj->channels, ch);
  }
}

void
gst_vstream_controls_clear (GstVstreamObject * obj)
{
  g_list_free_full (obj->channels, g_object_unref);
  obj->channels = NULL;
}

static GstVstreamObject *
balance_object (GstColorBalance * balance)
{
  return gst_vstream_object_of (GST_ELEMENT (balance));
}

static const GList *
balance_list_channels (GstColorBalance * balance)
{
  return balance_object (balance)->channels;
}

static void
balance_set_value (GstColorBalance * balance, GstColorBalanceChannel * ch,
    gint value)
{
  GstVstreamObject *obj = balance_object (balance);
  struct v4l2_control c = {
    .id = GPOINTER_TO_UINT (g_object_get_qdata (G_OBJECT (ch), cid_quark ())),
    .value = value,
  };
  gint ret = -1, err = EBADF;

  g_mutex_lock (&obj->controls_lock);
  if (obj->fd >= 0 && c.id) {
    ret = gst_vstream_object_ioctl (obj, VIDIOC_S_CTRL, &c);
    err = errno;
  }
  g_mutex_unlock (&obj->controls_lock);
  if (ret < 0) {
    GST_VSTREAM_ELEMENT_WARNING (obj, RESOURCE, SETTINGS,
        ("Could not set %s of device '%s' to %d.", ch->label, obj->device,
            value), ("VIDIOC_S_CTRL: %s", g_strerror (err)));
    return;
  }
  gst_color_balance_value_changed (balance, ch, value);
}

static gint
balance_get_value (GstColorBalance * balance, GstColorBalanceChannel * ch)
{
  GstVstreamObject *obj = balance_object (balance);
  struct v4l2_control c = {
    .id = GPOINTER_TO_UINT (g_object_get_qdata (G_OBJECT (ch), cid_quark ())),
  };
  gint ret = -1;

  g_mutex_lock (&obj->controls_lock);
  if (obj->fd >= 0 && c.id)
    ret = gst_vstream_object_ioctl (obj, VIDIOC_G_CTRL, &c);
  g_mutex_unlock (&obj->controls_lock);
  return ret < 0 ? ch->min_value : c.value;
}

static GstColorBalanceType
balance_get_type (GstColorBalance * balance)
{
  return GST_COLOR_BALANCE_HARDWARE;
}

void
gst_vstream_color_balance_init (gpointer g_iface, gpointer iface_data)
{
  GstColorBalanceInterface *iface = g_iface;

  iface->list_channels = balance_list_channels;
  iface->set_value = balance_set_value;
  iface->get_value = balance_get_value;
  iface->get_balance_type = balance_get_type;
}
