// SPDX-License-Identifier: GPL-2.0
/*
 * Frame memory of MMAP buffers, shared without copying and
 * without letting one user's buffer change under another.
 *
 * A frame (struct vstream_frame) is a refcounted vb2-vmalloc allocation.
 * Every MMAP buffer's memory (struct vstream_mem) points at one frame, and
 * a buffer's frame can be replaced ("flipped"): user space maps a buffer
 * through a fault handler (VM_PFNMAP, special PTEs), and a flip
 * zaps those mappings with unmap_mapping_range(), so the next access
 * faults in the new frame's pages.  To make that range unique, each
 * vstream_mem gets its own file offset (vm_pgoff), whatever offset vb2
 * used to pick the buffer.
 *
 * That gives the pipe (vstream-pipe.c) zero copy without lockstep: the
 * frame a producer's buffer shows is delivered by pointing every reader's
 * buffer at it, and the producer's buffer gets a spare frame if a reader
 * still holds that frame when the producer would write it again.
 * A reader therefore holds its frames, and only its frames, for as long as
 * it likes; nobody waits for it.  Rules:
 *
 * - A frame that more than one buffer points at is never written: the
 *   kernel first gives the buffer it writes a private frame (copies and
 *   idle frames), and user space sees it mapped read-only; a write fault
 *   copies it for the writer alone (copy on write, counted in `cow`).
 *   One exception: the producer writes its buffer's frame when the
 *   others that show it are readers' queued buffers, which are the
 *   driver's to fill, as a camera's DMA fills them (f->queued).  So a
 *   reader whose buffers go round in step with the producer's gets each
 *   buffer back showing the same pages, with nothing remapped.
 * - Buffers whose frame must not move are "pinned" and take part only by
 *   copy: exported ones (EXPBUF: the dma-buf holds those very pages), and
 *   those of a queue in read()/write() mode (vb2's file I/O caches their
 *   kernel addresses).
 * - Memory is bounded: every buffer holds one frame (a producer's also a
 *   spare, from its first shared delivery until it flips or STREAMOFF, so
 *   its queue's budget counts two per buffer), a frame is freed or kept
 *   as a spare (at most VSTREAM_SPARE_FRAMES per pipe) when the last
 *   buffer lets go of it, so a lagging reader costs the frames it holds.
 * - A frame a reader wrote into is freed, never a spare: its picture is
 *   that reader's alone.
 *
 * USERPTR and DMABUF memory is vb2-vmalloc's alone, in the same wrapper
 * (with no frame), as some ops (num_users) cannot tell memory types apart.
 *
 * Locking: mem->lock (a mutex) guards mem->frame and mem->mappings; it
 * nests inside pipe->lock and inside the mm's locks (fault handlers), and
 * is held across unmap_mapping_range().  mem->queued changes under both
 * pipe->lock and mem->lock.  Frame refcounts and f->queued are atomic (a
 * queued buffer's write fault moves it under mem->lock alone); the
 * spare list has its own spinlock.  vb2 calls alloc, put and get_dmabuf
 * under the queue lock (pipe->lock), mmap under the mm's lock.
 */

#include <linux/fs.h>
#include <linux/idr.h>
#include <linux/kref.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/vmalloc.h>
#include <media/videobuf2-vmalloc.h>

#include "vstream.h"
#include "vstream-compat.h"

/* Each vstream_mem owns 2^VSTREAM_MEM_PGOFF_SHIFT pages of file offsets. */
#define VSTREAM_MEM_PGOFF_SHIFT	18
/* Distinct files (inodes) through which one buffer may be mapped. */
#define VSTREAM_MEM_MAPPINGS	4
#define VSTREAM_SPARE_FRAMES	4

struct vstream_frame {
	struct kref ref;
	struct list_head list;		/* on pipe->spare while unused */
	struct vstream_pipe *pipe;
	void *vm;			/* vb2-vmalloc's buffer */
	void *vaddr;
	unsigned long size;
	unsigned long *pfn;		/* of each page, for the fault handler */
	atomic_t queued;		/* readers' queued buffers showing it */
	bool written;			/* by a reader: never handed out again */
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
	bool queued;			/* a reader's, in the driver's queue (pipe->lock) */
	bool steady;			/* its last delivery was the frame it showed */
	bool must_unshare;		/* handed back sharing: its next fault unshares */
	struct address_space *mappings[VSTREAM_MEM_MAPPINGS];
};

static DEFINE_IDA(vstream_mem_ida);

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
	kvfree(f->pfn);
	vb2_vmalloc_memops.put(f->vm);
	kfree(f);
}

static void vstream_frame_release(struct kref *ref)
{
	struct vstream_frame *f = container_of(ref, struct vstream_frame, ref);
	struct vstream_pipe *pipe = f->pipe;
	bool spare = false;

	/* every queued buffer that counts in it holds a reference */
	if (WARN_ON_ONCE(atomic_read(&f->queued))) {
		vstream_frame_free(f);	/* a reuse would count it wrong */
		return;
	}

	/*
	 * Pages an exported dma-buf still has, and pages a reader wrote (its
	 * own picture, which no other opener may see), are never handed out
	 * again.
	 */
	if (vb2_vmalloc_memops.num_users(f->vm) == 1 && !f->written) {
		spin_lock(&pipe->spare_lock);
		if (pipe->nspare < VSTREAM_SPARE_FRAMES) {
			list_add(&f->list, &pipe->spare);
			pipe->nspare++;
			spare = true;
		}
		spin_unlock(&pipe->spare_lock);
	}
	if (!spare)
		vstream_frame_free(f);
}

struct vstream_frame *vstream_frame_get(struct vstream_frame *f)
{
	kref_get(&f->ref);
	return f;
}

void vstream_frame_put(struct vstream_frame *f)
{
	if (f)
		kref_put(&f->ref, vstream_frame_release);
}

static bool vstream_frame_shared(struct vstream_frame *f)
{
	return kref_read(&f->ref) > 1;
}

/*
 * Shown by a buffer user space may read, beside the one asking: not only
 * by readers' queued buffers.  A queued buffer that stops showing @f
 * (a write fault, under its own mem->lock only) leaves f->queued before
 * its kref_put(), which orders that as a release; reading the refcount
 * first, then (after the barrier) the count, a race reads "yes".
 */
static bool vstream_frame_exposed(struct vstream_frame *f)
{
	unsigned int refs = kref_read(&f->ref);

	/* the count after the refcount: pairs with kref_put()'s release */
	smp_rmb();
	return refs - atomic_read(&f->queued) > 1;
}

void *vstream_frame_vaddr(const struct vstream_frame *f)
{
	return f->vaddr;
}

/*
 * A frame of exactly @size bytes that nobody else uses: a spare or new.
 * With @clear it reads as zeros, as a new one does: a spare still holds
 * an earlier frame, maybe an earlier opener's.
 */
static struct vstream_frame *vstream_frame_new(struct vstream_pipe *pipe,
					       struct vb2_buffer *vb, unsigned long size,
					       bool clear)
{
	struct vstream_frame *f, *tmp, *found = NULL;
	LIST_HEAD(stale);
	unsigned long i;

	spin_lock(&pipe->spare_lock);
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
	/* looked up once: a frame is mapped again after every flip */
	f->pfn = kvmalloc_array(size >> PAGE_SHIFT, sizeof(*f->pfn), GFP_KERNEL);
	if (!f->pfn) {
		vstream_frame_free(f);
		return ERR_PTR(-ENOMEM);
	}
	for (i = 0; i < size >> PAGE_SHIFT; i++)
		f->pfn[i] = vmalloc_to_pfn(f->vaddr + (i << PAGE_SHIFT));
	kref_init(&f->ref);
	return f;
}

/* Free the spares, e.g. when the pipe goes idle or away. */
void vstream_mem_drain(struct vstream_pipe *pipe)
{
	struct vstream_frame *f, *tmp;
	LIST_HEAD(list);

	spin_lock(&pipe->spare_lock);
	list_splice_init(&pipe->spare, &list);
	pipe->nspare = 0;
	spin_unlock(&pipe->spare_lock);
	list_for_each_entry_safe(f, tmp, &list, list)
		vstream_frame_free(f);
}

/* Buffer memory and its user mappings */

static void vstream_mem_release(struct kref *ref)
{
	struct vstream_mem *mem = container_of(ref, struct vstream_mem, ref);
	unsigned int i;

	for (i = 0; i < VSTREAM_MEM_MAPPINGS && mem->mappings[i]; i++)
		iput(mem->mappings[i]->host);
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
 * Only vstream_vm_fault() makes PTEs (fork and mremap copy or move those),
 * so with none made since the last zap there is nothing to walk: a
 * reader's buffer, unmapped at its QBUF, takes a frame for free.
 */
static void vstream_mem_zap(struct vstream_mem *mem)
{
	unsigned int i;

	if (!mem->mapped)
		return;
	mem->mapped = false;
	for (i = 0; i < VSTREAM_MEM_MAPPINGS && mem->mappings[i]; i++)
		unmap_mapping_range(mem->mappings[i],
				    (loff_t)vstream_mem_pgoff(mem) << PAGE_SHIFT,
				    mem->size, 1);
}

/* Show @f (a reference the caller gives up) in @mem.  Called with mem->lock. */
static void vstream_mem_flip(struct vstream_mem *mem, struct vstream_frame *f)
{
	struct vstream_frame *old = mem->frame;

	mem->frame = f;
	mem->steady = false;
	mem->must_unshare = false;
	if (mem->queued) {
		atomic_inc(&f->queued);
		atomic_dec(&old->queued);
	}
	vstream_mem_zap(mem);
	vstream_frame_put(old);
}

/*
 * Give @mem a frame of its own; with @copy keep what it shows.  Called
 * with mem->lock.  Needs the vb2 buffer to allocate, so put() makes a
 * mapped buffer private before vb2 frees it.
 */
static int vstream_mem_unshare(struct vstream_mem *mem, bool copy)
{
	struct vstream_frame *f;

	if (!vstream_frame_shared(mem->frame))
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
	vstream_mem_flip(mem, f);
	return 0;
}

static vm_fault_t vstream_vm_errno(int err)
{
	return err == -ENOMEM ? VM_FAULT_OOM : VM_FAULT_SIGBUS;
}

struct vstream_map {
	struct vm_area_struct *vma;
	const unsigned long *pfn;	/* the frame's, from the vma's start */
	pgprot_t prot;
};

/* apply_to_page_range()'s step, with the page table lock held */
static int vstream_map_pte(pte_t *pte, unsigned long addr, void *data)
{
	struct vstream_map *map = data;
	unsigned long pfn = map->pfn[(addr - map->vma->vm_start) >> PAGE_SHIFT];

	/* a thread that faulted at the same time has mapped it already */
	if (pte_none(ptep_get(pte))) {
		set_pte_at(map->vma->vm_mm, addr, pte,
			   pte_mkspecial(pfn_pte(pfn, map->prot)));
		update_mmu_cache(map->vma, addr, pte);
	}
	return 0;
}

/*
 * Map the whole vma at once: one fault per frame, not one per page.  And
 * in one page table walk of special PTEs, as i915 maps its VM_PFNMAP
 * objects: this runs for every frame a buffer shows, and
 * vmf_insert_pfn_prot() page by page cost a 1080p frame 0.7 ms under
 * emulation, ten times this.  What vmf_insert_pfn_prot() adds does not
 * apply to frames: they are RAM (write-back, no PAT lookup needed) and
 * the prot is the vma's own.
 */
static vm_fault_t vstream_vm_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct vstream_mem *mem = vma->vm_private_data;
	unsigned long start = (vma->vm_pgoff - vstream_mem_pgoff(mem)) << PAGE_SHIFT;
	unsigned long flags = vma->vm_flags;
	struct vstream_map map = { .vma = vma };
	vm_fault_t ret = VM_FAULT_NOPAGE;
	int err = 0;

	mutex_lock(&mem->lock);
	if (mem->must_unshare) {
		err = vstream_mem_unshare(mem, false);
		mem->must_unshare = err != 0;
	}
	if (!err && (vmf->flags & FAULT_FLAG_WRITE))
		err = vstream_mem_unshare(mem, true);
	if (!err && start + (vma->vm_end - vma->vm_start) > mem->frame->size)
		err = -EFAULT;
	if (!err) {
		/*
		 * A shared frame is read-only: the first write comes to
		 * pfn_mkwrite.  So is a reader's own until it writes, so
		 * that the frames readers wrote are known (f->written).
		 */
		if (vstream_frame_shared(mem->frame) ||
		    (!mem->node->output && !(vmf->flags & FAULT_FLAG_WRITE)))
			flags &= ~VM_WRITE;
		else if (!mem->node->output && (flags & VM_WRITE))
			mem->frame->written = true;
		map.pfn = mem->frame->pfn + (start >> PAGE_SHIFT);
		map.prot = vm_get_page_prot(flags);
		mem->mapped = true;
		err = apply_to_page_range(vma->vm_mm, vma->vm_start,
					  vma->vm_end - vma->vm_start, vstream_map_pte, &map);
	}
	if (err)
		ret = vstream_vm_errno(err);
	mutex_unlock(&mem->lock);
	return ret;
}

/* A write to a read-only (once shared) page: copy if still shared. */
static vm_fault_t vstream_vm_pfn_mkwrite(struct vm_fault *vmf)
{
	struct vstream_mem *mem = vmf->vma->vm_private_data;
	int err;

	mutex_lock(&mem->lock);
	err = vstream_mem_unshare(mem, true);
	/* either way: fault again, mapping every page writable at once */
	if (!err)
		vstream_mem_zap(mem);
	mutex_unlock(&mem->lock);
	return err ? vstream_vm_errno(err) : VM_FAULT_NOPAGE;
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

static const struct vm_operations_struct vstream_vm_ops = {
	.open		= vstream_vm_open,
	.close		= vstream_vm_close,
	.fault		= vstream_vm_fault,
	.pfn_mkwrite	= vstream_vm_pfn_mkwrite,
};

static int vstream_mem_mmap(void *priv, struct vm_area_struct *vma)
{
	struct vstream_mem *mem = priv;
	struct address_space *mapping = vma->vm_file->f_mapping;
	unsigned int i;
	int ret = -EBUSY;

	mutex_lock(&mem->lock);
	for (i = 0; i < VSTREAM_MEM_MAPPINGS; i++) {
		if (!mem->mappings[i]) {
			ihold(mapping->host);
			mem->mappings[i] = mapping;
		}
		if (mem->mappings[i] == mapping) {
			ret = 0;
			break;
		}
	}
	mutex_unlock(&mem->lock);
	if (ret)
		return ret;
	/* vb2 chose the buffer by offset; flips find its mappings by ours */
	vma->vm_pgoff = vstream_mem_pgoff(mem);
	vstream_vm_flags_set(vma, VM_PFNMAP | VM_DONTEXPAND | VM_DONTDUMP);
	vma->vm_private_data = mem;
	vma->vm_ops = &vstream_vm_ops;
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
	 * a later write needs no copy on write.  On failure its PTEs go (a
	 * producer's may be writable on a frame readers share): a later
	 * write gets SIGBUS, the frame never changes.
	 */
	if (kref_read(&mem->ref) > 1 && vstream_mem_unshare(mem, true))
		vstream_mem_zap(mem);
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
		if (!mem->node->output)
			mem->frame->written = true;
		dbuf = vb2_vmalloc_memops.get_dmabuf(vb, mem->frame->vm, flags);
	}
	mutex_unlock(&mem->lock);
	return dbuf;
}

/* What the pipe thread asks */

bool vstream_buf_can_share(struct vstream_buffer *buf)
{
	struct vb2_queue *q = buf->vb.vb2_buf.vb2_queue;

	return q->memory == VB2_MEMORY_MMAP && !vstream_buf_mem(buf)->pinned &&
	       !vb2_fileio_is_active(q);
}

/* @buf's frame with a reference, if it can be delivered by sharing. */
struct vstream_frame *vstream_buf_get_frame(struct vstream_buffer *buf)
{
	struct vstream_mem *mem = vstream_buf_mem(buf);
	struct vstream_frame *f;

	if (!vstream_buf_can_share(buf))
		return NULL;
	mutex_lock(&mem->lock);
	f = mem->frame;
	kref_get(&f->ref);
	mutex_unlock(&mem->lock);
	return f;
}

/* A frame as big as @buf's: to flip to later (vstream_buf_renew()), or own. */
struct vstream_frame *vstream_buf_spare(struct vstream_buffer *buf)
{
	struct vb2_buffer *vb = &buf->vb.vb2_buf;
	struct vstream_node *node = vb2_get_drv_priv(vb->vb2_queue);
	struct vstream_frame *f;

	f = vstream_frame_new(node->pipe, vb, PAGE_ALIGN(vb2_plane_size(vb, 0)), false);
	return IS_ERR(f) ? NULL : f;
}

/*
 * With pipe->lock: have a spare as big as the MMAP frames of the
 * producer's queue @q ready, so that the first delivery of a stream
 * allocates nothing (a new frame is zeroed: milliseconds for 1080p).
 * Called when the producer or a reader starts streaming; a reader's
 * buffers may have taken the spares that were there.
 */
void vstream_mem_stock(struct vb2_queue *q)
{
	struct vstream_node *node = vb2_get_drv_priv(q);
	struct vstream_pipe *pipe = node->pipe;
	struct vb2_buffer *vb = vb2_get_buffer(q, 0);
	struct vstream_frame *f;
	unsigned long size;
	bool found = false;

	if (!vb || q->memory != VB2_MEMORY_MMAP || vb2_fileio_is_active(q))
		return;
	size = PAGE_ALIGN(vb2_plane_size(vb, 0));
	spin_lock(&pipe->spare_lock);
	list_for_each_entry(f, &pipe->spare, list) {
		if (f->size == size) {
			found = true;
			break;
		}
	}
	spin_unlock(&pipe->spare_lock);
	if (found)
		return;
	f = vstream_frame_new(pipe, vb, size, false);
	if (!IS_ERR(f))
		vstream_frame_put(f);	/* to the spares */
}

/* @buf can show @obuf's frame: it is not bigger (vstream_buf_share()). */
bool vstream_buf_fits(struct vstream_buffer *buf, struct vstream_buffer *obuf)
{
	return PAGE_ALIGN(vb2_plane_size(&buf->vb.vb2_buf, 0)) <=
	       PAGE_ALIGN(vb2_plane_size(&obuf->vb.vb2_buf, 0));
}

/*
 * Deliver @f into @buf without copying; false if @buf cannot take it.
 * Counts in @flips if @buf showed another frame (its mappings go).
 */
bool vstream_buf_share(struct vstream_buffer *buf, struct vstream_frame *f, u64 *flips)
{
	struct vstream_mem *mem = vstream_buf_mem(buf);

	if (!vstream_buf_can_share(buf) || f->size < mem->size)
		return false;
	mutex_lock(&mem->lock);
	if (mem->frame != f) {
		kref_get(&f->ref);
		vstream_mem_flip(mem, f);
		(*flips)++;
	} else {
		mem->steady = true;
	}
	mutex_unlock(&mem->lock);
	return true;
}

/*
 * Before the producer writes @buf again: if a buffer user space may read
 * shows its frame too, flip it to @spare, whose reference that consumes.
 * Returns whether it flipped, and what the flip took in @cost_ns.
 */
bool vstream_buf_renew(struct vstream_buffer *buf, struct vstream_frame *spare,
		       u64 *cost_ns)
{
	struct vstream_mem *mem = vstream_buf_mem(buf);
	bool flip;
	u64 t0;

	*cost_ns = 0;
	mutex_lock(&mem->lock);
	flip = vstream_frame_exposed(mem->frame);
	if (flip) {
		t0 = ktime_get_ns();
		vstream_mem_flip(mem, spare);
		*cost_ns = ktime_get_ns() - t0;
	}
	mutex_unlock(&mem->lock);
	return flip;
}

/*
 * A reader's @buf is queued (with pipe->lock): the driver's until it is
 * filled.  With @unmap the next frame will come by sharing; unless the
 * last one was the frame @buf already showed (the reader's buffers and
 * the producer's go round in step, and the next likely is too), its
 * mappings go now, in the owner's QBUF, so that the flip delivering that
 * frame finds no TLB entry to flush in the producer's.
 */
void vstream_buf_queued(struct vstream_buffer *buf, bool unmap)
{
	struct vstream_mem *mem = vstream_buf_mem(buf);

	lockdep_assert_held(&mem->node->pipe->lock);
	if (!vstream_buf_can_share(buf))
		return;
	mutex_lock(&mem->lock);
	mem->queued = true;
	mem->must_unshare = false;
	atomic_inc(&mem->frame->queued);
	if (unmap && !mem->steady)
		vstream_mem_zap(mem);
	mutex_unlock(&mem->lock);
}

/*
 * The driver takes a reader's @buf off its queue (with pipe->lock), to
 * fill it or, with @hand_back, to give it back unfilled (STREAMOFF).
 * From now on the producer never writes what it shows; one handed back
 * carries no frame, so it gets pages of its own if it shares them and
 * the producer may be writing them (if none can be had, its mappings go
 * and its next fault tries again: SIGBUS if memory is still short).
 */
void vstream_buf_taken(struct vstream_buffer *buf, bool hand_back)
{
	struct vstream_mem *mem = vstream_buf_mem(buf);

	lockdep_assert_held(&mem->node->pipe->lock);
	if (!mem->queued)
		return;
	mutex_lock(&mem->lock);
	mem->queued = false;
	atomic_dec(&mem->frame->queued);
	if (hand_back && vstream_mem_unshare(mem, false)) {
		/* no pages now: its next fault tries again, or fails */
		vstream_mem_zap(mem);
		mem->must_unshare = true;
	}
	mutex_unlock(&mem->lock);
}

/* Kernel address to write a frame into @buf: its memory, made private. */
void *vstream_buf_writable(struct vstream_buffer *buf)
{
	struct vb2_buffer *vb = &buf->vb.vb2_buf;
	struct vstream_mem *mem = vstream_buf_mem(buf);
	int err = 0;

	if (vb->vb2_queue->memory == VB2_MEMORY_MMAP) {
		mutex_lock(&mem->lock);
		err = vstream_mem_unshare(mem, false);
		mem->steady = false;
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
