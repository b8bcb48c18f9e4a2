// SPDX-License-Identifier: GPL-2.0
/*
 * File operations and ioctls shared by output and
 * capture nodes: capabilities, format enumeration and negotiation, frame
 * intervals, and the vb2 queue set-up.
 */

#include <linux/videodev2.h>
#include <media/v4l2-event.h>
#include <media/v4l2-ioctl.h>

#include "vstream.h"
#include "vstream-compat.h"

/**
 * vstream_producer_locked() - whether the producer's format is the pipe's
 * @pipe: the pipe
 *
 * Once the producer owns buffers its format is the pipe's format: every
 * reader that is not itself busy follows it.
 *
 * Return: true while the output queue owns buffers.
 */
bool vstream_producer_locked(struct vstream_pipe *pipe)
{
	return vb2_is_busy(&pipe->out.queue);
}

static bool vstream_follows(struct vstream_node *node)
{
	if (node->output || !vstream_producer_locked(node->pipe))
		return false;
	vstream_cap_follow_producer(node);
	return true;
}

/*
 * Names a person can pick from a browser's camera list: every reader of a
 * pipe gets its own card name, and each node its own bus_info of fixed
 * width, because Firefox finds the device it listed by a bus_info
 * prefix (platform:vstream-1 would also match platform:vstream-10).
 */
static void vstream_node_names(struct vstream_node *node, struct v4l2_capability *cap)
{
	struct vstream_pipe *pipe = node->pipe;
	char suffix[16] = "";
	int room;

	if (!node->output && pipe->readers > 1)
		snprintf(suffix, sizeof(suffix), " (reader %u)", node->reader);
	/* the label gives way so the reader's number always shows */
	room = sizeof(cap->card) - 1 - strlen(suffix);
	snprintf(cap->card, sizeof(cap->card), "%.*s%s", room, pipe->cfg.label, suffix);
	if (node->output)
		snprintf(cap->bus_info, sizeof(cap->bus_info), "platform:vstream-%02u-out",
			 pipe->id);
	else
		snprintf(cap->bus_info, sizeof(cap->bus_info), "platform:vstream-%02u-cap%u",
			 pipe->id, node->reader);
}

/**
 * vstream_querycap() - VIDIOC_QUERYCAP of either direction
 * @file: the open node
 * @priv: the file handle (unused)
 * @cap: filled with the driver, card and bus_info names and capabilities
 *
 * Return: 0.
 */
int vstream_querycap(struct file *file, void *priv, struct v4l2_capability *cap)
{
	struct vstream_node *node = video_drvdata(file);

	strscpy(cap->driver, VSTREAM_NAME, sizeof(cap->driver));
	vstream_node_names(node, cap);
	/*
	 * Report only this node's direction: applications that still look at
	 * capabilities rather than device_caps must never see a mem2mem-like
	 * node.
	 */
	cap->capabilities = node->vdev.device_caps | V4L2_CAP_DEVICE_CAPS;
	return 0;
}

/**
 * vstream_enum_fmt() - VIDIOC_ENUM_FMT of either direction and API
 * @file: the open node
 * @priv: the file handle (unused)
 * @f: @f->index and @f->type in, the format out
 *
 * A reader that follows a producer, and a pipe with a fixed format, offer
 * one format; otherwise every format of the table.
 *
 * Return: 0, or -EINVAL for another buffer type or an index past the end.
 */
int vstream_enum_fmt(struct file *file, void *priv, struct v4l2_fmtdesc *f)
{
	struct vstream_node *node = video_drvdata(file);
	const struct vstream_format *vf;

	/* one handler serves both APIs: a node takes its own type only */
	if (f->type != node->queue.type)
		return -EINVAL;
	if (vstream_follows(node)) {
		if (f->index)
			return -EINVAL;
		vf = node->pipe->out.vfmt;
	} else if (node->pipe->cfg.fixed) {
		if (f->index)
			return -EINVAL;
		vf = node->pipe->cfg.fixed;
	} else {
		vf = vstream_format_by_index(f->index);
		if (!vf)
			return -EINVAL;
	}
	f->pixelformat = vf->fourcc;
	f->flags = vf->compressed ? V4L2_FMT_FLAG_COMPRESSED : 0;
	return 0;
}

/*
 * An idle reader offers what a webcam offers: discrete sizes and frame
 * intervals, because Chromium drops a camera whose sizes are stepwise, so
 * a page opened before the producer would find none.  The producer's
 * size and interval come first (what a reader most likely wants), then
 * common sizes up to max_width x max_height.  TRY_FMT, S_FMT and S_PARM
 * pick the nearest of them, as a webcam does: v4l2-compliance takes a
 * node that lists discrete sizes and accepts others for a scaler, and
 * fails it.  A reader that follows a producer offers exactly the
 * producer's size and interval.
 */
static const struct v4l2_frmsize_discrete vstream_idle_sizes[] = {
	{ 640, 480 }, { 320, 240 }, { 1280, 720 }, { 1920, 1080 }, { 3840, 2160 },
};

static const unsigned int vstream_idle_fps[] = { 30, 25, 15 };

static bool vstream_size_fits(const struct vstream_pipe *pipe,
			      const struct vstream_format *vf, u32 w, u32 h)
{
	return w >= VSTREAM_MIN_SIZE && w <= pipe->cfg.max_width && !(w % vf->walign) &&
	       h >= VSTREAM_MIN_SIZE && h <= pipe->cfg.max_height && !(h % vf->halign);
}

/*
 * The @index-th size an idle reader offers for @vf; false past the end.
 * A pipe with a fixed format offers its size alone, on both nodes.
 */
static bool vstream_idle_size(const struct vstream_node *node,
			      const struct vstream_format *vf, unsigned int index,
			      u32 *w, u32 *h)
{
	const struct vstream_pipe *pipe = node->pipe;
	const struct v4l2_pix_format *prod = &pipe->out.fmt;
	u32 pw = round_down(prod->width, vf->walign);
	u32 ph = round_down(prod->height, vf->halign);
	bool have_prod = vstream_size_fits(pipe, vf, pw, ph);
	unsigned int i;

	if (pipe->cfg.fixed) {
		if (index || vf != pipe->cfg.fixed)
			return false;
		*w = pipe->cfg.fixed_width;
		*h = pipe->cfg.fixed_height;
		return true;
	}
	if (have_prod && index-- == 0) {
		*w = pw;
		*h = ph;
		return true;
	}
	for (i = 0; i < ARRAY_SIZE(vstream_idle_sizes); i++) {
		const struct v4l2_frmsize_discrete *s = &vstream_idle_sizes[i];

		if (!vstream_size_fits(pipe, vf, s->width, s->height) ||
		    (have_prod && s->width == pw && s->height == ph))
			continue;
		if (index-- == 0) {
			*w = s->width;
			*h = s->height;
			return true;
		}
	}
	return false;
}

/* The @index-th frame interval an idle reader offers; false past the end. */
static bool vstream_idle_interval(const struct vstream_node *node, unsigned int index,
				  struct v4l2_fract *tpf)
{
	const struct v4l2_fract *prod = &node->pipe->out.tpf;
	unsigned int i;

	if (node->pipe->cfg.fixed) {
		if (index)
			return false;
		*tpf = node->pipe->cfg.fixed_tpf;
		return true;
	}
	if (index-- == 0) {
		*tpf = *prod;
		return true;
	}
	for (i = 0; i < ARRAY_SIZE(vstream_idle_fps); i++) {
		if (prod->numerator == 1 && prod->denominator == vstream_idle_fps[i])
			continue;
		if (index-- == 0) {
			tpf->numerator = 1;
			tpf->denominator = vstream_idle_fps[i];
			return true;
		}
	}
	return false;
}

/**
 * vstream_enum_framesizes() - VIDIOC_ENUM_FRAMESIZES
 * @file: the open node
 * @priv: the file handle (unused)
 * @fsize: @fsize->index and @fsize->pixel_format in, the size out
 *
 * See vstream_idle_sizes[] for what an idle reader offers.
 *
 * Return: 0, or -EINVAL for a format the node does not offer or an index
 * past the end.
 */
int vstream_enum_framesizes(struct file *file, void *priv,
			    struct v4l2_frmsizeenum *fsize)
{
	struct vstream_node *node = video_drvdata(file);
	const struct vstream_format *vf;

	if (vstream_follows(node)) {
		struct v4l2_pix_format *pix = &node->pipe->out.fmt;

		if (fsize->index || fsize->pixel_format != pix->pixelformat)
			return -EINVAL;
		fsize->type = V4L2_FRMSIZE_TYPE_DISCRETE;
		fsize->discrete.width = pix->width;
		fsize->discrete.height = pix->height;
		return 0;
	}
	vf = vstream_find_format(fsize->pixel_format);
	if (!vf)
		return -EINVAL;
	if (!node->output || node->pipe->cfg.fixed) {
		fsize->type = V4L2_FRMSIZE_TYPE_DISCRETE;
		if (!vstream_idle_size(node, vf, fsize->index, &fsize->discrete.width,
				       &fsize->discrete.height))
			return -EINVAL;
		return 0;
	}
	/* a producer may send any size */
	if (fsize->index)
		return -EINVAL;
	fsize->type = V4L2_FRMSIZE_TYPE_STEPWISE;
	fsize->stepwise.min_width = VSTREAM_MIN_SIZE;
	fsize->stepwise.max_width = round_down(node->pipe->cfg.max_width, vf->walign);
	fsize->stepwise.step_width = vf->walign;
	fsize->stepwise.min_height = VSTREAM_MIN_SIZE;
	fsize->stepwise.max_height = round_down(node->pipe->cfg.max_height, vf->halign);
	fsize->stepwise.step_height = vf->halign;
	return 0;
}

/* @w x @h is one of the sizes an idle reader offers for @vf. */
static bool vstream_idle_size_listed(const struct vstream_node *node,
				     const struct vstream_format *vf, u32 w, u32 h)
{
	unsigned int i;
	u32 lw, lh;

	for (i = 0; vstream_idle_size(node, vf, i, &lw, &lh); i++)
		if (lw == w && lh == h)
			return true;
	return false;
}

/* Fields in one buffer: TOP, BOTTOM and ALTERNATE buffers are half frames. */
static u32 vstream_frame_height(const struct v4l2_pix_format *pix)
{
	if (pix->field == V4L2_FIELD_TOP || pix->field == V4L2_FIELD_BOTTOM ||
	    pix->field == V4L2_FIELD_ALTERNATE)
		return pix->height * 2;
	return pix->height;
}

/*
 * Move an idle reader's @pix to the listed size nearest to it (the
 * distance UVC uses: the area the two sizes do not share).  Returns
 * whether it changed.
 */
static bool vstream_idle_snap_size(const struct vstream_node *node,
				   const struct vstream_format *vf,
				   struct v4l2_pix_format *pix)
{
	u32 w = pix->width, h = vstream_frame_height(pix);
	u32 lw, lh, bw = w, bh = h;
	u64 best = U64_MAX, d;
	unsigned int i;

	for (i = 0; vstream_idle_size(node, vf, i, &lw, &lh); i++) {
		d = (u64)w * h + (u64)lw * lh - 2ULL * min(w, lw) * min(h, lh);
		if (d < best) {
			best = d;
			bw = lw;
			bh = lh;
		}
	}
	if (bw == w && bh == h)
		return false;
	pix->width = bw;
	pix->height = h == pix->height ? bh : bh / 2;
	return true;
}

/* Move an idle reader's frame interval to the nearest listed one. */
static void vstream_idle_snap_interval(const struct vstream_node *node,
				       struct v4l2_fract *tpf)
{
	u64 want = div_u64((u64)tpf->numerator * NSEC_PER_SEC, tpf->denominator);
	u64 best = U64_MAX, ns, d;
	struct v4l2_fract l, pick = *tpf;
	unsigned int i;

	for (i = 0; vstream_idle_interval(node, i, &l); i++) {
		ns = div_u64((u64)l.numerator * NSEC_PER_SEC, l.denominator);
		d = ns > want ? ns - want : want - ns;
		if (d < best) {
			best = d;
			pick = l;
		}
	}
	*tpf = pick;
}

/**
 * vstream_enum_frameintervals() - VIDIOC_ENUM_FRAMEINTERVALS
 * @file: the open node
 * @priv: the file handle (unused)
 * @fival: format, size and index in, the interval out
 *
 * Return: 0, or -EINVAL for a format or size the node does not offer or
 * an index past the end.
 */
int vstream_enum_frameintervals(struct file *file, void *priv,
				struct v4l2_frmivalenum *fival)
{
	struct vstream_node *node = video_drvdata(file);
	const struct vstream_format *vf;

	if (vstream_follows(node)) {
		struct vstream_node *out = &node->pipe->out;

		if (fival->index || fival->pixel_format != out->fmt.pixelformat ||
		    fival->width != out->fmt.width || fival->height != out->fmt.height)
			return -EINVAL;
		fival->type = V4L2_FRMIVAL_TYPE_DISCRETE;
		fival->discrete = out->tpf;
		return 0;
	}
	vf = vstream_find_format(fival->pixel_format);
	if (!vf)
		return -EINVAL;
	if (!node->output || node->pipe->cfg.fixed) {
		if (!vstream_idle_size_listed(node, vf, fival->width, fival->height) ||
		    !vstream_idle_interval(node, fival->index, &fival->discrete))
			return -EINVAL;
		fival->type = V4L2_FRMIVAL_TYPE_DISCRETE;
		return 0;
	}
	if (fival->index || !vstream_size_fits(node->pipe, vf, fival->width, fival->height))
		return -EINVAL;
	fival->type = V4L2_FRMIVAL_TYPE_CONTINUOUS;
	fival->stepwise.min.numerator = 1;
	fival->stepwise.min.denominator = VSTREAM_FPS_MAX;
	fival->stepwise.max.numerator = 1;
	fival->stepwise.max.denominator = VSTREAM_FPS_MIN;
	fival->stepwise.step.numerator = 1;
	fival->stepwise.step.denominator = 1;
	return 0;
}

/**
 * vstream_g_fmt() - VIDIOC_G_FMT, single-planar
 * @file: the open node
 * @priv: the file handle (unused)
 * @f: the node's format out
 *
 * Return: 0, or -EINVAL for another buffer type.
 */
int vstream_g_fmt(struct file *file, void *priv, struct v4l2_format *f)
{
	struct vstream_node *node = video_drvdata(file);

	if (f->type != node->queue.type)
		return -EINVAL;
	vstream_follows(node);
	f->fmt.pix = node->fmt;
	return 0;
}

/**
 * vstream_try_fmt() - VIDIOC_TRY_FMT, single-planar
 * @file: the open node
 * @priv: the file handle (unused)
 * @f: the request in, the nearest format the node accepts out
 *
 * Return: 0, or -EINVAL for another buffer type.
 */
int vstream_try_fmt(struct file *file, void *priv, struct v4l2_format *f)
{
	struct vstream_node *node = video_drvdata(file);
	struct v4l2_pix_format *pix = &f->fmt.pix;
	const struct vstream_format *vf;

	if (f->type != node->queue.type)
		return -EINVAL;
	if (vstream_follows(node)) {
		*pix = node->pipe->out.fmt;
		return 0;
	}
	vf = node->pipe->cfg.fixed ?: vstream_find_format(pix->pixelformat);
	if (!vf)
		vf = vstream_format_by_index(0);
	/*
	 * G_FMT, a new width or format, S_FMT (ffmpeg's way): the stride left
	 * over from the old format is not padding the application wants, and
	 * a write() producer would go on writing packed lines into it.
	 */
	if ((pix->width != node->fmt.width || pix->pixelformat != node->fmt.pixelformat) &&
	    pix->bytesperline == node->fmt.bytesperline)
		pix->bytesperline = 0;
	vstream_fill_pix(node->pipe, vf, pix, node->output);
	if ((!node->output || node->pipe->cfg.fixed) && vstream_idle_snap_size(node, vf, pix))
		vstream_fill_pix(node->pipe, vf, pix, node->output);
	/*
	 * A reader that followed a producer keeps its colorimetry (its
	 * pattern and last frame are drawn in it) for the same format at any
	 * size, so TRY_FMT(G_FMT) is G_FMT after the producer has gone, and
	 * S_FMT(G_FMT) restores it after another size was set.
	 */
	if (!node->output && pix->pixelformat == node->fmt.pixelformat &&
	    pix->field == node->fmt.field) {
		pix->colorspace = node->fmt.colorspace;
		pix->ycbcr_enc = node->fmt.ycbcr_enc;
		pix->quantization = node->fmt.quantization;
		pix->xfer_func = node->fmt.xfer_func;
	}
	return 0;
}

/**
 * vstream_s_fmt() - VIDIOC_S_FMT, single-planar
 * @file: the open node
 * @priv: the file handle (unused)
 * @f: the request in, the format set out (as vstream_try_fmt() gives it)
 *
 * Return: 0; -EINVAL for another buffer type; -EBUSY if the node's queue
 * owns buffers and the format would change.
 */
int vstream_s_fmt(struct file *file, void *priv, struct v4l2_format *f)
{
	struct vstream_node *node = video_drvdata(file);
	int ret;

	ret = vstream_try_fmt(file, priv, f);
	if (ret)
		return ret;
	if (vb2_is_busy(&node->queue)) {
		/* The spec allows an unchanged format while buffers exist. */
		if (!memcmp(&f->fmt.pix, &node->fmt, sizeof(node->fmt)))
			return 0;
		return -EBUSY;
	}
	node->fmt = f->fmt.pix;
	node->vfmt = vstream_find_format(node->fmt.pixelformat);
	if (node->output)
		node->queue.fileio_write_immediately = node->vfmt->compressed;
	else
		vstream_cap_setup_tpg(node);
	return 0;
}

/*
 * A multi-planar pipe (cfg.mplane) offers the same formats through the
 * _MPLANE types, every frame in one memory plane, so the single-planar
 * handlers above do the work on the v4l2_pix_format this one plane
 * stands for.  The node's type check stays theirs.
 */
static void vstream_pix_from_mp(const struct v4l2_pix_format_mplane *mp,
				struct v4l2_pix_format *pix)
{
	memset(pix, 0, sizeof(*pix));
	pix->width = mp->width;
	pix->height = mp->height;
	pix->pixelformat = mp->pixelformat;
	pix->field = mp->field;
	pix->colorspace = mp->colorspace;
	pix->flags = mp->flags;
	pix->ycbcr_enc = mp->ycbcr_enc;
	pix->quantization = mp->quantization;
	pix->xfer_func = mp->xfer_func;
	if (mp->num_planes) {
		pix->bytesperline = mp->plane_fmt[0].bytesperline;
		pix->sizeimage = mp->plane_fmt[0].sizeimage;
	}
}

static void vstream_mp_from_pix(const struct v4l2_pix_format *pix,
				struct v4l2_pix_format_mplane *mp)
{
	memset(mp, 0, sizeof(*mp));
	mp->width = pix->width;
	mp->height = pix->height;
	mp->pixelformat = pix->pixelformat;
	mp->field = pix->field;
	mp->colorspace = pix->colorspace;
	mp->num_planes = 1;
	mp->plane_fmt[0].bytesperline = pix->bytesperline;
	mp->plane_fmt[0].sizeimage = pix->sizeimage;
	mp->flags = pix->flags;
	mp->ycbcr_enc = pix->ycbcr_enc;
	mp->quantization = pix->quantization;
	mp->xfer_func = pix->xfer_func;
}

static int vstream_fmt_mplane(struct file *file, void *priv, struct v4l2_format *f,
			      int (*op)(struct file *, void *, struct v4l2_format *))
{
	struct v4l2_format sp = { .type = f->type };
	int ret;

	vstream_pix_from_mp(&f->fmt.pix_mp, &sp.fmt.pix);
	ret = op(file, priv, &sp);
	if (!ret)
		vstream_mp_from_pix(&sp.fmt.pix, &f->fmt.pix_mp);
	return ret;
}

/**
 * vstream_g_fmt_mplane() - VIDIOC_G_FMT, multi-planar (one plane)
 * @file: the open node
 * @priv: the file handle (unused)
 * @f: the node's format out
 *
 * Return: as vstream_g_fmt().
 */
int vstream_g_fmt_mplane(struct file *file, void *priv, struct v4l2_format *f)
{
	return vstream_fmt_mplane(file, priv, f, vstream_g_fmt);
}

/**
 * vstream_try_fmt_mplane() - VIDIOC_TRY_FMT, multi-planar (one plane)
 * @file: the open node
 * @priv: the file handle (unused)
 * @f: the request in, the nearest format the node accepts out
 *
 * Return: as vstream_try_fmt().
 */
int vstream_try_fmt_mplane(struct file *file, void *priv, struct v4l2_format *f)
{
	return vstream_fmt_mplane(file, priv, f, vstream_try_fmt);
}

/**
 * vstream_s_fmt_mplane() - VIDIOC_S_FMT, multi-planar (one plane)
 * @file: the open node
 * @priv: the file handle (unused)
 * @f: the request in, the format set out
 *
 * Return: as vstream_s_fmt().
 */
int vstream_s_fmt_mplane(struct file *file, void *priv, struct v4l2_format *f)
{
	return vstream_fmt_mplane(file, priv, f, vstream_s_fmt);
}

/**
 * vstream_g_parm() - VIDIOC_G_PARM: the node's time per frame
 * @file: the open node
 * @priv: the file handle (unused)
 * @parm: the node's interval out
 *
 * Return: 0, or -EINVAL for another buffer type.
 */
int vstream_g_parm(struct file *file, void *priv, struct v4l2_streamparm *parm)
{
	struct vstream_node *node = video_drvdata(file);

	if (parm->type != node->queue.type)
		return -EINVAL;
	vstream_follows(node);
	if (node->output) {
		memset(&parm->parm.output, 0, sizeof(parm->parm.output));
		parm->parm.output.capability = V4L2_CAP_TIMEPERFRAME;
		parm->parm.output.timeperframe = node->tpf;
		parm->parm.output.writebuffers = 1;
	} else {
		memset(&parm->parm.capture, 0, sizeof(parm->parm.capture));
		parm->parm.capture.capability = V4L2_CAP_TIMEPERFRAME;
		parm->parm.capture.timeperframe = node->tpf;
		parm->parm.capture.readbuffers = 1;
	}
	return 0;
}

/**
 * vstream_s_parm() - VIDIOC_S_PARM: set the node's time per frame
 * @file: the open node
 * @priv: the file handle (unused)
 * @parm: the interval asked in, the one set out
 *
 * The interval is clamped to the driver's range; a capture node, and the
 * output node of a pipe with a fixed format, take the nearest they offer.
 * A reader that follows a producer keeps the producer's.
 *
 * Return: 0, or -EINVAL for another buffer type.
 */
int vstream_s_parm(struct file *file, void *priv, struct v4l2_streamparm *parm)
{
	struct vstream_node *node = video_drvdata(file);
	struct v4l2_fract tpf;

	if (parm->type != node->queue.type)
		return -EINVAL;
	if (!vstream_follows(node)) {
		tpf = node->output ? parm->parm.output.timeperframe :
				     parm->parm.capture.timeperframe;
		vstream_clamp_tpf(&tpf);
		if (!node->output || node->pipe->cfg.fixed)
			vstream_idle_snap_interval(node, &tpf);
		node->tpf = tpf;
	}
	return vstream_g_parm(file, priv, parm);
}

/**
 * vstream_return_buffers() - give every queued buffer back to vb2
 * @node: a node whose streaming stops
 * @state: the state the buffers return in
 *
 * Drops the frames producer buffers were detached for.
 *
 * Context: pipe->lock held (from stop_streaming).
 */
void vstream_return_buffers(struct vstream_node *node, enum vb2_buffer_state state)
{
	struct vstream_buffer *buf, *tmp;

	list_for_each_entry_safe(buf, tmp, &node->active, list) {
		list_del(&buf->list);
		/* a producer's frame detached for a delivery that never came */
		vstream_frame_put(buf->frame);
		buf->frame = NULL;
		vb2_buffer_done(&buf->vb.vb2_buf, state);
	}
}

/**
 * vstream_queue_setup() - the queue_setup both directions share
 * @node: the node of the queue
 * @nbuffers: the buffer count asked in, the count granted out
 * @nplanes: 0 for REQBUFS, else CREATE_BUFS's plane count
 * @sizes: CREATE_BUFS's plane size in, the size of each buffer out
 *
 * REQBUFS asks for at least min_buffers; CREATE_BUFS gets what it asks
 * for, one plane of any size from the format's up.  Either way one queue
 * holds at most max_queue_mb of frame memory, so no opener can pin more:
 * the count shrinks to fit (a producer's buffer counts twice, as it holds
 * two frames).
 *
 * Return: 0; -EINVAL for CREATE_BUFS of more than one plane or a size
 * below the format's; -ENOMEM if not one more buffer fits max_queue_mb.
 */
int vstream_queue_setup(struct vstream_node *node, unsigned int *nbuffers,
			unsigned int *nplanes, unsigned int sizes[])
{
	struct vb2_queue *q = &node->queue;
	unsigned int have = vstream_vb2_num_buffers(q);
	u64 budget = (u64)READ_ONCE(vstream_max_queue_mb) << 20;
	u64 size, fit;

	if (*nplanes) {
		if (*nplanes != 1 || sizes[0] < node->fmt.sizeimage)
			return -EINVAL;
	} else {
		*nplanes = 1;
		sizes[0] = node->fmt.sizeimage;
		if (have + *nbuffers < vstream_min_buffers)
			*nbuffers = vstream_min_buffers - have;
	}
	size = PAGE_ALIGN((u64)sizes[0]);
	/* a producer's queued buffer holds two frames (vstream_buf_detach()) */
	fit = div64_u64(budget, node->output ? 2 * size : size);
	if (fit <= have)
		return -ENOMEM;
	*nbuffers = min_t(u64, *nbuffers, fit - have);
	return 0;
}

/**
 * vstream_queue_init() - set up a node's vb2 queue
 * @node: the node, its direction and its pipe's API set
 *
 * MMAP, USERPTR, DMABUF and read() or write(), the pipe's lock as the
 * queue's.
 *
 * Return: vb2_queue_init()'s result.
 */
int vstream_queue_init(struct vstream_node *node)
{
	struct vb2_queue *q = &node->queue;

	if (node->pipe->cfg.mplane)
		q->type = node->output ? V4L2_BUF_TYPE_VIDEO_OUTPUT_MPLANE :
					 V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE;
	else
		q->type = node->output ? V4L2_BUF_TYPE_VIDEO_OUTPUT :
					 V4L2_BUF_TYPE_VIDEO_CAPTURE;
	q->io_modes = VB2_MMAP | VB2_USERPTR | VB2_DMABUF |
		      (node->output ? VB2_WRITE : VB2_READ);
	q->drv_priv = node;
	q->buf_struct_size = sizeof(struct vstream_buffer);
	q->ops = node->output ? &vstream_out_qops : &vstream_cap_qops;
	q->mem_ops = &vstream_mem_ops;
	q->timestamp_flags = node->output ? V4L2_BUF_FLAG_TIMESTAMP_COPY :
					    V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC;
	q->lock = &node->pipe->lock;
	q->dev = node->pipe->v4l2_dev.dev;
	return vb2_queue_init(q);
}

const struct v4l2_file_operations vstream_fops = {
	.owner		= THIS_MODULE,
	.open		= vstream_open,
	.release	= vb2_fop_release,
	.read		= vb2_fop_read,
	.write		= vstream_out_write,
	.poll		= vb2_fop_poll,
	.unlocked_ioctl	= video_ioctl2,
	.mmap		= vb2_fop_mmap,
};
