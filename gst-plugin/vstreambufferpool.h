/* vstream GStreamer plugin: a buffer pool over V4L2 streaming I/O.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_VSTREAM_BUFFER_POOL_H__
#define __GST_VSTREAM_BUFFER_POOL_H__

#include <gst/gst.h>
#include <gst/video/video.h>
#include "vstreamobject.h"

G_BEGIN_DECLS

#define GST_TYPE_VSTREAM_BUFFER_POOL (gst_vstream_buffer_pool_get_type ())
G_DECLARE_FINAL_TYPE (GstVstreamBufferPool, gst_vstream_buffer_pool, GST,
    VSTREAM_BUFFER_POOL, GstBufferPool);

GstBufferPool *gst_vstream_buffer_pool_new (GstVstreamObject * obj,
    GstCaps * caps);
void gst_vstream_buffer_pool_pinnable_params (GstAllocationParams * params);
void gst_vstream_buffer_pool_config_pinnable (GstBufferPool * pool,
    GstStructure * config, GstCaps * caps, guint size, guint min, guint max);
GstFlowReturn gst_vstream_buffer_pool_render (GstVstreamBufferPool * pool,
    GstBuffer * buf);
void gst_vstream_buffer_pool_set_flushing (GstVstreamBufferPool * pool,
    gboolean flushing);
guint gst_vstream_buffer_pool_queued (GstVstreamBufferPool * pool);
guint gst_vstream_buffer_pool_count (GstVstreamBufferPool * pool);
GstFlowReturn gst_vstream_buffer_pool_maybe_copy (GstVstreamBufferPool * pool,
    GstBuffer ** buf);
gboolean gst_vstream_buffer_pool_set_lender (GstVstreamBufferPool * pool,
    GstBufferPool * lender);
gboolean gst_vstream_buffer_pool_imports (GstVstreamBufferPool * pool,
    GstBuffer * buf);
void gst_vstream_buffer_pool_release (GstVstreamBufferPool * pool);
void gst_vstream_buffer_pool_replace (GstObject * owner, GstBufferPool ** slot,
    GstBufferPool * pool, const gboolean * flushing);
void gst_vstream_buffer_pool_owner_set_flushing (GstObject * owner,
    GstBufferPool ** slot, gboolean * state, gboolean flushing);
void gst_vstream_buffer_pool_drain (GstVstreamBufferPool * pool);

G_END_DECLS
#endif
