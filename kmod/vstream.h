/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vstream - virtual V4L2 streaming pipes.
 *
 * A pipe is one output node (the producer writes frames) and one or more
 * capture nodes (readers).  Each frame queued on the output node reaches
 * every streaming capture node: without a copy when both are MMAP buffers
 * (the reader's buffer is pointed at the producer's frame, vstream-mem.c),
 * else by one copy.  No reader can hold up the producer or another reader.
 * With no producer, the capture nodes generate a test pattern on their own
 * clock.
 */
#ifndef _VSTREAM_H_
#define _VSTREAM_H_

#include <linux/kthread.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <media/tpg/v4l2-tpg.h>
#include <media/v4l2-ctrls.h>
#include <media/v4l2-dev.h>
#include <media/v4l2-device.h>
#include <media/videobuf2-v4l2.h>

#define VSTREAM_NAME		"vstream"
#define VSTREAM_MAX_PIPES	16	/* made by module parameters */
#define VSTREAM_MAX_IDS		64	/* in all, with runtime pipes */
#define VSTREAM_NAME_MAX	20	/* a pipe's name: node names add "-capture-N" */
#define VSTREAM_MAX_READERS	4
#define VSTREAM_MIN_SIZE	16
#define VSTREAM_MAX_BUFFERS	32
#define VSTREAM_QUEUE_MB	1024
#define VSTREAM_FPS_MIN		1
#define VSTREAM_FPS_MAX		240
#define VSTREAM_FPS_DEFAULT	30

/*
 * Private controls, user class.  Not V4L2_CID_USER_BASE | 0xf000: vivid,
 * pwc, solo6x10 and cpia2 use that, and v4l2-controls.h reserves ranges
 * upwards from 0x1000; 0xe000 is neither.
 */
#define VSTREAM_CID_BASE	(V4L2_CID_USER_BASE | 0xe000)
#define VSTREAM_CID_IDLE_MODE	(VSTREAM_CID_BASE + 0)
#define VSTREAM_CID_PRODUCER_TIMEOUT	(VSTREAM_CID_BASE + 1)

enum vstream_idle_mode {
	VSTREAM_IDLE_PATTERN,	/* readers get the test pattern */
	VSTREAM_IDLE_LAST,	/* readers get the producer's last frame */
};

/* Module parameters, shared by all files. */
extern unsigned int vstream_max_width;
extern unsigned int vstream_max_height;
extern unsigned int vstream_min_buffers;
extern unsigned int vstream_max_queue_mb;
extern bool vstream_pace_output;

struct vstream_format {
	u32 fourcc;
	u8 depth;	/* bits per pixel in plane 0 (the luma plane if planar) */
	u8 size_mul;	/* sizeimage = bytesperline * height * size_mul / 2 */
	u8 walign;	/* width must be a multiple of this */
	u8 halign;	/* height must be a multiple of this */
	bool yuv;
	bool compressed;
};

struct vstream_frame;		/* frame memory, see vstream-mem.c */

struct vstream_buffer {
	struct vb2_v4l2_buffer vb;	/* must be first */
	struct list_head list;		/* on node->active or pipe->done */
	enum vb2_buffer_state state;	/* on pipe->done: how it completes */
	/*
	 * A producer's, queued: the frame its QBUF detached for delivery
	 * (NULL: delivered by copy), and its delivery's cost.
	 */
	struct vstream_frame *frame;
	u64 cost_ns;
};

static inline struct vstream_buffer *to_vstream_buffer(struct vb2_buffer *vb)
{
	return container_of(to_vb2_v4l2_buffer(vb), struct vstream_buffer, vb);
}

/*
 * What a pipe is made of, from module parameters or from configfs
 * (vstream-configfs.c).  The pipe keeps a copy, constant while the pipe
 * exists.
 */
struct vstream_pipe_config {
	char name[VSTREAM_NAME_MAX + 1];
	char label[32];
	unsigned int readers;
	unsigned int max_width;
	unsigned int max_height;
	/* set: the only format, size and interval the nodes offer */
	const struct vstream_format *fixed;
	u32 fixed_width;
	u32 fixed_height;
	struct v4l2_fract fixed_tpf;
	const int *video_nr;		/* output, then readers; NULL: any */
	/* the nodes speak the multi-planar API, each frame in one plane */
	bool mplane;
};

struct vstream_pipe;

struct vstream_node {
	struct vstream_pipe *pipe;
	struct video_device vdev;
	struct vb2_queue queue;
	struct v4l2_ctrl_handler ctrls;
	struct v4l2_ctrl *ctrl_pattern;
	struct v4l2_ctrl *ctrl_idle;
	bool output;
	unsigned int reader;		/* capture nodes: index in the pipe */

	/* Format state: changed only while the queue owns no buffers. */
	const struct vstream_format *vfmt;
	struct v4l2_pix_format fmt;
	struct v4l2_fract tpf;		/* time per frame */

	/* Buffers owned by the driver (queued, not yet done). */
	struct list_head active;
	u64 qbuf_ns;			/* output: time of the last QBUF */
	u64 timeout_ns;			/* output: silence that counts as no producer, 0: none */
	u64 deliver_ns;			/* output: a delivery's cost, running average */
	bool streaming;

	size_t write_len;		/* length of the last write(), output only */

	u32 seq;			/* next sequence number (fields for ALTERNATE) */
	u64 next_ns;			/* next tick (pattern or paced output) */
	struct tpg_data tpg;
	int idle_mode;			/* enum vstream_idle_mode */

	/*
	 * Counters for sysfs; the output node's are the pipe's totals:
	 * deliveries over all readers, with or without a copy, and drops.
	 */
	u64 frames;
	u64 drops;
	u64 zerocopy;
	u64 copies;
	atomic64_t cow;			/* copies on a reader's write, vstream-mem.c */
	/*
	 * output: frames its QBUF detached to share; capture: deliveries
	 * that repointed one of its buffers
	 */
	u64 flips;
};

/*
 * Locking: one mutex, @lock, guards all state of the pipe and its nodes.
 * video_device.lock and vb2_queue.lock point at it, so every ioctl, file
 * operation and vb2 callback of every node runs under it; the producer's
 * format drives the readers' formats, so the nodes cannot lock apart.
 * A producer frame reaches the readers inside the QBUF that queues it
 * (or in a round of the pipe thread, which holds @lock for each round),
 * so stream start/stop never race a delivery; a blocking DQBUF drops it
 * while it waits.  The buffers a delivery settles wait on @done and are
 * completed together at the end of that QBUF, write() or round, just
 * before @lock is released (vstream_pipe_complete()): a reader woken
 * mid-delivery could only wait for @lock, which its poll and DQBUF take,
 * and the producer's buffer must not complete inside its buf_queue (the
 * flags QBUF returns stay exact).  So @done is
 * empty whenever @lock is free.  Control handlers keep their own lock and
 * are always entered with @lock already held.  Frame memory has its own
 * locks (vstream-mem.c), taken inside @lock and inside page faults.
 */
struct vstream_pipe {
	unsigned int id;		/* bus_info and thread name */
	struct vstream_pipe_config cfg;	/* constant; its video_nr is NULL */
	struct v4l2_device v4l2_dev;
	struct mutex lock;		/* see above */
	struct vstream_node out;
	struct vstream_node cap[VSTREAM_MAX_READERS];
	unsigned int readers;
	struct list_head done;		/* settled buffers, see above */

	/* Frames no buffer uses, kept for the next detach (vstream-mem.c). */
	spinlock_t spare_lock;
	struct list_head spare;
	unsigned int nspare;
	unsigned int spare_gen;		/* one producer stream's frames */

	struct task_struct *thread;
	wait_queue_head_t wait;
	bool kick;

	/* Producer's last frame, kept while a reader wants VSTREAM_IDLE_LAST. */
	struct vstream_frame *last;
	size_t last_used;
	struct v4l2_pix_format last_fmt;
	u32 last_field;
	bool keep_last;			/* some reader wants VSTREAM_IDLE_LAST */
};

/* vstream-core.c */
struct vstream_pipe *vstream_pipe_create(const struct vstream_pipe_config *cfg);
void vstream_pipe_destroy(struct vstream_pipe *pipe);
int vstream_check_config(const struct vstream_pipe_config *cfg);
bool vstream_name_valid(const char *name);

/* vstream-configfs.c */
int vstream_configfs_init(void);
void vstream_configfs_exit(void);

/* vstream-formats.c */
const struct vstream_format *vstream_find_format(u32 fourcc);
const struct vstream_format *vstream_format_by_index(unsigned int index);
unsigned int vstream_num_formats(void);
void vstream_fill_pix(const struct vstream_pipe *pipe, const struct vstream_format *vf,
		      struct v4l2_pix_format *pix, bool output);
int vstream_parse_format(const char *s, struct vstream_pipe_config *cfg);
bool vstream_field_valid(const struct vstream_format *vf, u32 field);
void vstream_clamp_tpf(struct v4l2_fract *tpf);
int vstream_gen_jpeg(u8 *dst, size_t size, unsigned int width, unsigned int height);

/* vstream-common.c: ioctls shared by both directions */
extern const struct v4l2_file_operations vstream_fops;
int vstream_querycap(struct file *file, void *priv, struct v4l2_capability *cap);
int vstream_enum_fmt(struct file *file, void *priv, struct v4l2_fmtdesc *f);
int vstream_enum_framesizes(struct file *file, void *priv,
			    struct v4l2_frmsizeenum *fsize);
int vstream_enum_frameintervals(struct file *file, void *priv,
				struct v4l2_frmivalenum *fival);
int vstream_g_fmt(struct file *file, void *priv, struct v4l2_format *f);
int vstream_try_fmt(struct file *file, void *priv, struct v4l2_format *f);
int vstream_s_fmt(struct file *file, void *priv, struct v4l2_format *f);
int vstream_g_fmt_mplane(struct file *file, void *priv, struct v4l2_format *f);
int vstream_try_fmt_mplane(struct file *file, void *priv, struct v4l2_format *f);
int vstream_s_fmt_mplane(struct file *file, void *priv, struct v4l2_format *f);
int vstream_g_parm(struct file *file, void *priv, struct v4l2_streamparm *parm);
int vstream_s_parm(struct file *file, void *priv, struct v4l2_streamparm *parm);
int vstream_queue_setup(struct vstream_node *node, unsigned int *nbuffers,
			unsigned int *nplanes, unsigned int sizes[]);
int vstream_queue_init(struct vstream_node *node);
void vstream_return_buffers(struct vstream_node *node, enum vb2_buffer_state state);
bool vstream_producer_locked(struct vstream_pipe *pipe);

/* vstream-capture.c / vstream-output.c */
extern const struct v4l2_ioctl_ops vstream_cap_ioctl_ops;
extern const struct v4l2_ioctl_ops vstream_out_ioctl_ops;
extern const struct vb2_ops vstream_cap_qops;
extern const struct vb2_ops vstream_out_qops;
void vstream_cap_setup_tpg(struct vstream_node *node);
void vstream_cap_follow_producer(struct vstream_node *cap);
ssize_t vstream_out_write(struct file *file, const char __user *data, size_t count,
			  loff_t *ppos);

/* vstream-convert.c */
bool vstream_can_convert(const struct v4l2_pix_format *src,
			 const struct v4l2_pix_format *dst);
void vstream_convert(const struct v4l2_pix_format *src, const void *sbuf,
		     const struct v4l2_pix_format *dst, void *dbuf);

/* vstream-ctrls.c */
int vstream_ctrls_init(struct vstream_node *node);

/* vstream-mem.c */
extern const struct vb2_mem_ops vstream_mem_ops;
int vstream_mem_init(void);
void vstream_mem_exit(void);
int vstream_open(struct file *file);
struct vstream_frame *vstream_frame_get(struct vstream_frame *f);
void vstream_frame_put(struct vstream_frame *f);
void *vstream_frame_vaddr(const struct vstream_frame *f);
void vstream_mem_drain(struct vstream_pipe *pipe);
bool vstream_buf_can_share(struct vstream_buffer *buf);
struct vstream_frame *vstream_buf_detach(struct vstream_buffer *buf);
struct vstream_frame *vstream_buf_get_frame(struct vstream_buffer *buf);
struct vstream_frame *vstream_buf_new_frame(struct vstream_buffer *buf);
bool vstream_buf_share(struct vstream_buffer *buf, struct vstream_frame *f, u64 *flips);
void vstream_buf_unmap(struct vstream_buffer *buf);
void *vstream_buf_writable(struct vstream_buffer *buf);

/* vstream-pipe.c */
bool vstream_pipe_shares_into(struct vstream_node *cap);
bool vstream_fed(const struct vstream_node *cap);
bool vstream_same_layout(const struct v4l2_pix_format *a, const struct v4l2_pix_format *b);
void vstream_pipe_forget_last(struct vstream_pipe *pipe);
int vstream_pipe_start_thread(struct vstream_pipe *pipe);
void vstream_pipe_stop_thread(struct vstream_pipe *pipe);
void vstream_pipe_kick(struct vstream_pipe *pipe);
void vstream_pipe_produce(struct vstream_pipe *pipe, struct vstream_buffer *obuf);
void vstream_pipe_complete(struct vstream_pipe *pipe);
void vstream_node_set_streaming(struct vstream_node *node, bool on);

#endif
