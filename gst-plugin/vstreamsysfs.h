/* vstream GStreamer plugin: vstream's nodes found in sysfs, and the
 * vstream:// URI handler.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_VSTREAM_SYSFS_H__
#define __GST_VSTREAM_SYSFS_H__

#include "vstreamobject.h"

G_BEGIN_DECLS

gboolean gst_vstream_sysfs_node_is_vstream (const gchar * node);
gchar *gst_vstream_default_device (gboolean output);

/* vstream:///dev/videoN, vstream://PIPE[/READER] for both elements */
void gst_vstream_uri_handler_init (gpointer g_iface, gpointer iface_data);

G_END_DECLS
#endif
