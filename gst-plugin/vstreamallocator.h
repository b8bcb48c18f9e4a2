/* vstream GStreamer plugin: memory of V4L2 driver buffers.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_VSTREAM_ALLOCATOR_H__
#define __GST_VSTREAM_ALLOCATOR_H__

#include <gst/gst.h>
#include "vstreamobject.h"

G_BEGIN_DECLS

#define GST_VSTREAM_MEMORY_TYPE "VstreamMemory"
#define GST_TYPE_VSTREAM_ALLOCATOR (gst_vstream_allocator_get_type ())
G_DECLARE_FINAL_TYPE (GstVstreamAllocator, gst_vstream_allocator, GST,
    VSTREAM_ALLOCATOR, GstAllocator);

GstVstreamAllocator *gst_vstream_allocator_new (GstVstreamObject * obj);
guint gst_vstream_allocator_start (GstVstreamAllocator * alloc, guint count,
    guint32 memory, guint n_mem);
void gst_vstream_allocator_stop (GstVstreamAllocator * alloc);
void gst_vstream_allocator_orphan (GstVstreamAllocator * alloc);
guint32 gst_vstream_allocator_memory (GstVstreamAllocator * alloc);
gint gst_vstream_allocator_fd (GstVstreamAllocator * alloc);
gint gst_vstream_allocator_ioctl (GstVstreamAllocator * alloc,
    unsigned long request, void *arg);
const gchar *gst_vstream_allocator_device (GstVstreamAllocator * alloc);
GstMemory *gst_vstream_allocator_wrap (GstVstreamAllocator * alloc,
    guint index, guint plane);
GstMemory *gst_vstream_allocator_export (GstVstreamAllocator * alloc,
    guint index, guint plane, GstAllocator * dmabuf);

gboolean gst_is_vstream_memory (GstMemory * mem);

G_END_DECLS
#endif
