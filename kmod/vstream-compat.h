/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vstream-compat.h - the few kernel API breaks between 6.1 and 7.0 that
 * touch this driver.  Keep every version test here.
 */
#ifndef _VSTREAM_COMPAT_H_
#define _VSTREAM_COMPAT_H_

#include <linux/mm.h>
#include <linux/version.h>
#include <media/videobuf2-v4l2.h>

/* 6.8: q->num_buffers became private, read through vb2_get_num_buffers(). */
static inline unsigned int vstream_vb2_num_buffers(struct vb2_queue *q)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 8, 0)
	return vb2_get_num_buffers(q);
#else
	return q->num_buffers;
#endif
}

/* 6.3: vma->vm_flags became read-only, changed through vm_flags_set(). */
static inline void vstream_vm_flags_set(struct vm_area_struct *vma, unsigned long flags)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	vm_flags_set(vma, flags);
#else
	vma->vm_flags |= flags;
#endif
}

/*
 * Before 7.0 a queue with q->lock must still name the helpers that drop
 * it around a blocking DQBUF; 7.0 does that itself and removed the ops.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(7, 0, 0)
#define VSTREAM_VB2_WAIT_OPS				\
	.wait_prepare	= vb2_ops_wait_prepare,		\
	.wait_finish	= vb2_ops_wait_finish,
#else
#define VSTREAM_VB2_WAIT_OPS
#endif

/*
 * 6.9: whether the CPUs' data caches alias, as a function; older kernels
 * have none, and the architectures this driver is built for (x86, arm64)
 * do not alias.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 9, 0)
#include <linux/cacheinfo.h>
#define vstream_dcache_aliasing()	cpu_dcache_is_aliasing()
#else
#define vstream_dcache_aliasing()	false
#endif

/* 6.11: platform_driver.remove returns void. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
#define VSTREAM_REMOVE_RET void
#define VSTREAM_REMOVE_OK
#else
#define VSTREAM_REMOVE_RET int
#define VSTREAM_REMOVE_OK 0
#endif

#endif
