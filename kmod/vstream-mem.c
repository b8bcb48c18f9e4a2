// SPDX-License-Identifier: GPL-2.0
/*
 * Frame memory of MMAP buffers: shared by a producer and its readers
 * without a copy, and never changed once delivered.
 *
 * A frame (struct vstream_frame) is a refcounted vb2-vmalloc allocation.
 * Every MMAP buffer's memory (struct vstream_mem) shows one frame, and the
 * pipe may point it at another ("flip").  User space maps a buffer through
 * the fault handler, which inserts the frame's pages with
 * vm_insert_pages() (VM_MIXEDMAP: ordinary pages, so get_user_pages(),
 * O_DIRECT and USERPTR import of a mapping work); a flip zaps the buffer's
 * mappings with unmap_mapping_range() and the next access faults the new
 * frame in.  A mapped page holds a page reference, so memory goes only
 * once unmapped, whatever becomes of its frame.  Every file of the driver
 * has one anonymous inode's mapping as its f_mapping (as DRM does), and
 * each vstream_mem its own range of file offsets in it (vm_pgoff): one
 * unmap_mapping_range() finds every mapping of a buffer, through any
 * device node, in any process, and no foreign inode is ever held.
 *
 * A frame's life (vstream-pipe.c delivers):
 * - The producer's QBUF detaches its buffer's frame (vstream_buf_detach()):
 *   the queued buffer keeps the frame for delivery, the buffer's memory
 *   shows a fresh frame, and its mappings go.  Nothing can write the
 *   detached frame any more: readers' queued buffers are pointed at it,
 *   and the pipe may keep it as the last frame.
 * - Readers map frames read-only.  A reader's first write to a frame that
 *   anything else shows copies it for that reader alone (counted in
 *   `cow`); a frame a reader wrote is never reused.
 * - The kernel writes only frames nothing else shows (vstream_buf_writable()).
 * - When the last buffer lets go of a frame it is freed, or kept as a
 *   spare (at most VSTREAM_SPARE_FRAMES per pipe) for the next detach.
 *   Spares belong to one producer stream: its STREAMOFF frees them and
 *   starts a new generation, so frames of an earlier stream (maybe an
 *   earlier opener's) are never handed out again.  A new buffer's frame
 *   reads as zeros.
 *
 * Pinned buffers take part only by copy: exported ones (EXPBUF: the
 * dma-buf holds those very pages), those of a queue in read()/write()
 * mode (vb2's file I/O caches their kernel addresses), and those whose
 * pages something pinned through a mapping (another device's USERPTR
 * queue): such a frame is never detached, shared into or reused.  USERPTR and DMABUF
 * memory is vb2-vmalloc's, in the same wrapper with no frame, as some ops
 * (num_users) cannot tell memory types apart.
 *
 * Locking: mem->lock guards mem->frame and mem->mapped; it nests inside
 * pipe->lock and inside the mm's locks (fault handlers), and is held
 * across unmap_mapping_range().  Frame refcounts are atomic; the spare
 * list has its own spinlock.  vb2 calls alloc, put and get_dmabuf under
 * the queue lock (pipe->lock), mmap under the mm's lock.
 */

#include <linux/fs.h>
#include <linux/idr.h>
#include <linux/kref.h>
#include <linux/mm.h>
#include <linux/mount.h>
#include <linux/pseudo_fs.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <media/videobuf2-vmalloc.h>

#include "vstream.h"
#include "vstream-compat.h"

/* Each vstream_mem owns 2^VSTREAM_MEM_PGOFF_SHIFT pages of file offsets. */
#define VSTREAM_MEM_PGOFF_SHIFT	18
#define VSTREAM_SPARE_FRAMES	4
#define VSTREAM_FS_MAGIC	0x76737472	/* "vstr" */

struct vstream_frame {
	struct kref ref;
	struct list_head list;		/* on pipe->spare while unused */
	struct vstream_pipe *pipe;
	void *vm;			/* vb2-vmalloc's buffer */
	void *vaddr;
	unsigned long size;
	struct page **pages;		/* for vm_insert_pages() */
	unsigned int gen;		/* the pipe's spare generation */
	bool written;			/* by a reader or a dma-buf: never reused */
};

struct vstream_mem {
	struct kref ref;		/* vb2 (alloc to put) and every vma */
	struct mutex lock;
	struct vstream_node *node;
	struct vb2_buffer *vb;		/* NULL once vb2 has put the memory */
	struct vstream_frame *frame;	/* MMAP: what the buffer shows */
	void *vm;			/* USERPTR/DMABUF: vb2-vmalloc's */
	unsigned long size;
	int id;
	bool pinned;
	bool mapped;			/* PTEs may exist: faulted since the last zap */
};

static DEFINE_IDA(vstream_mem_ida);
static struct vfsmount *vstream_mnt;
static struct inode *vstream_inode;	/* every file's f_mapping host */

static struct vstream_mem *vstream_buf_mem(struct vstream_buffer *buf)
{
	return buf->vb.vb2_buf.planes[0].mem_priv;
}

static unsigned long vstream_mem_pgoff(const struct vstream_mem *mem)
{
	return (unsigned long)mem->id << VSTREAM_MEM_PGOFF_SHIFT;
}

/* Frames */

static void vstream_frame_free(struct vstream_frame *f)
{
	kvfree(f->pages);
	vb2_vmalloc_memops.put(f->vm);
	kfree(f);
}

/*
 * Some of @f's pages are pinned (get_user_pages() on a mapping: another
 * device's USERPTR queue, io_uring, RDMA), so something outside this
 * driver may read or write them whatever the mappings say: such a frame
 * is never detached, shared into or handed out again.
 */
static bool vstream_frame_pinned(const struct vstream_frame *f)
{
	unsigned long i;

	for (i = 0; i < f->size >> PAGE_SHIFT; i++)
		if (folio_maybe_dma_pinned(page_folio(f->pages[i])))
			return true;
	return false;
}

static void vstream_frame_release(struct kref *ref)
{
	struct vstream_frame *f = container_of(ref, struct vstream_frame, ref);
	struct vstream_pipe *pipe = f->pipe;
	bool spare = false;

	/*
	 * Pages an exported dma-buf still has, and pages a reader wrote (its
	 * own picture, which no other opener may see), are never handed out
	 * again.
	 */
	if (vb2_vmalloc_memops.num_users(f->vm) == 1 && !f->written &&
	    !vstream_frame_pinned(f)) {
		spin_lock(&pipe->spare_lock);
		if (f->gen == pipe->spare_gen && pipe->nspare < VSTREAM_SPARE_FRAMES) {
			list_add(&f->list, &pipe->spare);
			pipe->nspare++;
			spare = true;
		}
		spin_unlock(&pipe->spare_lock);
	}
	if (!spare)
		vstream_frame_free(f);
}

/**
 * vstream_frame_get() - take a reference on a frame
 * @f: the frame
 *
 * Return: @f.
 */
struct vstream_frame *vstream_frame_get(struct vstream_frame *f)
{
	kref_get(&f->ref);
	return f;
}

/**
 * vstream_frame_put() - drop a reference on a frame
 * @f: the frame, or NULL
 *
 * The last reference frees the frame or keeps it as one of the pipe's
 * spares.
 */
void vstream_frame_put(struct vstream_frame *f)
{
	if (f)
		kref_put(&f->ref, vstream_frame_release);
}

/**
 * vstream_frame_vaddr() - the kernel address of a frame's bytes
 * @f: the frame
 *
 * Return: the address, valid while a reference is held.
 */
void *vstream_frame_vaddr(const struct vstream_frame *f)
{
	return f->vaddr;
}

/*
 * A frame of exactly @size bytes that nobody else uses: a spare or new.
 * With @clear it reads as zeros, as a new one does: a spare holds an
 * earlier frame of this producer stream.
 */
static struct vstream_frame *vstream_frame_new(struct vstream_pipe *pipe,
					       struct vb2_buffer *vb, unsigned long size,
					       bool clear)
{
	struct vstream_frame *f, *tmp, *found = NULL;
	LIST_HEAD(stale);
	unsigned int gen;
	unsigned long i;

	spin_lock(&pipe->spare_lock);
	gen = pipe->spare_gen;
	list_for_each_entry_safe(f, tmp, &pipe->spare, list) {
		if (f->size == size && found)
			continue;	/* stays a spare */
		list_del(&f->list);
		pipe->nspare--;
		if (f->size == size)
			found = f;
		else	/* of another size: of a format that is gone */
			list_add(&f->list, &stale);
	}
	spin_unlock(&pipe->spare_lock);
	list_for_each_entry_safe(f, tmp, &stale, list)
		vstream_frame_free(f);
	if (found) {
		if (clear)
			memset(found->vaddr, 0, size);
		kref_init(&found->ref);
		return found;
	}

	f = kzalloc(sizeof(*f), GFP_KERNEL);
	if (!f)
		return ERR_PTR(-ENOMEM);
	f->vm = vb2_vmalloc_memops.alloc(vb, NULL, size);
	if (IS_ERR(f->vm)) {
		int err = PTR_ERR(f->vm);

		kfree(f);
		return ERR_PTR(err);
	}
	f->vaddr = vb2_vmalloc_memops.vaddr(vb, f->vm);
	f->pipe = pipe;
	f->size = size;
	f->gen = gen;
	f->pages = kvmalloc_array(size >> PAGE_SHIFT, sizeof(*f->pages), GFP_KERNEL);
	if (!f->pages) {
		vstream_frame_free(f);
		return ERR_PTR(-ENOMEM);
	}
	for (i = 0; i < size >> PAGE_SHIFT; i++)
		f->pages[i] = vmalloc_to_page(f->vaddr + (i << PAGE_SHIFT));
	kref_init(&f->ref);
	return f;
}

/**
 * vstream_mem_drain() - end the pipe's spare generation
 * @pipe: the pipe
 *
 * Frees the spares, and frames still in use never become spares: called
 * when the producer stops streaming and when the pipe goes.
 */
void vstream_mem_drain(struct vstream_pipe *pipe)
{
	struct vstream_frame *f, *tmp;
	LIST_HEAD(list);

	spin_lock(&pipe->spare_lock);
	list_splice_init(&pipe->spare, &list);
	pipe->nspare = 0;
	pipe->spare_gen++;
	spin_unlock(&pipe->spare_lock);
	list_for_each_entry_safe(f, tmp, &list, list)
		vstream_frame_free(f);
}

/* Buffer memory and its user mappings */

static void vstream_mem_release(struct kref *ref)
{
	struct vstream_mem *mem = container_of(ref, struct vstream_mem, ref);

	vstream_frame_put(mem->frame);
	if (mem->id >= 0)
		ida_free(&vstream_mem_ida, mem->id);
	mutex_destroy(&mem->lock);
	kfree(mem);
}

static void vstream_mem_unref(struct vstream_mem *mem)
{
	kref_put(&mem->ref, vstream_mem_release);
}

/*
 * Make every user mapping of @mem fault again.  Called with mem->lock.
 * Only vstream_vm_fault() makes PTEs (fork and mremap copy or move those,
 * within the same file mapping), so with none made since the last zap
 * there is nothing to walk.
 */
static void vstream_mem_zap(struct vstream_mem *mem)
{
	if (!mem->mapped)
		return;
	mem->mapped = false;
	unmap_mapping_range(vstream_inode->i_mapping,
			    (loff_t)vstream_mem_pgoff(mem) << PAGE_SHIFT, mem->size, 1);
}

/*
 * Show @f (a reference the caller gives up) in @mem; returns the frame
 * it showed, for the caller to put.  Called with mem->lock.
 */
static struct vstream_frame *vstream_mem_flip(struct vstream_mem *mem,
					      struct vstream_frame *f)
{
	struct vstream_frame *old = mem->frame;

	mem->frame = f;
	vstream_mem_zap(mem);
	return old;
}

/*
 * Give @mem a frame nothing else shows; with @copy keep what it shows.
 * Called with mem->lock.  Needs the vb2 buffer to allocate, so put()
 * makes a mapped buffer private before vb2 frees it.
 */
static int vstream_mem_unshare(struct vstream_mem *mem, bool copy)
{
	struct vstream_frame *f;

	if (kref_read(&mem->frame->ref) == 1)
		return 0;
	if (!mem->vb)
		return -EFAULT;
	f = vstream_frame_new(mem->node->pipe, mem->vb, mem->frame->size, false);
	if (IS_ERR(f))
		return PTR_ERR(f);
	if (copy) {
		memcpy(f->vaddr, mem->frame->vaddr, mem->size);
		atomic64_inc(&mem->node->cow);
	}
	vstream_frame_put(vstream_mem_flip(mem, f));
	return 0;
}

static vm_fault_t vstream_vm_errno(int err)
{
	return err == -ENOMEM ? VM_FAULT_OOM : VM_FAULT_SIGBUS;
}

/*
 * Map the whole vma at once, one fault per frame instead of one per page.
 * Pages already mapped (a racing fault's, or around a MADV_DONTNEED hole)
 * stay as they are: every PTE is made under mem->lock, and every zap
 * takes them all.  Write access is the vma's own: a producer maps its
 * frames writable, readers' vmas are write-notified (vstream_vm_page_mkwrite()).
 */
static vm_fault_t vstream_vm_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct vstream_mem *mem = vma->vm_private_data;
	unsigned long first = vma->vm_pgoff - vstream_mem_pgoff(mem);
	unsigned long total = vma_pages(vma);
	unsigned long left = total;
	int err = 0;

	mutex_lock(&mem->lock);
	if (first + total > mem->frame->size >> PAGE_SHIFT)
		err = -EFAULT;
	mem->mapped = true;
	while (!err && left) {
		unsigned long done = total - left;

		err = vm_insert_pages(vma, vma->vm_start + (done << PAGE_SHIFT),
				      mem->frame->pages + first + done, &left);
		if (err == -EBUSY) {
			left--;		/* mapped already: skip it */
			err = 0;
		}
	}
	mutex_unlock(&mem->lock);
	return err ? vstream_vm_errno(err) : VM_FAULT_NOPAGE;
}

/*
 * A reader's first write to a page.  To a frame anything else shows: copy
 * it for this buffer alone and fault again.  To its own: mark it written
 * (never handed out again) and let the write through, as fbdev's
 * deferred I/O does with its vmalloc pages.
 */
static vm_fault_t vstream_vm_page_mkwrite(struct vm_fault *vmf)
{
	struct vstream_mem *mem = vmf->vma->vm_private_data;
	vm_fault_t ret = VM_FAULT_NOPAGE;
	int err = 0;

	mutex_lock(&mem->lock);
	if (kref_read(&mem->frame->ref) > 1) {
		err = vstream_mem_unshare(mem, true);
	} else {
		mem->frame->written = true;
		lock_page(vmf->page);
		ret = VM_FAULT_LOCKED;
	}
	mutex_unlock(&mem->lock);
	/* no frame to copy into: VM_FAULT_OOM would only retry the write */
	return err ? VM_FAULT_SIGBUS : ret;
}

static void vstream_vm_open(struct vm_area_struct *vma)
{
	struct vstream_mem *mem = vma->vm_private_data;

	kref_get(&mem->ref);
}

static void vstream_vm_close(struct vm_area_struct *vma)
{
	vstream_mem_unref(vma->vm_private_data);
}

/* A producer writes only frames of its own: no write notification. */
static const struct vm_operations_struct vstream_out_vm_ops = {
	.open		= vstream_vm_open,
	.close		= vstream_vm_close,
	.fault		= vstream_vm_fault,
};

static const struct vm_operations_struct vstream_cap_vm_ops = {
	.open		= vstream_vm_open,
	.close		= vstream_vm_close,
	.fault		= vstream_vm_fault,
	.page_mkwrite	= vstream_vm_page_mkwrite,
};

static int vstream_mem_mmap(void *priv, struct vm_area_struct *vma)
{
	struct vstream_mem *mem = priv;

	if (WARN_ON_ONCE(vma->vm_file->f_mapping != vstream_inode->i_mapping))
		return -EINVAL;
	/* vb2 chose the buffer by offset; flips find its mappings by ours */
	vma->vm_pgoff = vstream_mem_pgoff(mem);
	vstream_vm_flags_set(vma, VM_MIXEDMAP | VM_DONTEXPAND | VM_DONTDUMP);
	vma->vm_private_data = mem;
	vma->vm_ops = mem->node->output ? &vstream_out_vm_ops : &vstream_cap_vm_ops;
	kref_get(&mem->ref);
	return 0;
}

static struct vstream_mem *vstream_mem_new(struct vstream_node *node)
{
	struct vstream_mem *mem = kzalloc(sizeof(*mem), GFP_KERNEL);

	if (!mem)
		return NULL;
	kref_init(&mem->ref);
	mutex_init(&mem->lock);
	mem->node = node;
	mem->id = -1;
	return mem;
}

static void *vstream_mem_alloc(struct vb2_buffer *vb, struct device *dev,
			       unsigned long size)
{
	struct vstream_node *node = vb2_get_drv_priv(vb->vb2_queue);
	struct vstream_mem *mem;
	int id;

	lockdep_assert_held(&node->pipe->lock);
	id = ida_alloc_max(&vstream_mem_ida,
			   min_t(unsigned long, INT_MAX, ULONG_MAX >> VSTREAM_MEM_PGOFF_SHIFT),
			   GFP_KERNEL);
	if (id < 0)
		return ERR_PTR(id);
	mem = vstream_mem_new(node);
	if (!mem) {
		ida_free(&vstream_mem_ida, id);
		return ERR_PTR(-ENOMEM);
	}
	mem->id = id;
	mem->vb = vb;
	mem->size = PAGE_ALIGN(size);
	/* a new buffer never shows what an earlier opener left */
	mem->frame = vstream_frame_new(node->pipe, vb, mem->size, true);
	if (IS_ERR(mem->frame)) {
		void *err = mem->frame;

		mem->frame = NULL;
		vstream_mem_unref(mem);
		return err;
	}
	return mem;
}

static void vstream_mem_put(void *priv)
{
	struct vstream_mem *mem = priv;

	mutex_lock(&mem->lock);
	/*
	 * Still mapped: the mapping keeps showing this frame.  Make it the
	 * mapping's own now, while vb2's buffer can still allocate, so that
	 * a reader's later write needs no copy on write (one that fails gets
	 * SIGBUS).  A producer's frame is its own already.
	 */
	if (kref_read(&mem->ref) > 1 && !mem->node->output)
		vstream_mem_unshare(mem, true);
	/* what an opener wrote and never queued goes with its buffers */
	if (mem->node->output)
		mem->frame->written = true;
	mem->vb = NULL;
	mutex_unlock(&mem->lock);
	vstream_mem_unref(mem);
}

static struct dma_buf *vstream_mem_get_dmabuf(struct vb2_buffer *vb, void *priv,
					      unsigned long flags)
{
	struct vstream_mem *mem = priv;
	struct dma_buf *dbuf;

	mutex_lock(&mem->lock);
	if (vstream_mem_unshare(mem, true)) {
		dbuf = NULL;
	} else {
		/* the dma-buf is these pages: this buffer never flips again */
		mem->pinned = true;
		/* and whoever has it may write them, unseen by our faults */
		mem->frame->written = true;
		dbuf = vb2_vmalloc_memops.get_dmabuf(vb, mem->frame->vm, flags);
	}
	mutex_unlock(&mem->lock);
	return dbuf;
}

/* What the pipe asks */

/**
 * vstream_buf_can_share() - whether a buffer takes part in zero copy
 * @buf: the buffer
 *
 * Return: true for an MMAP buffer that is neither exported nor used by
 * read()/write().
 */
bool vstream_buf_can_share(struct vstream_buffer *buf)
{
	struct vb2_queue *q = buf->vb.vb2_buf.vb2_queue;

	return q->memory == VB2_MEMORY_MMAP && !vstream_buf_mem(buf)->pinned &&
	       !vb2_fileio_is_active(q);
}

/**
 * vstream_buf_detach() - take the frame of a buffer the producer queued
 * @buf: the producer's buffer, in its QBUF
 *
 * The buffer shows a fresh frame from now on, and its mappings go, so
 * nothing can write the frame it showed.
 *
 * Return: that frame (the caller's reference), or NULL if @buf does not
 * share, its pages are pinned (an importer keeps using them), or no fresh
 * frame can be had: it is then delivered by copy.
 */
struct vstream_frame *vstream_buf_detach(struct vstream_buffer *buf)
{
	struct vstream_mem *mem = vstream_buf_mem(buf);
	struct vstream_frame *f;

	if (!vstream_buf_can_share(buf) || vstream_frame_pinned(mem->frame))
		return NULL;
	f = vstream_frame_new(mem->node->pipe, &buf->vb.vb2_buf, mem->size, false);
	if (IS_ERR(f))
		return NULL;
	mutex_lock(&mem->lock);
	f = vstream_mem_flip(mem, f);
	mutex_unlock(&mem->lock);
	return f;
}

/**
 * vstream_buf_get_frame() - the frame an MMAP buffer shows
 * @buf: the buffer
 *
 * Return: the frame with a reference, which keeps its memory while a
 * delivery copies from it; NULL for USERPTR and DMABUF buffers.
 */
struct vstream_frame *vstream_buf_get_frame(struct vstream_buffer *buf)
{
	struct vstream_mem *mem = vstream_buf_mem(buf);
	struct vstream_frame *f = NULL;

	if (buf->vb.vb2_buf.vb2_queue->memory != VB2_MEMORY_MMAP)
		return NULL;
	mutex_lock(&mem->lock);
	if (mem->frame)
		f = vstream_frame_get(mem->frame);
	mutex_unlock(&mem->lock);
	return f;
}

/**
 * vstream_buf_new_frame() - a frame as big as a buffer's
 * @buf: the buffer
 *
 * Return: a frame nothing else uses, or NULL.
 */
struct vstream_frame *vstream_buf_new_frame(struct vstream_buffer *buf)
{
	struct vb2_buffer *vb = &buf->vb.vb2_buf;
	struct vstream_node *node = vb2_get_drv_priv(vb->vb2_queue);
	struct vstream_frame *f;

	f = vstream_frame_new(node->pipe, vb, PAGE_ALIGN(vb2_plane_size(vb, 0)), false);
	return IS_ERR(f) ? NULL : f;
}

/**
 * vstream_buf_share() - deliver a frame into a reader's buffer without a copy
 * @buf: the reader's buffer, taken from its queue
 * @f: a detached frame
 * @flips: counts one if @buf showed another frame (its mappings go)
 *
 * Return: false if @buf cannot show @f.
 */
bool vstream_buf_share(struct vstream_buffer *buf, struct vstream_frame *f, u64 *flips)
{
	struct vstream_mem *mem = vstream_buf_mem(buf);
	struct vstream_frame *old = NULL;

	if (!vstream_buf_can_share(buf) || f->size < mem->size)
		return false;
	mutex_lock(&mem->lock);
	/* an importer holds these pages: it is filled in place, by copy */
	if (mem->frame != f && vstream_frame_pinned(mem->frame)) {
		mutex_unlock(&mem->lock);
		return false;
	}
	if (mem->frame != f) {
		old = vstream_mem_flip(mem, vstream_frame_get(f));
		(*flips)++;
	}
	mutex_unlock(&mem->lock);
	vstream_frame_put(old);
	return true;
}

/**
 * vstream_buf_unmap() - drop a reader's mappings of a buffer it queued
 * @buf: the buffer, in its owner's QBUF
 *
 * Done when its next frame will come by sharing: the flip that delivers
 * it then finds no TLB entry to flush in another process.
 */
void vstream_buf_unmap(struct vstream_buffer *buf)
{
	struct vstream_mem *mem = vstream_buf_mem(buf);

	if (!vstream_buf_can_share(buf))
		return;
	mutex_lock(&mem->lock);
	vstream_mem_zap(mem);
	mutex_unlock(&mem->lock);
}

/**
 * vstream_buf_writable() - kernel address to write a frame into
 * @buf: the buffer, taken from its queue
 *
 * Return: the address of @buf's memory, made private to it, or NULL if
 * no memory can be had.
 */
void *vstream_buf_writable(struct vstream_buffer *buf)
{
	struct vb2_buffer *vb = &buf->vb.vb2_buf;
	struct vstream_mem *mem = vstream_buf_mem(buf);
	int err = 0;

	if (vb->vb2_queue->memory == VB2_MEMORY_MMAP) {
		mutex_lock(&mem->lock);
		err = vstream_mem_unshare(mem, false);
		mutex_unlock(&mem->lock);
	}
	return err ? NULL : vb2_plane_vaddr(vb, 0);
}

/* USERPTR and DMABUF: vb2-vmalloc's memory in our wrapper. */
static void *vstream_mem_wrap(struct vb2_buffer *vb, void *vm, void (*release)(void *vm))
{
	struct vstream_mem *mem;

	if (IS_ERR_OR_NULL(vm))
		return vm;
	mem = vstream_mem_new(vb2_get_drv_priv(vb->vb2_queue));
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
	return vstream_mem_wrap(vb, vb2_vmalloc_memops.get_userptr(vb, dev, vaddr, size),
				vb2_vmalloc_memops.put_userptr);
}

static void vstream_mem_put_userptr(void *priv)
{
	struct vstream_mem *mem = priv;

	vb2_vmalloc_memops.put_userptr(mem->vm);
	vstream_mem_unref(mem);
}

static void *vstream_mem_attach_dmabuf(struct vb2_buffer *vb, struct device *dev,
				       struct dma_buf *dbuf, unsigned long size)
{
	return vstream_mem_wrap(vb, vb2_vmalloc_memops.attach_dmabuf(vb, dev, dbuf, size),
				vb2_vmalloc_memops.detach_dmabuf);
}

static void vstream_mem_detach_dmabuf(void *priv)
{
	struct vstream_mem *mem = priv;

	vb2_vmalloc_memops.detach_dmabuf(mem->vm);
	vstream_mem_unref(mem);
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
	struct vstream_mem *mem = priv;

	if (mem->frame)
		return mem->frame->vaddr;
	return vb2_vmalloc_memops.vaddr(vb, mem->vm);
}

static unsigned int vstream_mem_num_users(void *priv)
{
	struct vstream_mem *mem = priv;

	if (mem->frame)
		return kref_read(&mem->ref);
	return vb2_vmalloc_memops.num_users(mem->vm);
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

/* The files' mapping */

static int vstream_fs_init_fs_context(struct fs_context *fc)
{
	return init_pseudo(fc, VSTREAM_FS_MAGIC) ? 0 : -ENOMEM;
}

/*
 * Never registered: only kern_mount() mounts it.  No owner: it is
 * unmounted before the module goes, and a reference would block rmmod.
 */
static struct file_system_type vstream_fs_type = {
	.name		= "vstream",
	.init_fs_context = vstream_fs_init_fs_context,
	.kill_sb	= kill_anon_super,
};

/**
 * vstream_open() - open a node, its mappings in the driver's own inode
 * @file: the file being opened
 *
 * Return: 0 or a negative errno, as v4l2_fh_open().
 */
int vstream_open(struct file *file)
{
	int ret = v4l2_fh_open(file);

	if (!ret)
		file->f_mapping = vstream_inode->i_mapping;
	return ret;
}

/**
 * vstream_mem_init() - make the inode all mappings live in
 *
 * Return: 0 or a negative errno.
 */
int vstream_mem_init(void)
{
	vstream_mnt = kern_mount(&vstream_fs_type);
	if (IS_ERR(vstream_mnt))
		return PTR_ERR(vstream_mnt);
	vstream_inode = alloc_anon_inode(vstream_mnt->mnt_sb);
	if (IS_ERR(vstream_inode)) {
		kern_unmount(vstream_mnt);
		return PTR_ERR(vstream_inode);
	}
	return 0;
}

/**
 * vstream_mem_exit() - free that inode; no file of the driver is open
 */
void vstream_mem_exit(void)
{
	iput(vstream_inode);
	kern_unmount(vstream_mnt);
}
