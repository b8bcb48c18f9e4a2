// SPDX-License-Identifier: GPL-2.0
/*
 * Delivery: a producer frame at a camera's pace goes to every streaming
 * reader inside the QBUF that queues it; early paced frames and flat-out
 * producers go through the pipe thread.  While no producer feeds a
 * reader (none streams, or it fell silent: its Producer Timeout), the thread
 * generates that reader's frames (test pattern or the producer's last
 * frame) on its own clock.
 *
 * Sequence numbers: a reader's counter advances for every frame the pipe
 * offers it, so a frame it had no buffer for leaves a gap (a drop).  Idle
 * frames are offered only when the reader has a buffer, so they never gap.
 *
 * Zero copy: the producer's QBUF detaches the frame of its MMAP buffer
 * (vstream_buf_detach(): the buffer shows a fresh frame from then on), and
 * the delivery points every MMAP reader's queued buffer at that frame
 * (vstream_buf_share()).  Nobody can write a detached frame, so a
 * dequeued buffer never changes until its owner queues it again, and the
 * producer never waits for a reader.  A reader with no buffer queued when
 * a frame comes gets a drop.  Everything else is one copy from a frame the
 * delivery holds a reference on, so no writer can free it meanwhile.
 */

#include <linux/freezer.h>
#include <linux/hrtimer.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <media/videobuf2-v4l2.h>

#include "vstream.h"
#include "vstream-compat.h"

/*
 * A frame is delivered in the producer's QBUF only if the producer spends
 * this many times a delivery's cost between two QBUFs: flat out, the
 * thread delivers on another CPU while the producer fills its next frame.
 */
#define VSTREAM_INLINE_RATIO	4

#define VSTREAM_COPY_FLAGS (V4L2_BUF_FLAG_KEYFRAME | V4L2_BUF_FLAG_PFRAME | \
			    V4L2_BUF_FLAG_BFRAME | V4L2_BUF_FLAG_TIMECODE)

/**
 * vstream_pipe_kick() - wake the pipe's thread for a round
 * @pipe: the pipe
 */
void vstream_pipe_kick(struct vstream_pipe *pipe)
{
	WRITE_ONCE(pipe->kick, true);
	wake_up(&pipe->wait);
}

/**
 * vstream_node_set_streaming() - note that a node starts or stops streaming
 * @node: the node
 * @on: starts
 *
 * A start resets the sequence and the pace; either way the thread runs a
 * round.
 *
 * Context: pipe->lock held, from start/stop_streaming.
 */
void vstream_node_set_streaming(struct vstream_node *node, bool on)
{
	node->streaming = on;
	if (on) {
		node->seq = 0;
		node->next_ns = ktime_get_ns();
	}
	vstream_pipe_kick(node->pipe);
}

static u64 vstream_period_ns(const struct vstream_node *node)
{
	u64 ns = div_u64((u64)node->tpf.numerator * NSEC_PER_SEC, node->tpf.denominator);

	/* ALTERNATE buffers are fields: two per frame period. */
	return node->fmt.field == V4L2_FIELD_ALTERNATE ? ns / 2 : ns;
}

static struct vstream_buffer *vstream_peek(struct vstream_node *node, bool take)
{
	struct vstream_buffer *buf;

	buf = list_first_entry_or_null(&node->active, struct vstream_buffer, list);
	if (buf && take)
		list_del(&buf->list);
	return buf;
}

/**
 * vstream_same_layout() - whether frames copy as they are between formats
 * @a: the producer's format
 * @b: a reader's format
 *
 * Return: true if frames of format @a can be copied unchanged into
 * buffers of format @b.
 */
bool vstream_same_layout(const struct v4l2_pix_format *a, const struct v4l2_pix_format *b)
{
	return a->pixelformat == b->pixelformat && a->width == b->width &&
	       a->height == b->height && a->bytesperline == b->bytesperline &&
	       a->field == b->field;
}

/**
 * vstream_pipe_shares_into() - whether @cap's next frame comes by sharing
 * @cap: a capture node
 *
 * True when the producer streams the same layout from MMAP buffers, not
 * through write().  Only then are @cap's buffers unmapped when queued
 * (vstream_buf_unmap(), which checks @cap's side); the kernel writes the
 * others in place.
 *
 * Return: whether the next frame is meant to be the producer's own
 * (delivery may still copy it).
 */
bool vstream_pipe_shares_into(struct vstream_node *cap)
{
	struct vstream_node *out = &cap->pipe->out;

	return out->streaming && out->queue.memory == VB2_MEMORY_MMAP &&
	       !vb2_fileio_is_active(&out->queue) && vstream_same_layout(&out->fmt, &cap->fmt);
}

/*
 * A streaming producer that has queued nothing for its output node's
 * Producer Timeout (when set) is silent, as a network sender gone: its
 * readers get idle frames, as with no producer, until its next frame.
 */
static u64 vstream_silence_ns(const struct vstream_node *out)
{
	return max(out->qbuf_ns, out->next_ns) + out->timeout_ns;
}

static bool vstream_out_silent(const struct vstream_node *out, u64 now)
{
	return out->timeout_ns && list_empty(&out->active) && now > vstream_silence_ns(out);
}

/* @cap takes the producer's frames: in the same format or one they convert to */
static bool vstream_takes(const struct vstream_node *cap)
{
	const struct vstream_node *out = &cap->pipe->out;

	return out->streaming && (vstream_same_layout(&out->fmt, &cap->fmt) ||
				  vstream_can_convert(&out->fmt, &cap->fmt));
}

/**
 * vstream_fed() - whether a reader is fed by the producer
 * @cap: a capture node
 *
 * Return: true if @cap takes the producer's frames (same layout, or one
 * the driver converts) and the producer is not silent past its Producer
 * Timeout.
 */
bool vstream_fed(const struct vstream_node *cap)
{
	return vstream_takes(cap) && !vstream_out_silent(&cap->pipe->out, ktime_get_ns());
}

/* Convert @len bytes of a @src frame into @buf; false if it is too short. */
static bool vstream_convert_into(struct vstream_node *cap, struct vstream_buffer *buf,
				 const struct v4l2_pix_format *src, const void *sbuf,
				 size_t len)
{
	void *dst;

	if (len < src->sizeimage)
		return false;
	dst = vstream_buf_writable(buf);
	if (!dst)
		return false;
	vstream_convert(src, sbuf, &cap->fmt, dst);
	vb2_set_plane_payload(&buf->vb.vb2_buf, 0, cap->fmt.sizeimage);
	return true;
}

/* A producer frame @cap had no buffer for: its sequence leaves a gap. */
static void vstream_drop(struct vstream_node *cap)
{
	cap->seq++;
	cap->drops++;
	cap->pipe->out.drops++;
}

/* Stamp the node's next sequence number on @vb and count the frame. */
static void vstream_count_frame(struct vstream_node *node, struct vb2_v4l2_buffer *vb)
{
	vb->sequence = node->seq;
	if (node->fmt.field == V4L2_FIELD_ALTERNATE)
		vb->sequence /= 2;	/* sequence counts frames, not fields */
	node->seq++;
	node->frames++;
}

/* @buf is done, as @state says, at the end of this locked section. */
static void vstream_settle(struct vstream_pipe *pipe, struct vstream_buffer *buf,
			   enum vb2_buffer_state state)
{
	buf->state = state;
	list_add_tail(&buf->list, &pipe->done);
}

static void vstream_finish(struct vstream_node *node, struct vstream_buffer *buf,
			   u32 field, u64 ts)
{
	struct vb2_v4l2_buffer *vb = &buf->vb;

	vb->field = field;
	vstream_count_frame(node, vb);
	vb->vb2_buf.timestamp = ts;
	vstream_settle(node->pipe, buf, VB2_BUF_STATE_DONE);
}

/*
 * Keep the producer's frame for readers in VSTREAM_IDLE_LAST mode: the
 * detached frame @f itself, else a copy of @src, as the producer writes
 * its buffer again.
 */
static void vstream_keep_last(struct vstream_pipe *pipe, struct vstream_buffer *obuf,
			      struct vstream_frame *f, const void *src, size_t len,
			      u32 field)
{
	struct vstream_frame *keep = f ? vstream_frame_get(f) : vstream_buf_new_frame(obuf);

	vstream_pipe_forget_last(pipe);
	if (!keep)
		return;
	if (!f)
		memcpy(vstream_frame_vaddr(keep), src, len);
	pipe->last = keep;
	pipe->last_used = len;
	pipe->last_fmt = pipe->out.fmt;
	pipe->last_field = field;
}

/**
 * vstream_pipe_forget_last() - drop the frame kept for Last Frame readers
 * @pipe: the pipe
 *
 * Context: pipe->lock held, or the pipe unreachable (its release).
 */
void vstream_pipe_forget_last(struct vstream_pipe *pipe)
{
	vstream_frame_put(pipe->last);
	pipe->last = NULL;
	pipe->last_used = 0;
}

/*
 * One producer frame to every reader, stamped @ts.  Returns how the
 * producer's buffer is to be completed: the caller does that.
 */
static enum vb2_buffer_state vstream_deliver_frame(struct vstream_pipe *pipe,
						   struct vstream_buffer *obuf, u64 ts)
{
	struct vstream_node *out = &pipe->out;
	struct vb2_buffer *ovb = &obuf->vb.vb2_buf;
	struct vstream_frame *f = obuf->frame;	/* detached: shared as it is */
	/* else a reference keeps an MMAP frame while it is copied from */
	struct vstream_frame *held = f ? NULL : vstream_buf_get_frame(obuf);
	const void *src = f ? vstream_frame_vaddr(f) :
			  held ? vstream_frame_vaddr(held) : vb2_plane_vaddr(ovb, 0);
	size_t len = vb2_get_plane_payload(ovb, 0);
	u32 field = obuf->vb.field;
	unsigned int i;

	if (!src) {
		vstream_frame_put(held);
		return VB2_BUF_STATE_ERROR;
	}
	for (i = 0; i < pipe->readers; i++) {
		struct vstream_node *cap = &pipe->cap[i];
		struct vstream_buffer *buf;
		bool same;
		size_t n;

		/* a frame in hand goes out, however late the thread came to it */
		if (!cap->streaming || !vstream_takes(cap))
			continue;
		buf = vstream_peek(cap, true);
		if (!buf) {
			vstream_drop(cap);
			continue;
		}
		n = min_t(size_t, len, vb2_plane_size(&buf->vb.vb2_buf, 0));
		same = vstream_same_layout(&out->fmt, &cap->fmt);
		if (!same) {
			if (!vstream_convert_into(cap, buf, &out->fmt, src, len)) {
				vstream_settle(pipe, buf, VB2_BUF_STATE_ERROR);
				continue;
			}
			cap->copies++;
			out->copies++;
		} else if (f && vstream_buf_share(buf, f, &cap->flips)) {
			vb2_set_plane_payload(&buf->vb.vb2_buf, 0, n);
			cap->zerocopy++;
			out->zerocopy++;
		} else {
			void *dst = vstream_buf_writable(buf);

			if (!dst) {
				vstream_settle(pipe, buf, VB2_BUF_STATE_ERROR);
				continue;
			}
			memcpy(dst, src, n);
			vb2_set_plane_payload(&buf->vb.vb2_buf, 0, n);
			cap->copies++;
			out->copies++;
		}
		buf->vb.flags &= ~VSTREAM_COPY_FLAGS;
		buf->vb.flags |= obuf->vb.flags & VSTREAM_COPY_FLAGS;
		buf->vb.timecode = obuf->vb.timecode;
		vstream_finish(cap, buf, field, ts);
	}
	if (pipe->keep_last)
		vstream_keep_last(pipe, obuf, f, src, len, field);
	vstream_frame_put(held);
	vstream_frame_put(f);
	obuf->frame = NULL;

	/* the producer's timestamp stays: the output queue copies it */
	vstream_count_frame(out, &obuf->vb);
	return VB2_BUF_STATE_DONE;
}

/*
 * vstream_deliver_frame() of a settled @obuf, begun at @now, its cost
 * noted; returns the time it ended.
 */
static u64 vstream_deliver(struct vstream_pipe *pipe, struct vstream_buffer *obuf, u64 now)
{
	u64 end;

	vstream_settle(pipe, obuf, vstream_deliver_frame(pipe, obuf, now));
	end = ktime_get_ns();
	obuf->cost_ns = end - now;
	return end;
}

/* A producer frame is due now: not paced, or its time has come. */
static bool vstream_out_due(struct vstream_node *out, u64 now)
{
	return !vstream_pace_output || out->next_ns <= now;
}

/* After a delivery at @now: when the next producer frame is due. */
static void vstream_out_advance(struct vstream_node *out, u64 now)
{
	out->next_ns += vstream_period_ns(out);
	if (out->next_ns < now)
		out->next_ns = now;
}

/**
 * vstream_pipe_complete() - complete the settled buffers
 * @pipe: the pipe
 *
 * The settled buffers are done, and their owners woken: at the end of the
 * output's QBUF and write() and of each round of the thread, just before
 * pipe->lock is released (see struct vstream_pipe), readers first.
 */
void vstream_pipe_complete(struct vstream_pipe *pipe)
{
	struct vstream_node *out = &pipe->out;
	struct vstream_buffer *buf, *tmp;
	LIST_HEAD(produced);

	lockdep_assert_held(&pipe->lock);
	list_for_each_entry_safe(buf, tmp, &pipe->done, list) {
		if (V4L2_TYPE_IS_OUTPUT(buf->vb.vb2_buf.type)) {
			list_move_tail(&buf->list, &produced);
			continue;
		}
		list_del(&buf->list);
		vb2_buffer_done(&buf->vb.vb2_buf, buf->state);
	}
	list_for_each_entry_safe(buf, tmp, &produced, list) {
		list_del(&buf->list);
		out->deliver_ns = (3 * out->deliver_ns + buf->cost_ns) / 4;
		vb2_buffer_done(&buf->vb.vb2_buf, buf->state);
	}
}

/**
 * vstream_pipe_produce() - take a producer's frame
 * @pipe: the pipe
 * @obuf: the output buffer just queued
 *
 * The frame is the driver's now, detached from an MMAP buffer, whoever
 * will read it.  A due frame of a producer at a camera's pace goes to the
 * readers at once, so a reader waits for one wake-up, its own.  Every
 * buffer it settles completes once QBUF (or write()) has its answer: vb2
 * fills that answer after buf_queue, and it must still say "queued".
 * Frames not due yet, behind others, or from a producer flat out
 * (VSTREAM_INLINE_RATIO) wait in out->active for the thread.
 *
 * Context: pipe->lock held, from the output's buf_queue.
 */
void vstream_pipe_produce(struct vstream_pipe *pipe, struct vstream_buffer *obuf)
{
	struct vstream_node *out = &pipe->out;
	u64 now = ktime_get_ns();
	bool flat_out = now - out->qbuf_ns < VSTREAM_INLINE_RATIO * out->deliver_ns;

	lockdep_assert_held(&pipe->lock);
	/* readers fed again: the thread arms their silence deadline */
	if (vstream_out_silent(out, now))
		vstream_pipe_kick(pipe);
	out->qbuf_ns = now;
	obuf->frame = vstream_buf_detach(obuf);
	out->flips += !!obuf->frame;
	if (out->streaming && list_empty(&out->active) && vstream_out_due(out, now) &&
	    !flat_out) {
		vstream_deliver(pipe, obuf, now);
		vstream_out_advance(out, now);
	} else {
		list_add_tail(&obuf->list, &out->active);
		vstream_pipe_kick(pipe);
	}
}

static void vstream_fill_pattern(struct vstream_node *cap, u8 *vbuf, u32 field)
{
	struct tpg_data *tpg = &cap->tpg;
	unsigned int p;

	tpg_s_field(tpg, field, cap->fmt.field == V4L2_FIELD_ALTERNATE);
	for (p = 0; p < tpg_g_planes(tpg); p++) {
		tpg_fill_plane_buffer(tpg, 0, p, vbuf);
		vbuf += tpg_calc_plane_size(tpg, p);
	}
	tpg_update_mv_count(tpg, cap->fmt.field == V4L2_FIELD_NONE ||
			    cap->fmt.field == V4L2_FIELD_ALTERNATE);
}

/* A frame for a reader that no producer feeds. */
static void vstream_idle_frame(struct vstream_pipe *pipe, struct vstream_node *cap)
{
	struct vstream_buffer *buf = vstream_peek(cap, true);
	struct vb2_buffer *vb;
	size_t size;
	u32 field = cap->fmt.field;
	bool last;
	u8 *vbuf = NULL;

	if (!buf)
		return;
	vb = &buf->vb.vb2_buf;
	size = vb2_plane_size(vb, 0);
	last = cap->idle_mode == VSTREAM_IDLE_LAST && pipe->last &&
	       pipe->last_used <= size && vstream_same_layout(&pipe->last_fmt, &cap->fmt);
	if (!last && cap->idle_mode == VSTREAM_IDLE_LAST && pipe->last &&
	    vstream_can_convert(&pipe->last_fmt, &cap->fmt) &&
	    vstream_convert_into(cap, buf, &pipe->last_fmt,
				 vstream_frame_vaddr(pipe->last), pipe->last_used)) {
		vstream_finish(cap, buf, field, ktime_get_ns());
		return;
	}
	/* the last frame is shared when it can be, all else is written */
	if (!last || !vstream_buf_share(buf, pipe->last, &cap->flips)) {
		vbuf = vstream_buf_writable(buf);
		if (!vbuf) {
			vstream_settle(pipe, buf, VB2_BUF_STATE_ERROR);
			return;
		}
	}
	if (field == V4L2_FIELD_ALTERNATE)
		field = (cap->seq & 1) ? V4L2_FIELD_BOTTOM : V4L2_FIELD_TOP;

	buf->vb.flags &= ~VSTREAM_COPY_FLAGS;
	if (last) {
		if (vbuf)
			memcpy(vbuf, vstream_frame_vaddr(pipe->last), pipe->last_used);
		vb2_set_plane_payload(vb, 0, pipe->last_used);
		if (cap->fmt.field == V4L2_FIELD_ALTERNATE)
			field = pipe->last_field;
	} else if (cap->vfmt->compressed) {
		vb2_set_plane_payload(vb, 0, vstream_gen_jpeg(vbuf, size, cap->fmt.width,
							      cap->fmt.height));
		buf->vb.flags |= V4L2_BUF_FLAG_KEYFRAME;
	} else {
		vstream_fill_pattern(cap, vbuf, field);
		vb2_set_plane_payload(vb, 0, cap->fmt.sizeimage);
	}
	if (!vb2_get_plane_payload(vb, 0)) {
		vstream_settle(pipe, buf, VB2_BUF_STATE_ERROR);
		return;
	}
	vstream_finish(cap, buf, field, ktime_get_ns());
}

/*
 * One round of work; returns the time until the next one is due, U64_MAX
 * if none is: the thread then sleeps until kicked.
 */
static u64 vstream_pipe_round(struct vstream_pipe *pipe)
{
	struct vstream_node *out = &pipe->out;
	u64 now = ktime_get_ns();
	u64 next = U64_MAX;
	struct vstream_buffer *obuf;
	unsigned int i;

	while (out->streaming && vstream_peek(out, false)) {
		if (!vstream_out_due(out, now)) {
			next = min(next, out->next_ns);
			break;
		}
		obuf = vstream_peek(out, true);
		now = vstream_deliver(pipe, obuf, now);
		vstream_out_advance(out, now);
	}

	for (i = 0; i < pipe->readers; i++) {
		struct vstream_node *cap = &pipe->cap[i];

		if (!cap->streaming)
			continue;
		if (vstream_fed(cap)) {
			/* to start its idle frames if the producer falls silent */
			if (out->timeout_ns)
				next = min(next, vstream_silence_ns(out) + 1);
			continue;
		}
		/* With no buffer queued the tick waits: buf_queue kicks us. */
		if (!vstream_peek(cap, false))
			continue;
		if (cap->next_ns <= now) {
			vstream_idle_frame(pipe, cap);
			cap->next_ns += vstream_period_ns(cap);
			now = ktime_get_ns();
			/* After a stall, restart the clock instead of bursting. */
			if (cap->next_ns < now)
				cap->next_ns = now;
		}
		next = min(next, cap->next_ns);
	}
	vstream_pipe_complete(pipe);
	if (next == U64_MAX)
		return U64_MAX;
	return next > now ? next - now : 0;
}

static int vstream_pipe_thread(void *data)
{
	struct vstream_pipe *pipe = data;
	u64 wait_ns;

	/* the freezer's wake-up ends either wait: the loop then freezes */
	set_freezable();
	while (!kthread_should_stop()) {
		try_to_freeze();
		mutex_lock(&pipe->lock);
		WRITE_ONCE(pipe->kick, false);
		wait_ns = vstream_pipe_round(pipe);
		mutex_unlock(&pipe->lock);
		if (!wait_ns)
			continue;
		if (wait_ns == U64_MAX)
			wait_event_freezable(pipe->wait, READ_ONCE(pipe->kick) ||
					     kthread_should_stop());
		else
			wait_event_interruptible_hrtimeout(pipe->wait,
							   READ_ONCE(pipe->kick) ||
							   kthread_should_stop(),
							   ns_to_ktime(wait_ns));
	}
	return 0;
}

/**
 * vstream_pipe_start_thread() - start the pipe's delivery thread
 * @pipe: the pipe
 *
 * Return: 0, or kthread_run()'s error.
 */
int vstream_pipe_start_thread(struct vstream_pipe *pipe)
{
	pipe->thread = kthread_run(vstream_pipe_thread, pipe, "vstream-%u", pipe->id);
	if (IS_ERR(pipe->thread)) {
		int err = PTR_ERR(pipe->thread);

		pipe->thread = NULL;
		return err;
	}
	return 0;
}

/**
 * vstream_pipe_stop_thread() - stop the pipe's delivery thread, if any
 * @pipe: the pipe
 */
void vstream_pipe_stop_thread(struct vstream_pipe *pipe)
{
	if (pipe->thread)
		kthread_stop(pipe->thread);
	pipe->thread = NULL;
}
