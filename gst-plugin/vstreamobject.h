/* vstream GStreamer plugin: the device core shared by vstreamsrc and
 * vstreamsink (open, capabilities, caps probing, format set-up, stats).
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_VSTREAM_OBJECT_H__
#define __GST_VSTREAM_OBJECT_H__

#include <gst/gst.h>
#include <gst/video/video.h>
#include <linux/videodev2.h>

#include "vstreammplane.h"

G_BEGIN_DECLS

typedef enum
{
  GST_VSTREAM_IO_AUTO = 0,
  GST_VSTREAM_IO_RW,
  GST_VSTREAM_IO_MMAP,
  GST_VSTREAM_IO_USERPTR,
  GST_VSTREAM_IO_DMABUF,
  GST_VSTREAM_IO_DMABUF_IMPORT,
} GstVstreamIOMode;

#define GST_TYPE_VSTREAM_IO_MODE (gst_vstream_io_mode_get_type ())
GType gst_vstream_io_mode_get_type (void);

/* The ioctl entry point; unit tests swap in a canned device. */
typedef int (*GstVstreamIoctlFunc) (int fd, unsigned long request, void *arg);

/*
 * Test hooks: host unit tests (tests/unit) run the elements against a
 * canned device by replacing the three calls that reach the driver.  A
 * NULL member keeps the real call.  Set before any element is made;
 * objects take the ioctl hook when they are created.
 */
typedef struct
{
  GstVstreamIoctlFunc ioctl;
  void *(*mmap) (gsize length, gint fd, off_t offset);
  int (*munmap) (void *addr, gsize length);
} GstVstreamDeviceHooks;

void gst_vstream_set_device_hooks (const GstVstreamDeviceHooks * hooks);
void *gst_vstream_mmap (gint fd, gsize length, off_t offset);
void gst_vstream_munmap (void *addr, gsize length);

typedef struct _GstVstreamObject GstVstreamObject;

/*
 * Refcounted: the element holds one reference, and so does every pool and
 * allocator made for it, because those live on while memory of theirs is
 * still out in the pipeline (or in an application's GstSample) after the
 * element is gone.  They use a dup of fd of their own (see
 * vstreamallocator.c), never fd, which the element closes and reopens.
 */
struct _GstVstreamObject
{
  gint refcount;
  GstElement *element;          /* NULL once the element is finalized */
  enum v4l2_buf_type type;
  gchar *device;                /* as set, or found at open (device_found) */
  gboolean device_found;
  gint fd;
  GstVstreamIoctlFunc ioctl;
  gboolean mplane;              /* the device has only the _MPLANE types:
                                 * ioctls go through vstreammplane.c */

  struct v4l2_capability vcap;
  gchar *device_name;
  GstVstreamIOMode req_mode;
  GstVstreamIOMode mode;        /* chosen at set_format */
  guint min_buffers;            /* property; the device may ask for more */
  GstCaps *probed_caps;

  /* The negotiated format: caps as negotiated, and as system-memory caps
   * (what they stand for when DMA_DRM; the same caps otherwise) */
  GstCaps *nego_caps;
  GstCaps *caps;
  struct v4l2_format format;  /* single-planar view: for NV12M and kin,
                                 * the planes end to end */
  GstVstreamLayout layout;      /* the memory planes of a frame */
  GstVideoInfo info;
  struct v4l2_fract tpf;
  guint generation;             /* bumped by every REQBUFS that allocates */
  gboolean watch_source;        /* subscribed to V4L2_EVENT_SOURCE_CHANGE */
  gboolean bottom_first;        /* V4L2_FIELD_INTERLACED sends the bottom
                                 * field first: a 525-line (NTSC) standard */
  /* controls_lock: extra_controls and channels, and fd against close()
   * while a control is set from the application's thread */
  GMutex controls_lock;
  GstStructure *extra_controls; /* property; applied at open and when set */
  GList *channels;              /* GstColorBalanceChannels, while open */

  /* Counters for the "stats" property, under stats_lock */
  GMutex stats_lock;
  guint64 frames;
  guint64 drops;
  guint64 copies;
  guint64 zero_copy;
};

/* Properties both elements have; the helpers below serve them. */
enum
{
  GST_VSTREAM_PROP_0,
  GST_VSTREAM_PROP_DEVICE,
  GST_VSTREAM_PROP_DEVICE_NAME,
  GST_VSTREAM_PROP_IO_MODE,
  GST_VSTREAM_PROP_MIN_BUFFERS,
  GST_VSTREAM_PROP_STATS,
  GST_VSTREAM_PROP_DEVICE_FD,
  GST_VSTREAM_PROP_EXTRA_CONTROLS,
};

void gst_vstream_object_install_properties (GObjectClass * gobject_class,
    const gchar * device_blurb, const gchar * stats_blurb);
gboolean gst_vstream_object_set_property (GstVstreamObject * obj,
    guint prop_id, const GValue * value);
gboolean gst_vstream_object_get_property (GstVstreamObject * obj,
    guint prop_id, GValue * value);

/* GST_ELEMENT_ERROR for @obj's element; code that can run after the
 * element went away (a pool stopping when the last memory comes back)
 * can only log. */
#define GST_VSTREAM_ELEMENT_ERROR(obj, domain, code, text, debug)        \
  G_STMT_START {                                                          \
    if ((obj)->element)                                                   \
      GST_ELEMENT_ERROR ((obj)->element, domain, code, text, debug);      \
    else                                                                  \
      GST_WARNING ("device %s: error after its element went away",       \
          (obj)->device);                                                 \
  } G_STMT_END

/* The same, as a warning: the stream goes on. */
#define GST_VSTREAM_ELEMENT_WARNING(obj, domain, code, text, debug)      \
  G_STMT_START {                                                          \
    if ((obj)->element)                                                   \
      GST_ELEMENT_WARNING ((obj)->element, domain, code, text, debug);    \
  } G_STMT_END

GstVstreamObject *gst_vstream_object_new (GstElement * element,
    enum v4l2_buf_type type);
GstVstreamObject *gst_vstream_object_ref (GstVstreamObject * obj);
void gst_vstream_object_unref (GstVstreamObject * obj);
void gst_vstream_object_disown (GstVstreamObject * obj);
/* The object of vstreamsrc or vstreamsink @element. */
GstVstreamObject *gst_vstream_object_of (GstElement * element);

gboolean gst_vstream_object_open (GstVstreamObject * obj);
void gst_vstream_object_close (GstVstreamObject * obj);
gboolean gst_vstream_object_is_open (GstVstreamObject * obj);

enum v4l2_buf_type gst_vstream_object_buf_type (GstVstreamObject * obj);
gint gst_vstream_object_ioctl (GstVstreamObject * obj, unsigned long request,
    void *arg);
gint gst_vstream_object_ioctl_fd (GstVstreamObject * obj, gint fd,
    unsigned long request, void *arg);

GstCaps *gst_vstream_object_probe_caps (GstVstreamObject * obj);
GstCaps *gst_vstream_object_get_caps (GstVstreamObject * obj,
    GstCaps * filter, GstPadTemplate * templ);
gboolean gst_vstream_object_set_format (GstVstreamObject * obj,
    GstCaps * caps);
gboolean gst_vstream_object_get_current (GstVstreamObject * obj,
    struct v4l2_format *fmt, struct v4l2_fract *tpf);
guint gst_vstream_object_buffer_count (GstVstreamObject * obj);
gboolean gst_vstream_object_dmabuf_caps (GstVstreamObject * obj);
gboolean gst_vstream_object_layout_fits (GstVstreamObject * obj,
    GstCaps * caps, GstBuffer * buf);
gboolean gst_vstream_object_copy_frame (GstVstreamObject * obj,
    GstCaps * caps, GstBuffer * src, GstBuffer * dst);

GstStructure *gst_vstream_object_stats (GstVstreamObject * obj,
    GstStructure * s);
void gst_vstream_object_reset_stats (GstVstreamObject * obj);
gboolean gst_vstream_object_source_changed (GstVstreamObject * obj);
void gst_vstream_object_count (GstVstreamObject * obj, guint frames,
    guint drops, guint copies, guint zero_copy);

#if GST_CHECK_VERSION(1, 24, 0)
/* @caps and, after them, their DMA_DRM twins (takes @caps) */
GstCaps *gst_vstream_caps_add_dma_drm (GstCaps * caps);
#endif

gint gst_vstream_device_call (GstVstreamIoctlFunc func, gboolean mplane,
    gint fd, unsigned long request, void *arg);

G_END_DECLS
#endif
