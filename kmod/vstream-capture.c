// SPDX-License-Identifier: GPL-2.0
/*
 * The reader side of a pipe: capture ioctls, the
 * capture vb2 queue and the test pattern generator set-up.
 */

#include <linux/videodev2.h>
#include <media/v4l2-event.h>
#include <media/v4l2-ioctl.h>

#include "vstream.h"
#include "vstream-compat.h"

/**
 * vstream_cap_setup_tpg() - set the test pattern generator to the node's format
 * @node: a capture node, its format just set
 *
 * Keeps the idle pattern in step with the node's format, size, field and
 * colorimetry; compressed formats have no pattern.
 */
void vstream_cap_setup_tpg(struct vstream_node *node)
{
	struct v4l2_pix_format *pix = &node->fmt;
	struct tpg_data *tpg = &node->tpg;
	u32 frame_height = pix->height;

	if (node->vfmt->compressed)
		return;
	if (pix->field == V4L2_FIELD_TOP || pix->field == V4L2_FIELD_BOTTOM ||
	    pix->field == V4L2_FIELD_ALTERNATE)
		frame_height *= 2;
	tpg_s_fourcc(tpg, pix->pixelformat);
	tpg_reset_source(tpg, pix->width, frame_height, pix->field);
	tpg_s_bytesperline(tpg, 0, pix->bytesperline);
	tpg_s_colorspace(tpg, pix->colorspace);
	tpg_s_ycbcr_enc(tpg, pix->ycbcr_enc);
	tpg_s_quantization(tpg, pix->quantization);
	tpg_s_xfer_func(tpg, pix->xfer_func);
	tpg_update_mv_step(tpg);
}

/**
 * vstream_cap_follow_producer() - take the producer's format and interval
 * @cap: a capture node
 *
 * A reader that owns buffers keeps its format.
 *
 * Context: pipe->lock held.
 */
void vstream_cap_follow_producer(struct vstream_node *cap)
{
	struct vstream_node *out = &cap->pipe->out;

	if (vb2_is_busy(&cap->queue))
		return;
	if (cap->vfmt == out->vfmt && !memcmp(&cap->fmt, &out->fmt, sizeof(cap->fmt)) &&
	    cap->tpf.numerator == out->tpf.numerator &&
	    cap->tpf.denominator == out->tpf.denominator)
		return;
	cap->fmt = out->fmt;
	cap->vfmt = out->vfmt;
	cap->tpf = out->tpf;
	vstream_cap_setup_tpg(cap);
}

static int cap_queue_setup(struct vb2_queue *q, unsigned int *nbuffers,
			   unsigned int *nplanes, unsigned int sizes[],
			   struct device *alloc_devs[])
{
	struct vstream_node *node = vb2_get_drv_priv(q);

	if (!vstream_vb2_num_buffers(q) && vstream_producer_locked(node->pipe))
		vstream_cap_follow_producer(node);
	return vstream_queue_setup(node, nbuffers, nplanes, sizes);
}

static int cap_buf_prepare(struct vb2_buffer *vb)
{
	struct vstream_node *node = vb2_get_drv_priv(vb->vb2_queue);

	if (vb2_plane_size(vb, 0) < node->fmt.sizeimage)
		return -EINVAL;
	return 0;
}

static void cap_buf_queue(struct vb2_buffer *vb)
{
	struct vstream_node *node = vb2_get_drv_priv(vb->vb2_queue);
	struct vstream_buffer *buf = to_vstream_buffer(vb);

	if (vstream_pipe_shares_into(node))
		vstream_buf_unmap(buf);
	list_add_tail(&buf->list, &node->active);
	/* the producer's next frame fills it; else the thread's idle frames */
	if (!vstream_fed(node))
		vstream_pipe_kick(node->pipe);
}

static int cap_start_streaming(struct vb2_queue *q, unsigned int count)
{
	struct vstream_node *node = vb2_get_drv_priv(q);

	vstream_node_set_streaming(node, true);
	return 0;
}

static void cap_stop_streaming(struct vb2_queue *q)
{
	struct vstream_node *node = vb2_get_drv_priv(q);

	/* dequeued buffers keep their frames: nothing here touches them */
	vstream_node_set_streaming(node, false);
	vstream_return_buffers(node, VB2_BUF_STATE_ERROR);
}

const struct vb2_ops vstream_cap_qops = {
	.queue_setup		= cap_queue_setup,
	.buf_prepare		= cap_buf_prepare,
	.buf_queue		= cap_buf_queue,
	.start_streaming	= cap_start_streaming,
	.stop_streaming		= cap_stop_streaming,
	VSTREAM_VB2_WAIT_OPS
};

static int cap_enum_input(struct file *file, void *priv, struct v4l2_input *inp)
{
	if (inp->index)
		return -EINVAL;
	strscpy(inp->name, "vstream pipe", sizeof(inp->name));
	inp->type = V4L2_INPUT_TYPE_CAMERA;
	inp->capabilities = 0;
	inp->std = 0;
	inp->status = 0;
	return 0;
}

static int cap_g_input(struct file *file, void *priv, unsigned int *i)
{
	*i = 0;
	return 0;
}

static int cap_s_input(struct file *file, void *priv, unsigned int i)
{
	return i ? -EINVAL : 0;
}

static int cap_subscribe_event(struct v4l2_fh *fh, const struct v4l2_event_subscription *sub)
{
	if (sub->type == V4L2_EVENT_SOURCE_CHANGE)
		return v4l2_src_change_event_subscribe(fh, sub);
	return v4l2_ctrl_subscribe_event(fh, sub);
}

const struct v4l2_ioctl_ops vstream_cap_ioctl_ops = {
	.vidioc_querycap		= vstream_querycap,
	.vidioc_enum_fmt_vid_cap	= vstream_enum_fmt,
	.vidioc_g_fmt_vid_cap		= vstream_g_fmt,
	.vidioc_try_fmt_vid_cap		= vstream_try_fmt,
	.vidioc_s_fmt_vid_cap		= vstream_s_fmt,
	.vidioc_g_fmt_vid_cap_mplane	= vstream_g_fmt_mplane,
	.vidioc_try_fmt_vid_cap_mplane	= vstream_try_fmt_mplane,
	.vidioc_s_fmt_vid_cap_mplane	= vstream_s_fmt_mplane,
	.vidioc_enum_framesizes		= vstream_enum_framesizes,
	.vidioc_enum_frameintervals	= vstream_enum_frameintervals,
	.vidioc_g_parm			= vstream_g_parm,
	.vidioc_s_parm			= vstream_s_parm,
	.vidioc_enum_input		= cap_enum_input,
	.vidioc_g_input			= cap_g_input,
	.vidioc_s_input			= cap_s_input,
	.vidioc_reqbufs			= vb2_ioctl_reqbufs,
	.vidioc_create_bufs		= vb2_ioctl_create_bufs,
	.vidioc_prepare_buf		= vb2_ioctl_prepare_buf,
	.vidioc_querybuf		= vb2_ioctl_querybuf,
	.vidioc_qbuf			= vb2_ioctl_qbuf,
	.vidioc_dqbuf			= vb2_ioctl_dqbuf,
	.vidioc_expbuf			= vb2_ioctl_expbuf,
	.vidioc_streamon		= vb2_ioctl_streamon,
	.vidioc_streamoff		= vb2_ioctl_streamoff,
	.vidioc_log_status		= v4l2_ctrl_log_status,
	.vidioc_subscribe_event		= cap_subscribe_event,
	.vidioc_unsubscribe_event	= v4l2_event_unsubscribe,
};
