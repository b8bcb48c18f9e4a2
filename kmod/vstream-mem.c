// SPDX-License-Identifier: GPL-2.0
/*
 * vstream-mem.c - frame memory of MMAP buffers: per-pipe slots that an
 * output buffer and one capture buffer can share.
 *
 * Slot k of a pipe is the memory of the producer's MMAP buffer k.  A
 * reader's buffer k joins that slot instead of getting memory of its own
 * when the whole queue can (vstream_mem_can_share()), so the producer's
 * frame in output buffer k is
 * already the reader's frame in capture buffer k: the pipe thread hands it
 * over without copying (vstream-pipe.c keeps the two in lockstep).  Every
 * other buffer gets memory of its own.  The pages themselves come from
 * vb2-vmalloc, whose reference count keeps them alive while any mapping or
 * exported dma-buf remains, so a slot may go away before its user space
 * mappings do.  USERPTR and DMABUF memory is vb2-vmalloc's alone; every
 * op unwraps struct vstream_mem, as some (num_users) cannot tell the
 * memory type apart.
 *
 * All slot state is guarded by pipe->lock: vb2 calls alloc and put from
 * REQBUFS, CREATE_BUFS and release, all under the queue lock.
 */

#include <media/videobuf2-vmalloc.h>

#include "vstream.h"
#include "vstream-compat.h"

struct vstream_slot {
	struct vstream_pipe *pipe;
	void *mem;			/* a vb2-vmalloc buffer */
	unsigned long size;
	int index;			/* in pipe->slots[], or -1 if not listed */
	struct vstream_buffer *out;	/* the output buffer on this memory */
	struct vstream_buffer *cap;	/* the capture buffer on this memory */
};

bool vstream_buf_shared(const struct vstream_buffer *buf)
{
	return buf->mem.slot && buf->mem.slot->out && buf->mem.slot->cap;
}

struct vstream_buffer *vstream_buf_partner(const struct vstream_buffer *buf)
{
	struct vstream_slot *slot = buf->mem.slot;

	if (!vstream_buf_shared(buf))
		return NULL;
	return slot->out == buf ? slot->cap : slot->out;
}

/*
 * Called from queue_setup before @node allocates @count MMAP buffers (its
 * first ones): will they share the other side's memory?  Only when every
 * producer buffer then has a reader buffer on the same memory, so that no
 * frame ever needs a buffer of the reader's own, which a shared reader
 * lacks.  A reader joins the producer's buffers; a producer that comes
 * back rejoins the buffers a reader kept, unless the reader holds a frame
 * in one of them (the producer writes its buffers as soon as it has them).
 */
bool vstream_mem_can_share(struct vstream_node *node, unsigned int count)
{
	struct vstream_pipe *pipe = node->pipe;
	struct vb2_queue *owner = NULL;
	struct vstream_node *onode;
	unsigned int k, n = count;

	if (node->output) {
		if (count > VSTREAM_MAX_BUFFERS)
			return false;
	} else {
		n = vstream_vb2_num_buffers(&pipe->out.queue);
		if (!n || n > count || pipe->out.queue.memory != VB2_MEMORY_MMAP ||
		    !vstream_same_layout(&pipe->out.fmt, &node->fmt))
			return false;
	}
	for (k = 0; k < n; k++) {
		struct vstream_slot *slot = pipe->slots[k];
		struct vstream_buffer *other;
		enum vb2_buffer_state state;

		if (!slot)
			return false;
		other = node->output ? slot->cap : slot->out;
		if (!other || (node->output ? slot->out : slot->cap))
			return false;
		if (owner && other->vb.vb2_buf.vb2_queue != owner)
			return false;
		owner = other->vb.vb2_buf.vb2_queue;
		state = other->vb.vb2_buf.state;
		if (node->output && vb2_is_streaming(owner) &&
		    state != VB2_BUF_STATE_QUEUED && state != VB2_BUF_STATE_ACTIVE)
			return false;
	}
	if (!node->output)
		return true;
	/* a producer rejoins a reader only in the reader's own layout */
	onode = owner ? vb2_get_drv_priv(owner) : NULL;
	return onode && vstream_same_layout(&node->fmt, &onode->fmt);
}

static struct vstream_slot *vstream_slot_new(struct vstream_pipe *pipe, struct vb2_buffer *vb,
					     struct device *dev, unsigned long size,
					     bool node_is_output)
{
	struct vstream_slot *slot = kzalloc(sizeof(*slot), GFP_KERNEL);

	if (!slot)
		return ERR_PTR(-ENOMEM);
	slot->mem = vb2_vmalloc_memops.alloc(vb, dev, size);
	if (IS_ERR(slot->mem)) {
		void *err = slot->mem;

		kfree(slot);
		return err;
	}
	slot->pipe = pipe;
	slot->size = size;
	slot->index = -1;
	/* readers never list memory: only producer buffers are joined */
	if (node_is_output && vb->index < VSTREAM_MAX_BUFFERS && !pipe->slots[vb->index]) {
		slot->index = vb->index;
		pipe->slots[vb->index] = slot;
	}
	return slot;
}

static void *vstream_mem_alloc(struct vb2_buffer *vb, struct device *dev,
			       unsigned long size)
{
	struct vstream_node *node = vb2_get_drv_priv(vb->vb2_queue);
	struct vstream_pipe *pipe = node->pipe;
	struct vstream_buffer *buf = to_vstream_buffer(vb);
	struct vstream_slot *slot = NULL;

	lockdep_assert_held(&pipe->lock);
	if (node->share && vb->index < VSTREAM_MAX_BUFFERS)
		slot = pipe->slots[vb->index];
	if (slot && (slot->size < size || (node->output ? slot->out : slot->cap)))
		slot = NULL;
	if (!slot) {
		slot = vstream_slot_new(pipe, vb, dev, size, node->output);
		if (IS_ERR(slot))
			return slot;
	}
	if (node->output)
		slot->out = buf;
	else
		slot->cap = buf;
	buf->mem.slot = slot;
	buf->mem.vm = slot->mem;
	return &buf->mem;
}

static void vstream_mem_put(void *priv)
{
	struct vstream_buffer *buf = container_of(priv, struct vstream_buffer, mem);
	struct vstream_slot *slot = buf->mem.slot;

	lockdep_assert_held(&slot->pipe->lock);
	if (slot->out == buf)
		slot->out = NULL;
	else
		slot->cap = NULL;
	buf->mem.slot = NULL;
	buf->mem.vm = NULL;
	if (slot->out || slot->cap)
		return;
	if (slot->index >= 0)
		slot->pipe->slots[slot->index] = NULL;
	/* the pages stay until the last mapping or dma-buf goes */
	vb2_vmalloc_memops.put(slot->mem);
	kfree(slot);
}

/* USERPTR and DMABUF: vb2-vmalloc's memory in a wrapper of our own. */
static void *vstream_mem_wrap(void *vm, void (*release)(void *vm))
{
	struct vstream_mem *mem;

	if (IS_ERR_OR_NULL(vm))
		return vm;
	mem = kzalloc(sizeof(*mem), GFP_KERNEL);
	if (!mem) {
		release(vm);
		return ERR_PTR(-ENOMEM);
	}
	mem->vm = vm;
	return mem;
}

static void *vstream_mem_get_userptr(struct vb2_buffer *vb, struct device *dev,
				     unsigned long vaddr, unsigned long size)
{
	return vstream_mem_wrap(vb2_vmalloc_memops.get_userptr(vb, dev, vaddr, size),
				vb2_vmalloc_memops.put_userptr);
}

static void vstream_mem_put_userptr(void *priv)
{
	struct vstream_mem *mem = priv;

	vb2_vmalloc_memops.put_userptr(mem->vm);
	kfree(mem);
}

static void *vstream_mem_attach_dmabuf(struct vb2_buffer *vb, struct device *dev,
				       struct dma_buf *dbuf, unsigned long size)
{
	return vstream_mem_wrap(vb2_vmalloc_memops.attach_dmabuf(vb, dev, dbuf, size),
				vb2_vmalloc_memops.detach_dmabuf);
}

static void vstream_mem_detach_dmabuf(void *priv)
{
	struct vstream_mem *mem = priv;

	vb2_vmalloc_memops.detach_dmabuf(mem->vm);
	kfree(mem);
}

static int vstream_mem_map_dmabuf(void *priv)
{
	return vb2_vmalloc_memops.map_dmabuf(((struct vstream_mem *)priv)->vm);
}

static void vstream_mem_unmap_dmabuf(void *priv)
{
	vb2_vmalloc_memops.unmap_dmabuf(((struct vstream_mem *)priv)->vm);
}

static void *vstream_mem_vaddr(struct vb2_buffer *vb, void *priv)
{
	return vb2_vmalloc_memops.vaddr(vb, ((struct vstream_mem *)priv)->vm);
}

static unsigned int vstream_mem_num_users(void *priv)
{
	return vb2_vmalloc_memops.num_users(((struct vstream_mem *)priv)->vm);
}

static struct dma_buf *vstream_mem_get_dmabuf(struct vb2_buffer *vb, void *priv,
					      unsigned long flags)
{
	return vb2_vmalloc_memops.get_dmabuf(vb, ((struct vstream_mem *)priv)->vm, flags);
}

static int vstream_mem_mmap(void *priv, struct vm_area_struct *vma)
{
	return vb2_vmalloc_memops.mmap(((struct vstream_mem *)priv)->vm, vma);
}

/* vb2-vmalloc has no prepare, finish or cookie ops: neither do we. */
const struct vb2_mem_ops vstream_mem_ops = {
	.alloc		= vstream_mem_alloc,
	.put		= vstream_mem_put,
	.get_dmabuf	= vstream_mem_get_dmabuf,
	.get_userptr	= vstream_mem_get_userptr,
	.put_userptr	= vstream_mem_put_userptr,
	.attach_dmabuf	= vstream_mem_attach_dmabuf,
	.detach_dmabuf	= vstream_mem_detach_dmabuf,
	.map_dmabuf	= vstream_mem_map_dmabuf,
	.unmap_dmabuf	= vstream_mem_unmap_dmabuf,
	.vaddr		= vstream_mem_vaddr,
	.num_users	= vstream_mem_num_users,
	.mmap		= vstream_mem_mmap,
};
