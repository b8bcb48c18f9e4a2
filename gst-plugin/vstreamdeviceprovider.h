/* vstream GStreamer plugin: lists V4L2 video nodes as GstDevices.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_VSTREAM_DEVICE_PROVIDER_H__
#define __GST_VSTREAM_DEVICE_PROVIDER_H__

#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_TYPE_VSTREAM_DEVICE_PROVIDER (gst_vstream_device_provider_get_type ())
G_DECLARE_FINAL_TYPE (GstVstreamDeviceProvider, gst_vstream_device_provider,
    GST, VSTREAM_DEVICE_PROVIDER, GstDeviceProvider);

#define GST_TYPE_VSTREAM_DEVICE (gst_vstream_device_get_type ())
G_DECLARE_FINAL_TYPE (GstVstreamDevice, gst_vstream_device, GST,
    VSTREAM_DEVICE, GstDevice);

GST_DEVICE_PROVIDER_REGISTER_DECLARE (vstreamdeviceprovider);

G_END_DECLS
#endif
