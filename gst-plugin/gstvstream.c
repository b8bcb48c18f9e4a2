/* vstream GStreamer plugin: registration.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/gst.h>

#include "vstreamsrc.h"
#include "vstreamsink.h"
#include "vstreamdeviceprovider.h"

GST_DEBUG_CATEGORY (gst_vstream_debug);

static gboolean
plugin_init (GstPlugin * plugin)
{
  gboolean ret = FALSE;

  GST_DEBUG_CATEGORY_INIT (gst_vstream_debug, "vstream", 0,
      "vstream V4L2 elements");
  ret |= GST_ELEMENT_REGISTER (vstreamsrc, plugin);
  ret |= GST_ELEMENT_REGISTER (vstreamsink, plugin);
  ret |= GST_DEVICE_PROVIDER_REGISTER (vstreamdeviceprovider, plugin);
  return ret;
}

GST_PLUGIN_DEFINE (GST_VERSION_MAJOR, GST_VERSION_MINOR, vstream,
    "Zero-copy V4L2 source and sink for vstream virtual devices",
    plugin_init, VERSION, "LGPL", PACKAGE, PACKAGE_ORIGIN)
