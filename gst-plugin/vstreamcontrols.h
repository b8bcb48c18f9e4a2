/* vstream GStreamer plugin: device controls (extra-controls, ColorBalance).
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_VSTREAM_CONTROLS_H__
#define __GST_VSTREAM_CONTROLS_H__

#include <gst/video/colorbalance.h>
#include "vstreamobject.h"

G_BEGIN_DECLS

/* extra-controls: apply obj->extra_controls to the open device */
void gst_vstream_controls_apply (GstVstreamObject * obj);
/* ColorBalance channels of the open device, and their release */
void gst_vstream_controls_probe (GstVstreamObject * obj);
void gst_vstream_controls_clear (GstVstreamObject * obj);
/* GstColorBalance for vstreamsrc and vstreamsink */
void gst_vstream_color_balance_init (gpointer g_iface, gpointer iface_data);

G_END_DECLS
#endif
