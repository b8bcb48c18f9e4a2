/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vs-util.h - what the raw-ioctl test programs (vs-loopback, vs-bench,
 * vs-hostile) share: one side of a pipe with its buffers in MMAP, USERPTR
 * or DMABUF memory, and the error check that ends a test.
 */
#ifndef VS_UTIL_H
#define VS_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/videodev2.h>

#define NBUF 4

struct side {
	const char *path;
	int fd;
	int type;
	int memory;
	unsigned int count;
	void *ptr[NBUF];
	size_t len[NBUF];
	int dmafd[NBUF];
};

static inline int xioctl(int fd, unsigned long req, void *arg)
{
	int r;

	do
		r = ioctl(fd, req, arg);
	while (r < 0 && errno == EINTR);
	return r;
}

#define CHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, "FAIL: " __VA_ARGS__); \
	fprintf(stderr, " (%s)\n", strerror(errno)); exit(1); } } while (0)

/*
 * "mapped": USERPTR memory that is another node's MMAP buffers, mapped
 * (get_user_pages() on a driver mapping, as importing a camera's buffer
 * into another device does)
 */
#define VS_MEMORY_MAPPED 0x100

static inline int parse_mem(const char *s)
{
	if (!strcmp(s, "mmap"))
		return V4L2_MEMORY_MMAP;
	if (!strcmp(s, "userptr"))
		return V4L2_MEMORY_USERPTR;
	if (!strcmp(s, "mapped"))
		return V4L2_MEMORY_USERPTR | VS_MEMORY_MAPPED;
	if (!strcmp(s, "dmabuf"))
		return V4L2_MEMORY_DMABUF;
	fprintf(stderr, "unknown memory %s\n", s);
	exit(2);
}

/* Export @count buffers of @size from node @path (its own MMAP queue). */
static inline void export_from(const char *path, struct side *s, struct v4l2_format *fmt)
{
	int fd = open(path, O_RDWR);
	int type = s->type;
	struct v4l2_format f = *fmt;
	struct v4l2_requestbuffers req = { .count = s->count, .type = type,
					   .memory = V4L2_MEMORY_MMAP };

	CHECK(fd >= 0, "open exporter %s", path);
	f.type = type;
	CHECK(xioctl(fd, VIDIOC_S_FMT, &f) == 0, "exporter S_FMT");
	CHECK(xioctl(fd, VIDIOC_REQBUFS, &req) == 0 && req.count >= s->count,
	      "exporter REQBUFS");
	for (unsigned int i = 0; i < s->count; i++) {
		struct v4l2_exportbuffer e = { .type = type, .index = i, .flags = O_RDWR };
		struct v4l2_buffer b = { .type = type, .index = i,
					 .memory = V4L2_MEMORY_MMAP };

		CHECK(xioctl(fd, VIDIOC_EXPBUF, &e) == 0, "EXPBUF");
		CHECK(xioctl(fd, VIDIOC_QUERYBUF, &b) == 0, "exporter QUERYBUF");
		s->dmafd[i] = e.fd;
		s->len[i] = b.length;
		s->ptr[i] = mmap(NULL, b.length, PROT_READ | PROT_WRITE, MAP_SHARED,
				 e.fd, 0);
		CHECK(s->ptr[i] != MAP_FAILED, "mmap dmabuf");
	}
	/* the exporter fd may close: the dma-bufs keep the memory alive */
	close(fd);
}

/*
 * Map @s->count MMAP buffers of node @path, whose queue is of the other
 * direction (a producer's memory is a capture node's buffers, a reader's
 * an output node's), into @s->ptr.
 */
static inline void map_from(const char *path, struct side *s, struct v4l2_format *fmt)
{
	int fd = open(path, O_RDWR);
	int type = s->type == V4L2_BUF_TYPE_VIDEO_OUTPUT ? V4L2_BUF_TYPE_VIDEO_CAPTURE :
							   V4L2_BUF_TYPE_VIDEO_OUTPUT;
	struct v4l2_format f = *fmt;
	struct v4l2_requestbuffers req = { .count = s->count, .type = type,
					   .memory = V4L2_MEMORY_MMAP };

	CHECK(fd >= 0, "open %s", path);
	f.type = type;
	CHECK(xioctl(fd, VIDIOC_S_FMT, &f) == 0, "S_FMT %s", path);
	CHECK(xioctl(fd, VIDIOC_REQBUFS, &req) == 0 && req.count >= s->count,
	      "REQBUFS %s", path);
	for (unsigned int i = 0; i < s->count; i++) {
		struct v4l2_buffer b = { .type = type, .index = i,
					 .memory = V4L2_MEMORY_MMAP };

		CHECK(xioctl(fd, VIDIOC_QUERYBUF, &b) == 0, "QUERYBUF %s", path);
		s->len[i] = fmt->fmt.pix.sizeimage;
		s->ptr[i] = mmap(NULL, b.length, PROT_READ | PROT_WRITE, MAP_SHARED,
				 fd, b.m.offset);
		CHECK(s->ptr[i] != MAP_FAILED, "mmap %s", path);
	}
	/* the mappings keep the file, and so its buffers */
	close(fd);
}

static inline void setup(struct side *s, struct v4l2_format *fmt, const char *exporter)
{
	int mapped = s->memory & VS_MEMORY_MAPPED;
	struct v4l2_requestbuffers req = { .count = NBUF, .type = s->type };

	s->memory &= ~VS_MEMORY_MAPPED;
	req.memory = s->memory;
	CHECK(xioctl(s->fd, VIDIOC_REQBUFS, &req) == 0, "REQBUFS %s", s->path);
	s->count = req.count < NBUF ? req.count : NBUF;
	if (s->memory == V4L2_MEMORY_DMABUF) {
		CHECK(exporter, "DMABUF needs -x exporter");
		export_from(exporter, s, fmt);
	} else if (mapped) {
		CHECK(exporter, "mapped memory needs -x/-y: the node whose buffers it is");
		map_from(exporter, s, fmt);
		return;
	}
	for (unsigned int i = 0; i < s->count; i++) {
		struct v4l2_buffer b = { .type = s->type, .index = i,
					 .memory = s->memory };

		CHECK(xioctl(s->fd, VIDIOC_QUERYBUF, &b) == 0, "QUERYBUF");
		if (s->memory == V4L2_MEMORY_MMAP) {
			s->len[i] = b.length;
			s->ptr[i] = mmap(NULL, b.length, PROT_READ | PROT_WRITE,
					 MAP_SHARED, s->fd, b.m.offset);
			CHECK(s->ptr[i] != MAP_FAILED, "mmap");
		} else if (s->memory == V4L2_MEMORY_USERPTR) {
			s->len[i] = fmt->fmt.pix.sizeimage;
			CHECK(posix_memalign(&s->ptr[i], 4096, s->len[i]) == 0, "alloc");
		}
	}
}

static inline void qbuf(struct side *s, unsigned int i, unsigned int bytesused,
		 unsigned int field)
{
	struct v4l2_buffer b = { .type = s->type, .index = i, .memory = s->memory,
				 .bytesused = bytesused, .field = field };

	if (s->memory == V4L2_MEMORY_USERPTR) {
		b.m.userptr = (unsigned long)s->ptr[i];
		b.length = s->len[i];
	} else if (s->memory == V4L2_MEMORY_DMABUF) {
		b.m.fd = s->dmafd[i];
		b.length = s->len[i];
	}
	CHECK(xioctl(s->fd, VIDIOC_QBUF, &b) == 0, "QBUF %s index %u", s->path, i);
}

/* A counter from vstream's sysfs stats of node @dev, or -1 if it has none. */
static inline long long vs_stat(const char *dev, const char *key)
{
	char path[256], k[32];
	long long v, found = -1;
	const char *base = strrchr(dev, '/');
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/video4linux/%s/stats", base ? base + 1 : dev);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fscanf(f, "%31s %lld", k, &v) == 2)
		if (!strcmp(k, key))
			found = v;
	fclose(f);
	return found;
}

#endif
