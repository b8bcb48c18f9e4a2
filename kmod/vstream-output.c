// SPDX-License-Identifier: GPL-2.0
/*
 * The producer side of a pipe: output ioctls and the
 * output vb2 queue.  Queued buffers go to the pipe (vstream-pipe.c).
 */

#include <linux/videodev2.h>
#include <media/v4l2-event.h>
#include <media/v4l2-ioctl.h>

#include "vstream.h"
#include "vstream-compat.h"

static int out_queue_setup(struct vb2_queue *q, unsigned int *nbuffers,
			   unsigned int *nplanes, unsigned int sizes[],
			   struct device *alloc_devs[])
{
	return vstream_queue_setup(vb2_get_drv_priv(q), nbuffers, nplanes, sizes);
}

static int out_buf_out_validate(struct vb2_buffer *vb)
{
	struct vstream_node *node = vb2_get_drv_priv(vb->vb2_queue);
	struct vb2_v4l2_buffer *vbuf = to_vb2_v4l2_buffer(vb);

	if (node->fmt.field != V4L2_FIELD_ALTERNATE)
		vbuf->field = node->fmt.field;
	else if (vbuf->field != V4L2_FIELD_TOP && vbuf->field != V4L2_FIELD_BOTTOM)
		return -EINVAL;
	return 0;
}

static int out_buf_prepare(struct vb2_buffer *vb)
{
	struct vstream_node *node = vb2_get_drv_priv(vb->vb2_queue);

	/* a short payload is allowed: compressed frames vary in size */
	if (vb2_plane_size(vb, 0) < node->fmt.sizeimage)
		return -EINVAL;
	return 0;
}

static void out_buf_queue(struct vb2_buffer *vb)
{
	struct vstream_node *node = vb2_get_drv_priv(vb->vb2_queue);
	struct vstream_buffer *buf = to_vstream_buffer(vb);

	/* vb2's write() emulation hands the frame over with bytesused 0 */
	if (vb2_fileio_is_active(vb->vb2_queue))
		vb2_set_plane_payload(vb, 0, vb->vb2_queue->fileio_write_immediately ?
				      min_t(size_t, node->write_len, vb2_plane_size(vb, 0)) :
				      node->fmt.sizeimage);
	vstream_pipe_produce(node->pipe, buf);
}

/**
 * vstream_out_write() - write() on the output node
 * @file: the open output node
 * @data: the bytes
 * @count: how many
 * @ppos: the file position (unused by vb2's emulator)
 *
 * Runs through vb2's file I/O emulator.  A compressed frame is exactly one
 * write() of any length, so those are queued at once
 * (fileio_write_immediately, chosen with the format) and the length is
 * noted for out_buf_queue(); raw frames gather until a whole frame is
 * written, so a frame split over several writes (cat, dd) stays whole.
 * This is vb2_fop_write() plus the note, under the same lock.
 *
 * Return: the bytes taken, or vb2_fop_write()'s error.
 */
ssize_t vstream_out_write(struct file *file, const char __user *data, size_t count,
			  loff_t *ppos)
{
	struct vstream_node *node = video_drvdata(file);
	struct vb2_queue *q = &node->queue;
	ssize_t ret = -EBUSY;

	if (!node->output)
		return -EINVAL;
	if (!count)		/* not a frame */
		return 0;
	if (mutex_lock_interruptible(&node->pipe->lock))
		return -ERESTARTSYS;
	if (!vb2_queue_is_busy(q, file)) {
		node->write_len = count;
		ret = vb2_write(q, data, count, ppos, file->f_flags & O_NONBLOCK);
		if (vb2_fileio_is_active(q))
			q->owner = file->private_data;
		vstream_pipe_complete(node->pipe);
	}
	mutex_unlock(&node->pipe->lock);
	return ret;
}

static int out_start_streaming(struct vb2_queue *q, unsigned int count)
{
	struct vstream_node *node = vb2_get_drv_priv(q);
	struct vstream_pipe *pipe = node->pipe;
	static const struct v4l2_event ev = {
		.type = V4L2_EVENT_SOURCE_CHANGE,
		.u.src_change.changes = V4L2_EVENT_SRC_CH_RESOLUTION,
	};
	unsigned int i;

	/* Tell readers whose buffers no longer fit the producer's format. */
	for (i = 0; i < pipe->readers; i++) {
		struct vstream_node *cap = &pipe->cap[i];

		if (vb2_is_busy(&cap->queue) &&
		    memcmp(&cap->fmt, &node->fmt, sizeof(cap->fmt)))
			v4l2_event_queue(&cap->vdev, &ev);
	}
	vstream_node_set_streaming(node, true);
	return 0;
}

static void out_stop_streaming(struct vb2_queue *q)
{
	struct vstream_node *node = vb2_get_drv_priv(q);

	vstream_node_set_streaming(node, false);
	vstream_return_buffers(node, VB2_BUF_STATE_ERROR);
	/* the stream's frames are never handed out again */
	vstream_mem_drain(node->pipe);
}

const struct vb2_ops vstream_out_qops = {
	.queue_setup		= out_queue_setup,
	.buf_out_validate	= out_buf_out_validate,
	.buf_prepare		= out_buf_prepare,
	.buf_queue		= out_buf_queue,
	.start_streaming	= out_start_streaming,
	.stop_streaming		= out_stop_streaming,
	VSTREAM_VB2_WAIT_OPS
};

/* The buffers QBUF settled are done once its answer says "queued". */
static int out_qbuf(struct file *file, void *priv, struct v4l2_buffer *b)
{
	struct vstream_node *node = video_drvdata(file);
	int ret = vb2_ioctl_qbuf(file, priv, b);

	vstream_pipe_complete(node->pipe);
	return ret;
}

static int out_enum_output(struct file *file, void *priv, struct v4l2_output *o)
{
	if (o->index)
		return -EINVAL;
	strscpy(o->name, "vstream pipe", sizeof(o->name));
	o->type = V4L2_OUTPUT_TYPE_ANALOG;
	o->capabilities = 0;
	o->std = 0;
	return 0;
}

static int out_g_output(struct file *file, void *priv, unsigned int *i)
{
	*i = 0;
	return 0;
}

static int out_s_output(struct file *file, void *priv, unsigned int i)
{
	return i ? -EINVAL : 0;
}

const struct v4l2_ioctl_ops vstream_out_ioctl_ops = {
	.vidioc_querycap		= vstream_querycap,
	.vidioc_enum_fmt_vid_out	= vstream_enum_fmt,
	.vidioc_g_fmt_vid_out		= vstream_g_fmt,
	.vidioc_try_fmt_vid_out		= vstream_try_fmt,
	.vidioc_s_fmt_vid_out		= vstream_s_fmt,
	.vidioc_g_fmt_vid_out_mplane	= vstream_g_fmt_mplane,
	.vidioc_try_fmt_vid_out_mplane	= vstream_try_fmt_mplane,
	.vidioc_s_fmt_vid_out_mplane	= vstream_s_fmt_mplane,
	.vidioc_enum_framesizes		= vstream_enum_framesizes,
	.vidioc_enum_frameintervals	= vstream_enum_frameintervals,
	.vidioc_g_parm			= vstream_g_parm,
	.vidioc_s_parm			= vstream_s_parm,
	.vidioc_enum_output		= out_enum_output,
	.vidioc_g_output		= out_g_output,
	.vidioc_s_output		= out_s_output,
	.vidioc_reqbufs			= vb2_ioctl_reqbufs,
	.vidioc_create_bufs		= vb2_ioctl_create_bufs,
	.vidioc_prepare_buf		= vb2_ioctl_prepare_buf,
	.vidioc_querybuf		= vb2_ioctl_querybuf,
	.vidioc_qbuf			= out_qbuf,
	.vidioc_dqbuf			= vb2_ioctl_dqbuf,
	.vidioc_expbuf			= vb2_ioctl_expbuf,
	.vidioc_streamon		= vb2_ioctl_streamon,
	.vidioc_streamoff		= vb2_ioctl_streamoff,
	.vidioc_log_status		= v4l2_ctrl_log_status,
	.vidioc_subscribe_event		= v4l2_ctrl_subscribe_event,
	.vidioc_unsubscribe_event	= v4l2_event_unsubscribe,
};
