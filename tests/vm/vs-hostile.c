// SPDX-License-Identifier: GPL-2.0
/*
 * vs-hostile: what a careless or hostile program can do to a vstream pipe.
 * Every case must end in a clean return (0 or an errno the V4L2 spec
 * names), never a crash or hang; the suite checks dmesg afterwards and
 * vs-loopback proves the pipe still streams.
 *
 *   vs-hostile -o OUTPUT -c CAPTURE [-x CAPTURE2] [-g GROUP] [-n FUZZ_CALLS]
 *              [-t FUZZ_SECONDS]
 *
 * Groups: buffers fresh userptr mmap mount race formats lifecycle stress
 * fuzz (default all).  race wants -x: a second reader of the same pipe;
 * mount needs root.
 * Prints one line per group: cases tried, cases failed.
 */
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <time.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#include "vs-util.h"

static const char *group;
static unsigned int tried, failed, total_failed;
static const char *out_path, *cap_path, *cap2_path;

/* errno is read after @cond, so it is the one @cond's call left */
#define EXPECT(cond, ...) do {						\
	tried++;							\
	if (!(cond)) {							\
		int e_ = errno;						\
		failed++;						\
		fprintf(stderr, "FAIL [%s] ", group);			\
		fprintf(stderr, __VA_ARGS__);				\
		fprintf(stderr, " (errno %d: %s)\n", e_, strerror(e_));	\
	}								\
} while (0)

/* The errno of one ioctl, 0 on success. */
static int err_of(int fd, unsigned long req, void *arg)
{
	return xioctl(fd, req, arg) ? errno : 0;
}

static void begin(const char *name)
{
	group = name;
	tried = failed = 0;
}

static void end(void)
{
	printf("vs-hostile: %-9s %5u cases, %u failed\n", group, tried, failed);
	total_failed += failed;
}

static int open_node(const char *path, int flags)
{
	int fd = open(path, flags | O_NONBLOCK);

	CHECK(fd >= 0, "open %s", path);
	return fd;
}

static void small_format(int fd, int type)
{
	struct v4l2_format f = { .type = type };

	f.fmt.pix.width = 320;
	f.fmt.pix.height = 240;
	f.fmt.pix.pixelformat = V4L2_PIX_FMT_YUYV;
	f.fmt.pix.field = V4L2_FIELD_NONE;
	CHECK(xioctl(fd, VIDIOC_S_FMT, &f) == 0, "S_FMT");
}

static int reqbufs(int fd, int type, int memory, unsigned int count, unsigned int *got)
{
	struct v4l2_requestbuffers r = { .count = count, .type = type, .memory = memory };
	int e = err_of(fd, VIDIOC_REQBUFS, &r);

	if (got)
		*got = r.count;
	return e;
}

static int qbuf_raw(int fd, int type, int memory, unsigned int index, unsigned long ptr,
		    unsigned int length)
{
	struct v4l2_buffer b = { .type = type, .memory = memory, .index = index };

	if (memory == V4L2_MEMORY_USERPTR) {
		b.m.userptr = ptr;
		b.length = length;
	} else if (memory == V4L2_MEMORY_DMABUF) {
		b.m.fd = (int)ptr;
		b.length = length;
	}
	if (type == V4L2_BUF_TYPE_VIDEO_OUTPUT)
		b.bytesused = length;
	return err_of(fd, VIDIOC_QBUF, &b);
}

/* Wait up to @ms for a buffer and dequeue it; returns its index or -1. */
static int dq_wait(int fd, int type, int memory, int ms)
{
	struct pollfd p = { .fd = fd, .events = type == V4L2_BUF_TYPE_VIDEO_OUTPUT ?
					       POLLOUT : POLLIN };
	struct v4l2_buffer b = { .type = type, .memory = memory };

	if (poll(&p, 1, ms) <= 0 || xioctl(fd, VIDIOC_DQBUF, &b))
		return -1;
	return b.index;
}

static void buffers(void)
{
	static const unsigned int counts[] = { 0, 1, 32, 1000 };
	int cap = open_node(cap_path, O_RDWR), out = open_node(out_path, O_RDWR);
	const int C = V4L2_BUF_TYPE_VIDEO_CAPTURE, M = V4L2_MEMORY_MMAP;
	struct v4l2_buffer b;
	unsigned int got, i;
	int t;

	begin("buffers");
	small_format(cap, C);
	EXPECT(reqbufs(cap, 0, M, 2, NULL) == EINVAL, "REQBUFS type 0");
	EXPECT(reqbufs(cap, 99, M, 2, NULL) == EINVAL, "REQBUFS type 99");
	EXPECT(reqbufs(cap, V4L2_BUF_TYPE_VIDEO_OUTPUT, M, 2, NULL) == EINVAL,
	       "REQBUFS output type on a capture node");
	EXPECT(reqbufs(out, C, M, 2, NULL) == EINVAL, "REQBUFS capture type on an output node");
	EXPECT(reqbufs(cap, C, 0, 2, NULL) == EINVAL, "REQBUFS memory 0");
	EXPECT(reqbufs(cap, C, 99, 2, NULL) == EINVAL, "REQBUFS memory 99");
	for (i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		int e = reqbufs(cap, C, M, counts[i], &got);

		EXPECT(e == 0 && (counts[i] ? got >= 2 && got <= 32 : got == 0),
		       "REQBUFS count %u gave %u", counts[i], got);
	}
	EXPECT(reqbufs(cap, C, M, 2, &got) == 0 && got == 2, "REQBUFS 2");
	memset(&b, 0, sizeof(b));
	b.type = C;
	b.index = got;
	EXPECT(err_of(cap, VIDIOC_QUERYBUF, &b) == EINVAL, "QUERYBUF index past the end");
	b.index = 0xffffffff;
	EXPECT(err_of(cap, VIDIOC_QUERYBUF, &b) == EINVAL, "QUERYBUF index -1");
	b.index = 0;
	b.type = V4L2_BUF_TYPE_VIDEO_OUTPUT;
	EXPECT(err_of(cap, VIDIOC_QUERYBUF, &b) == EINVAL, "QUERYBUF wrong type");
	EXPECT(qbuf_raw(cap, C, M, 2, 0, 0) == EINVAL, "QBUF index past the end");
	EXPECT(qbuf_raw(cap, C, M, 1u << 31, 0, 0) == EINVAL, "QBUF huge index");
	EXPECT(qbuf_raw(cap, C, V4L2_MEMORY_USERPTR, 0, 4096, 4096) == EINVAL,
	       "QBUF USERPTR into an MMAP queue");
	EXPECT(qbuf_raw(cap, C, 77, 0, 0, 0) == EINVAL, "QBUF memory 77");
	EXPECT(qbuf_raw(cap, V4L2_BUF_TYPE_VIDEO_OUTPUT, M, 0, 0, 0) == EINVAL,
	       "QBUF wrong type");
	memset(&b, 0, sizeof(b));
	b.type = C;
	b.memory = M;
	EXPECT(err_of(cap, VIDIOC_DQBUF, &b) == EINVAL, "DQBUF before STREAMON");
	EXPECT(qbuf_raw(cap, C, M, 0, 0, 0) == 0, "QBUF 0");
	EXPECT(qbuf_raw(cap, C, M, 0, 0, 0) == EINVAL, "QBUF of an already queued buffer");
	t = V4L2_BUF_TYPE_VIDEO_OUTPUT;
	EXPECT(err_of(cap, VIDIOC_STREAMON, &t) == EINVAL, "STREAMON wrong type");
	EXPECT(reqbufs(cap, C, M, 0, NULL) == 0, "REQBUFS 0 with a buffer queued");
	EXPECT(reqbufs(cap, C, M, 2, NULL) == 0, "REQBUFS 2 again");
	t = C;
	EXPECT(err_of(cap, VIDIOC_STREAMON, &t) == 0, "STREAMON with nothing queued");
	EXPECT(err_of(cap, VIDIOC_DQBUF, &b) == EAGAIN, "DQBUF with nothing queued");
	EXPECT(err_of(cap, VIDIOC_STREAMON, &t) == 0, "STREAMON twice");
	EXPECT(qbuf_raw(cap, C, M, 1, 0, 0) == 0, "QBUF while streaming");
	EXPECT(dq_wait(cap, C, M, 3000) == 1, "the idle pattern arrives");
	EXPECT(err_of(cap, VIDIOC_STREAMOFF, &t) == 0, "STREAMOFF");
	EXPECT(err_of(cap, VIDIOC_STREAMOFF, &t) == 0, "STREAMOFF twice");
	close(cap);
	close(out);
	end();
}

/*
 * Map @count MMAP buffers of a new opener of @path; with @fill write @fill
 * into each, else count the bytes that are not zero.
 */
static unsigned long fresh_opener(const char *path, int type, unsigned int count, int fill)
{
	int fd = open_node(path, O_RDWR);
	const int M = V4L2_MEMORY_MMAP;
	unsigned long dirty = 0, j;
	unsigned int i, got;

	small_format(fd, type);
	EXPECT(reqbufs(fd, type, M, count, &got) == 0 && got == count, "REQBUFS %u", count);
	for (i = 0; i < got; i++) {
		struct v4l2_buffer b = { .type = type, .memory = M, .index = i };
		uint8_t *p;

		CHECK(xioctl(fd, VIDIOC_QUERYBUF, &b) == 0, "QUERYBUF");
		p = mmap(NULL, b.length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, b.m.offset);
		CHECK(p != MAP_FAILED, "mmap");
		if (fill)
			memset(p, fill, b.length);
		for (j = 0; !fill && j < b.length; j++)
			dirty += p[j] != 0;
		munmap(p, b.length);
	}
	close(fd);
	return dirty;
}

/* Frame memory never crosses openers: new buffers read as zeros. */
static void fresh(void)
{
	const int O = V4L2_BUF_TYPE_VIDEO_OUTPUT;
	unsigned long dirty;

	begin("fresh");
	fresh_opener(out_path, O, 4, 0x5a);
	dirty = fresh_opener(out_path, O, 4, 0);
	EXPECT(dirty == 0, "a new producer's buffers show %lu bytes of the last one's", dirty);
	end();
}

static void userptr(void)
{
	int cap = open_node(cap_path, O_RDWR);
	const int C = V4L2_BUF_TYPE_VIDEO_CAPTURE, U = V4L2_MEMORY_USERPTR;
	long page = sysconf(_SC_PAGESIZE);
	size_t size = 320 * 240 * 2, len = (size + page - 1) / page * page + page;
	uint8_t *mem, *ro, *gone;
	int e, t = C, nul = open("/dev/null", O_RDONLY);

	begin("userptr");
	small_format(cap, C);
	mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ro = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	gone = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(mem != MAP_FAILED && ro != MAP_FAILED && gone != MAP_FAILED, "mmap anon");
	munmap(gone, len);

	/* each case on a fresh queue, so one that is taken cannot hide the next */
#define FRESH() EXPECT(reqbufs(cap, C, U, 0, NULL) == 0 && reqbufs(cap, C, U, 2, NULL) == 0, \
		       "REQBUFS USERPTR")
	FRESH();
	e = qbuf_raw(cap, C, U, 0, 0, size);
	EXPECT(e == EFAULT || e == EINVAL, "QBUF NULL userptr");
	FRESH();
	e = qbuf_raw(cap, C, U, 0, (unsigned long)mem + 1, size);
	EXPECT(e == 0 || e == EINVAL || e == EFAULT, "QBUF unaligned userptr");
	FRESH();
	EXPECT(qbuf_raw(cap, C, U, 0, (unsigned long)mem, size / 2) == EINVAL,
	       "QBUF userptr too small");
	FRESH();
	/* 6.1's vb2 pins with FOLL_FORCE: read-only private memory may be
	 * taken (the frame goes to a copy-on-write page); 6.2+ refuses it */
	e = qbuf_raw(cap, C, U, 0, (unsigned long)ro, size);
	EXPECT(e == 0 || e == EFAULT, "QBUF read-only memory for a capture");
	FRESH();
	EXPECT(qbuf_raw(cap, C, U, 0, (unsigned long)gone, size) == EFAULT,
	       "QBUF unmapped userptr");
	FRESH();
	/* a range that wraps: 6.1's pinning says EFAULT, 6.12's EOVERFLOW */
	e = qbuf_raw(cap, C, U, 0, ~0UL - 4095, size);
	EXPECT(e == EFAULT || e == EOVERFLOW, "QBUF kernel address");
	FRESH();
#undef FRESH
	/* memory freed after QBUF: the driver pinned it, the frame lands */
	EXPECT(qbuf_raw(cap, C, U, 0, (unsigned long)mem, size) == 0, "QBUF valid userptr");
	munmap(mem, len);
	EXPECT(err_of(cap, VIDIOC_STREAMON, &t) == 0, "STREAMON");
	EXPECT(dq_wait(cap, C, U, 3000) == 0, "frame into memory freed after QBUF");
	EXPECT(err_of(cap, VIDIOC_STREAMOFF, &t) == 0, "STREAMOFF");
	EXPECT(reqbufs(cap, C, V4L2_MEMORY_DMABUF, 2, NULL) == 0, "REQBUFS DMABUF");
	EXPECT(qbuf_raw(cap, C, V4L2_MEMORY_DMABUF, 0, (unsigned long)-1, size) == EINVAL,
	       "QBUF dmabuf fd -1");
	EXPECT(qbuf_raw(cap, C, V4L2_MEMORY_DMABUF, 0, nul, size) == EINVAL,
	       "QBUF dmabuf fd of /dev/null");
	EXPECT(qbuf_raw(cap, C, V4L2_MEMORY_DMABUF, 0, 1000, size) == EINVAL,
	       "QBUF dmabuf fd not open");
	munmap(ro, len);
	close(nul);
	close(cap);
	end();
}

static void mmaps(void)
{
	int cap = open_node(cap_path, O_RDWR), rd, out = open_node(out_path, O_RDWR);
	const int C = V4L2_BUF_TYPE_VIDEO_CAPTURE, M = V4L2_MEMORY_MMAP;
	struct v4l2_buffer b = { .type = C, .memory = M, .index = 1 };
	long page = sysconf(_SC_PAGESIZE);
	void *p;
	volatile uint8_t x;

	begin("mmap");
	small_format(cap, C);
	EXPECT(reqbufs(cap, C, M, 2, NULL) == 0, "REQBUFS");
	EXPECT(err_of(cap, VIDIOC_QUERYBUF, &b) == 0, "QUERYBUF");
	p = mmap(NULL, page, PROT_READ, MAP_SHARED, cap, 0xdead0000);
	EXPECT(p == MAP_FAILED && errno == EINVAL, "mmap forged offset");
	p = mmap(NULL, page, PROT_READ, MAP_SHARED, cap, b.m.offset + page);
	EXPECT(p == MAP_FAILED && errno == EINVAL, "mmap inside a buffer");
	p = mmap(NULL, b.length + 16 * page, PROT_READ, MAP_SHARED, cap, b.m.offset);
	EXPECT(p == MAP_FAILED && errno == EINVAL, "mmap beyond the buffer");
	p = mmap(NULL, b.length, PROT_READ, MAP_PRIVATE, cap, b.m.offset);
	EXPECT(p == MAP_FAILED && errno == EINVAL, "mmap MAP_PRIVATE");
	rd = open_node(cap_path, O_RDONLY);
	p = mmap(NULL, b.length, PROT_READ | PROT_WRITE, MAP_SHARED, rd, b.m.offset);
	EXPECT(p == MAP_FAILED && errno == EACCES, "writable mapping from a read-only open");
	close(rd);
	p = mmap(NULL, b.length, PROT_READ, MAP_SHARED, cap, b.m.offset);
	EXPECT(p != MAP_FAILED, "mmap the buffer");
	/* REQBUFS(0) while mapped: the memory lives on until munmap */
	EXPECT(reqbufs(cap, C, M, 0, NULL) == 0, "REQBUFS 0 while mapped");
	if (p != MAP_FAILED) {
		x = ((uint8_t *)p)[b.length - 1];
		(void)x;
		EXPECT(munmap(p, b.length) == 0, "munmap after REQBUFS 0");
	}
	p = mmap(NULL, b.length, PROT_READ, MAP_SHARED, cap, b.m.offset);
	EXPECT(p == MAP_FAILED && errno == EINVAL, "mmap after REQBUFS 0");
	small_format(out, V4L2_BUF_TYPE_VIDEO_OUTPUT);
	b.type = V4L2_BUF_TYPE_VIDEO_OUTPUT;
	EXPECT(reqbufs(out, b.type, M, 2, NULL) == 0 && err_of(out, VIDIOC_QUERYBUF, &b) == 0,
	       "output REQBUFS");
	p = mmap(NULL, b.length, PROT_READ, MAP_SHARED, out, b.m.offset);
	EXPECT(p == MAP_FAILED && errno == EINVAL, "read-only mapping of an output buffer");
	close(out);
	close(cap);
	end();
}

/*
 * A buffer mapped through a second device node, in a tmpfs a container
 * might have as its /dev: once that opener has unmapped and closed, the
 * tmpfs unmounts with no inode of it left busy (the kernel says "Busy
 * inodes after unmount" if one is), and the buffer's owner frees it
 * afterwards without touching that file system.
 */
static void mounts(void)
{
	const char *dir = "/tmp/vs-hostile-dev", *node = "/tmp/vs-hostile-dev/video";
	const int C = V4L2_BUF_TYPE_VIDEO_CAPTURE, M = V4L2_MEMORY_MMAP;
	struct v4l2_buffer b = { .type = C, .memory = M, .index = 0 };
	int cap = open_node(cap_path, O_RDWR), kmsg, other;
	char rec[1024];
	struct stat st;
	ssize_t n;
	void *p;

	begin("mount");
	kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	CHECK(kmsg >= 0 && lseek(kmsg, 0, SEEK_END) >= 0, "/dev/kmsg");
	CHECK(stat(cap_path, &st) == 0, "stat %s", cap_path);
	small_format(cap, C);
	EXPECT(reqbufs(cap, C, M, 2, NULL) == 0, "REQBUFS");
	EXPECT(err_of(cap, VIDIOC_QUERYBUF, &b) == 0, "QUERYBUF");
	mkdir(dir, 0755);
	CHECK(mount("tmpfs", dir, "tmpfs", 0, NULL) == 0, "mount tmpfs on %s", dir);
	CHECK(mknod(node, S_IFCHR | 0600, st.st_rdev) == 0, "mknod %s", node);
	other = open(node, O_RDWR);
	EXPECT(other >= 0, "open %s", node);
	p = mmap(NULL, b.length, PROT_READ, MAP_SHARED, other, b.m.offset);
	EXPECT(p != MAP_FAILED, "map the buffer through %s", node);
	if (p != MAP_FAILED) {
		EXPECT(((volatile uint8_t *)p)[0] == 0, "a new buffer reads as zeros");
		munmap(p, b.length);
	}
	close(other);
	EXPECT(umount(dir) == 0, "umount %s after its opener closed", dir);
	rmdir(dir);
	EXPECT(reqbufs(cap, C, M, 0, NULL) == 0, "REQBUFS(0) after the umount");
	close(cap);
	while ((n = read(kmsg, rec, sizeof(rec) - 1)) > 0 || (n < 0 && errno == EPIPE)) {
		if (n <= 0)
			continue;
		rec[n] = 0;
		EXPECT(!strstr(rec, "Busy inodes"), "the kernel says: %s", rec);
	}
	close(kmsg);
	end();
}

/*
 * A producer racing itself while the pipe copies its frames: one thread
 * queues and dequeues, another maps each buffer anew (queued or not),
 * writes it and unmaps it, punches MADV_DONTNEED holes into the first
 * thread's mappings, and forks children that write the inherited
 * mappings.  A USERPTR reader and a read() reader make the delivery copy
 * from the producer's frames all along.  The kernel must neither crash
 * nor read freed memory (KASAN in the debug lane), and both readers get
 * frames.
 */
struct race {
	int fd;
	unsigned int n;
	size_t len, size;
	uint8_t *ptr[8];
	int stop;
	unsigned int queued, remapped, forks, bad;
};

static void *race_queuer(void *arg)
{
	struct race *r = arg;
	const int O = V4L2_BUF_TYPE_VIDEO_OUTPUT, M = V4L2_MEMORY_MMAP;
	uint8_t v = 0;

	while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
		int k = dq_wait(r->fd, O, M, 100), e;

		if (k < 0)
			continue;
		memset(r->ptr[k], v++, r->size);
		e = qbuf_raw(r->fd, O, M, k, 0, r->size);
		if (e)
			__atomic_add_fetch(&r->bad, 1, __ATOMIC_RELAXED);
		else
			__atomic_add_fetch(&r->queued, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void *race_remapper(void *arg)
{
	struct race *r = arg;
	long page = sysconf(_SC_PAGESIZE);
	unsigned int i = 0;

	while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
		unsigned int k = i++ % r->n;
		struct v4l2_buffer b = { .type = V4L2_BUF_TYPE_VIDEO_OUTPUT,
					 .memory = V4L2_MEMORY_MMAP, .index = k };
		uint8_t *p;
		pid_t pid;

		if (xioctl(r->fd, VIDIOC_QUERYBUF, &b)) {
			__atomic_add_fetch(&r->bad, 1, __ATOMIC_RELAXED);
			continue;
		}
		p = mmap(NULL, b.length, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, b.m.offset);
		if (p == MAP_FAILED) {
			__atomic_add_fetch(&r->bad, 1, __ATOMIC_RELAXED);
			continue;
		}
		memset(p, 0xee, r->size);
		munmap(p, b.length);
		madvise(r->ptr[k] + page, page, MADV_DONTNEED);
		r->ptr[k][page] = 0xdd;
		__atomic_add_fetch(&r->remapped, 1, __ATOMIC_RELAXED);
		if (i % 16)
			continue;
		pid = fork();
		if (pid == 0) {
			for (unsigned int j = 0; j < r->n; j++)
				memset(r->ptr[j], 0xcc, r->size);
			_exit(0);
		}
		if (pid > 0) {
			waitpid(pid, NULL, 0);
			r->forks++;
		}
	}
	return NULL;
}

/* A child reading @path with USERPTR buffers (or read()) until killed. */
static pid_t race_reader(const char *path, int use_read, const char *done)
{
	const int C = V4L2_BUF_TYPE_VIDEO_CAPTURE, U = V4L2_MEMORY_USERPTR;
	size_t size = 320 * 240 * 2;
	unsigned long frames = 0;
	pid_t pid = fork();
	int fd, t = C;
	uint8_t *mem;

	CHECK(pid >= 0, "fork");
	if (pid)
		return pid;
	fd = open(path, O_RDWR);
	CHECK(fd >= 0, "open %s", path);
	small_format(fd, C);
	mem = malloc(4 * size + 4096);
	CHECK(mem, "malloc");
	if (!use_read) {
		CHECK(reqbufs(fd, C, U, 4, NULL) == 0, "REQBUFS USERPTR");
		for (unsigned int i = 0; i < 4; i++)
			CHECK(qbuf_raw(fd, C, U, i, (unsigned long)(mem + i * size), size) == 0,
			      "QBUF USERPTR");
		CHECK(xioctl(fd, VIDIOC_STREAMON, &t) == 0, "STREAMON");
	}
	for (;;) {
		if (use_read) {
			if (read(fd, mem, size) == (ssize_t)size)
				frames++;
		} else {
			struct v4l2_buffer b = { .type = C, .memory = U };

			if (xioctl(fd, VIDIOC_DQBUF, &b) == 0) {
				frames++;
				qbuf_raw(fd, C, U, b.index, b.m.userptr, size);
			}
		}
		if (frames == 10) {
			int d = open(done, O_CREAT | O_WRONLY, 0644);

			close(d);
		}
	}
}

static void race(double secs)
{
	const int O = V4L2_BUF_TYPE_VIDEO_OUTPUT, M = V4L2_MEMORY_MMAP;
	const char *done[2] = { "/tmp/vs-race-userptr", "/tmp/vs-race-read" };
	struct race r = { .size = 320 * 240 * 2 };
	pthread_t q, m;
	pid_t rd[2];
	int t = O;

	begin("race");
	CHECK(cap2_path, "the race group needs -x CAPTURE2");
	unlink(done[0]);
	unlink(done[1]);
	rd[0] = race_reader(cap_path, 0, done[0]);
	rd[1] = race_reader(cap2_path, 1, done[1]);
	r.fd = open_node(out_path, O_RDWR);
	small_format(r.fd, O);
	CHECK(reqbufs(r.fd, O, M, 4, &r.n) == 0 && r.n >= 2 && r.n <= 8, "REQBUFS");
	for (unsigned int i = 0; i < r.n; i++) {
		struct v4l2_buffer b = { .type = O, .memory = M, .index = i };

		CHECK(xioctl(r.fd, VIDIOC_QUERYBUF, &b) == 0, "QUERYBUF");
		r.len = b.length;
		r.ptr[i] = mmap(NULL, b.length, PROT_READ | PROT_WRITE, MAP_SHARED, r.fd,
				b.m.offset);
		CHECK(r.ptr[i] != MAP_FAILED, "mmap");
		CHECK(qbuf_raw(r.fd, O, M, i, 0, r.size) == 0, "QBUF");
	}
	CHECK(xioctl(r.fd, VIDIOC_STREAMON, &t) == 0, "STREAMON");
	pthread_create(&q, NULL, race_queuer, &r);
	pthread_create(&m, NULL, race_remapper, &r);
	usleep(secs * 1e6);
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELAXED);
	pthread_join(q, NULL);
	pthread_join(m, NULL);
	for (int i = 0; i < 2; i++) {
		kill(rd[i], SIGKILL);
		waitpid(rd[i], NULL, 0);
		EXPECT(access(done[i], F_OK) == 0, "the %s reader got no 10 frames",
		       i ? "read()" : "USERPTR");
	}
	EXPECT(!r.bad, "%u of the producer's calls failed", r.bad);
	EXPECT(r.queued > 10 && r.remapped > 10 && r.forks > 0,
	       "the race did not run: %u frames, %u remaps, %u forks", r.queued, r.remapped,
	       r.forks);
	printf("vs-hostile: race: %u frames queued, %u remaps, %u forks in %.0f s\n",
	       r.queued, r.remapped, r.forks, secs);
	EXPECT(err_of(r.fd, VIDIOC_STREAMOFF, &t) == 0, "STREAMOFF");
	for (unsigned int i = 0; i < r.n; i++)
		munmap(r.ptr[i], r.len);
	close(r.fd);
	end();
}

/* Sane result of TRY/S_FMT: sizes in range, lines long enough, known format. */
static int sane(const struct v4l2_pix_format *p, int fd, int type)
{
	struct v4l2_fmtdesc d = { .type = type };
	int known = 0;

	for (d.index = 0; !xioctl(fd, VIDIOC_ENUM_FMT, &d); d.index++)
		known |= d.pixelformat == p->pixelformat;
	if (p->pixelformat == V4L2_PIX_FMT_MJPEG)	/* compressed: no lines */
		return known && p->bytesperline == 0 && p->sizeimage > 0;
	return known && p->width >= 16 && p->height >= 16 && p->width <= 8192 &&
	       p->height <= 8192 && p->bytesperline >= p->width &&
	       p->sizeimage >= p->bytesperline * p->height;
}

static void formats(void)
{
	static const struct { unsigned int w, h; uint32_t fourcc; unsigned int bpl; } cases[] = {
		{ 0, 0, V4L2_PIX_FMT_YUYV, 0 }, { 1, 1, V4L2_PIX_FMT_YUYV, 0 },
		{ 1919, 1079, V4L2_PIX_FMT_NV12, 0 }, { 333, 17, V4L2_PIX_FMT_YUV420, 0 },
		{ 65535, 65535, V4L2_PIX_FMT_YUYV, 0 }, { 640, 480, v4l2_fourcc('A', 'B', 'C', 'D'), 0 },
		{ 640, 480, V4L2_PIX_FMT_YUYV, 1 }, { 640, 480, V4L2_PIX_FMT_RGB24, 0xffffffff },
		{ 0xffffffff, 0xffffffff, V4L2_PIX_FMT_MJPEG, 0 },
	};
	const char *paths[2] = { out_path, cap_path };
	const int types[2] = { V4L2_BUF_TYPE_VIDEO_OUTPUT, V4L2_BUF_TYPE_VIDEO_CAPTURE };

	begin("formats");
	for (int n = 0; n < 2; n++) {
		int fd = open_node(paths[n], O_RDWR), t = types[n];
		struct v4l2_streamparm parm = { .type = t };
		struct v4l2_fract *tpf = t == V4L2_BUF_TYPE_VIDEO_OUTPUT ?
			&parm.parm.output.timeperframe : &parm.parm.capture.timeperframe;
		struct v4l2_format f;

		for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			for (int s = 0; s < 2; s++) {
				memset(&f, 0, sizeof(f));
				f.type = t;
				f.fmt.pix.width = cases[i].w;
				f.fmt.pix.height = cases[i].h;
				f.fmt.pix.pixelformat = cases[i].fourcc;
				f.fmt.pix.bytesperline = cases[i].bpl;
				f.fmt.pix.field = 1234;
				EXPECT(err_of(fd, s ? VIDIOC_S_FMT : VIDIOC_TRY_FMT, &f) == 0 &&
				       sane(&f.fmt.pix, fd, t),
				       "%s %ux%u: got %ux%u bpl %u size %u", s ? "S_FMT" : "TRY_FMT",
				       cases[i].w, cases[i].h, f.fmt.pix.width, f.fmt.pix.height,
				       f.fmt.pix.bytesperline, f.fmt.pix.sizeimage);
			}
		}
		f.type = t == V4L2_BUF_TYPE_VIDEO_OUTPUT ? V4L2_BUF_TYPE_VIDEO_CAPTURE :
							   V4L2_BUF_TYPE_VIDEO_OUTPUT;
		EXPECT(err_of(fd, VIDIOC_TRY_FMT, &f) == EINVAL, "TRY_FMT of the other direction");
		tpf->numerator = 0;
		tpf->denominator = 0;
		EXPECT(err_of(fd, VIDIOC_S_PARM, &parm) == 0 && tpf->numerator &&
		       tpf->denominator, "S_PARM 0/0 gave %u/%u", tpf->numerator,
		       tpf->denominator);
		tpf->numerator = 1;
		tpf->denominator = 100000;
		EXPECT(err_of(fd, VIDIOC_S_PARM, &parm) == 0 && tpf->denominator <= 240 * tpf->numerator,
		       "S_PARM 1/100000 gave %u/%u", tpf->numerator, tpf->denominator);
		/* a format change while the node owns buffers or streams */
		small_format(fd, t);
		EXPECT(reqbufs(fd, t, V4L2_MEMORY_MMAP, 2, NULL) == 0, "REQBUFS");
		f.type = t;
		EXPECT(err_of(fd, VIDIOC_G_FMT, &f) == 0, "G_FMT");
		f.fmt.pix.width = 640;
		EXPECT(err_of(fd, VIDIOC_S_FMT, &f) == EBUSY, "S_FMT with buffers");
		EXPECT(err_of(fd, VIDIOC_STREAMON, &t) == 0, "STREAMON");
		EXPECT(err_of(fd, VIDIOC_S_FMT, &f) == EBUSY, "S_FMT while streaming");
		close(fd);
	}
	end();
}

/* Frames @fd (streaming, type @t) moves in @ms, requeueing each. */
static int frames_in(int fd, int t, int ms)
{
	struct timespec a, b;
	int n = 0;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (;;) {
		int k = dq_wait(fd, t, V4L2_MEMORY_MMAP, 200);

		if (k >= 0) {
			n++;
			qbuf_raw(fd, t, V4L2_MEMORY_MMAP, k, 0,
				 t == V4L2_BUF_TYPE_VIDEO_OUTPUT ? 320 * 240 * 2 : 0);
		}
		clock_gettime(CLOCK_MONOTONIC, &b);
		if ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 > ms)
			return n;
	}
}

struct streamed {
	int fd;
	unsigned int n;
	void *ptr[32];
	size_t len;
};

/* Open, set up and stream @path in this process. */
static void stream_here(struct streamed *s, const char *path, int t)
{
	s->fd = open_node(path, O_RDWR);
	small_format(s->fd, t);
	CHECK(reqbufs(s->fd, t, V4L2_MEMORY_MMAP, 4, &s->n) == 0, "REQBUFS");
	for (unsigned int i = 0; i < s->n; i++) {
		struct v4l2_buffer b = { .type = t, .memory = V4L2_MEMORY_MMAP, .index = i };

		CHECK(xioctl(s->fd, VIDIOC_QUERYBUF, &b) == 0, "QUERYBUF");
		s->len = b.length;
		s->ptr[i] = mmap(NULL, b.length, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd,
				 b.m.offset);
		CHECK(s->ptr[i] != MAP_FAILED, "map");
		CHECK(qbuf_raw(s->fd, t, V4L2_MEMORY_MMAP, i, 0,
			       t == V4L2_BUF_TYPE_VIDEO_OUTPUT ? 320 * 240 * 2 : 0) == 0, "QBUF");
	}
	CHECK(xioctl(s->fd, VIDIOC_STREAMON, &t) == 0, "STREAMON");
}

/* A mapping keeps the file, and so the queue, alive: unmap, then close. */
static void unstream(struct streamed *s)
{
	for (unsigned int i = 0; i < s->n; i++)
		munmap(s->ptr[i], s->len);
	close(s->fd);
}

/* A child that streams @path (output: frames; capture: reads) until killed. */
static pid_t streamer(const char *path, int output, int close_early)
{
	int t = output ? V4L2_BUF_TYPE_VIDEO_OUTPUT : V4L2_BUF_TYPE_VIDEO_CAPTURE;
	struct streamed s;
	pid_t pid = fork();

	CHECK(pid >= 0, "fork");
	if (pid)
		return pid;
	stream_here(&s, path, t);
	if (close_early)
		_exit(0);	/* buffers in flight, no STREAMOFF, no munmap */
	for (;;)
		frames_in(s.fd, t, 1000);
}

static void lifecycle(void)
{
	const int C = V4L2_BUF_TYPE_VIDEO_CAPTURE, O = V4L2_BUF_TYPE_VIDEO_OUTPUT;
	struct streamed s;
	int status;
	pid_t pid;

	begin("lifecycle");
	for (int i = 0; i < 2; i++) {
		pid = streamer(i ? out_path : cap_path, i, 1);
		EXPECT(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
		       !WEXITSTATUS(status), "exit without STREAMOFF (%s)", i ? "output" : "capture");
	}
	/* the producer dies; its reader keeps streaming (the idle frames) */
	pid = streamer(out_path, 1, 0);
	usleep(300000);
	stream_here(&s, cap_path, C);
	EXPECT(frames_in(s.fd, C, 1000) > 0, "reader streams from the producer");
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	EXPECT(frames_in(s.fd, C, 1500) > 3, "reader streams after the producer was killed");
	unstream(&s);
	/* the reader dies; the producer keeps streaming */
	stream_here(&s, out_path, O);
	pid = streamer(cap_path, 0, 0);
	usleep(300000);
	EXPECT(frames_in(s.fd, O, 1000) > 0, "producer streams with a reader");
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	EXPECT(frames_in(s.fd, O, 1000) > 3, "producer streams after the reader was killed");
	unstream(&s);
	end();
}

struct hammer {
	int fd;
	int stop;
	unsigned int calls, bad;
};

static void *hammer_thread(void *arg)
{
	struct hammer *h = arg;
	unsigned int seed = (unsigned int)(uintptr_t)&seed;

	while (!__atomic_load_n(&h->stop, __ATOMIC_RELAXED)) {
		struct v4l2_format f = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
		struct v4l2_capability cap;
		int t = V4L2_BUF_TYPE_VIDEO_CAPTURE, e = 0;

		switch (rand_r(&seed) % 8) {
		case 0: e = err_of(h->fd, VIDIOC_QUERYCAP, &cap); break;
		case 1: e = err_of(h->fd, VIDIOC_G_FMT, &f); break;
		case 2: e = reqbufs(h->fd, t, V4L2_MEMORY_MMAP, rand_r(&seed) % 5, NULL); break;
		case 3: e = qbuf_raw(h->fd, t, V4L2_MEMORY_MMAP, rand_r(&seed) % 4, 0, 0); break;
		case 4: dq_wait(h->fd, t, V4L2_MEMORY_MMAP, 0); break;
		case 5: e = err_of(h->fd, VIDIOC_STREAMON, &t); break;
		case 6: e = err_of(h->fd, VIDIOC_STREAMOFF, &t); break;
		case 7: e = err_of(h->fd, VIDIOC_TRY_FMT, &f); break;
		}
		__atomic_add_fetch(&h->calls, 1, __ATOMIC_RELAXED);
		if (e && e != EINVAL && e != EBUSY && e != EAGAIN && e != ENOMEM)
			__atomic_add_fetch(&h->bad, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void stress(unsigned int cycles)
{
	struct hammer h = { 0 };
	pthread_t th[4];

	begin("stress");
	for (unsigned int i = 0; i < cycles; i++) {
		const char *path = i & 1 ? out_path : cap_path;
		int t = i & 1 ? V4L2_BUF_TYPE_VIDEO_OUTPUT : V4L2_BUF_TYPE_VIDEO_CAPTURE;
		int fd = open_node(path, O_RDWR), ok = 1;
		struct v4l2_buffer b = { .type = t, .memory = V4L2_MEMORY_MMAP };
		void *p[2] = { MAP_FAILED, MAP_FAILED };
		unsigned int n;

		small_format(fd, t);
		ok &= reqbufs(fd, t, V4L2_MEMORY_MMAP, 2, &n) == 0 && n == 2;
		for (b.index = 0; ok && b.index < 2; b.index++) {
			ok &= xioctl(fd, VIDIOC_QUERYBUF, &b) == 0;
			p[b.index] = mmap(NULL, b.length, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
					  b.m.offset);
			ok &= p[b.index] != MAP_FAILED;
			ok &= qbuf_raw(fd, t, V4L2_MEMORY_MMAP, b.index, 0,
				       i & 1 ? 320 * 240 * 2 : 0) == 0;
		}
		ok &= xioctl(fd, VIDIOC_STREAMON, &t) == 0;
		close(fd);	/* still streaming, still mapped */
		for (int k = 0; k < 2; k++)
			if (p[k] != MAP_FAILED)
				munmap(p[k], b.length);
		EXPECT(ok, "open/REQBUFS/mmap/STREAMON/close cycle %u", i);
	}
	h.fd = open_node(cap_path, O_RDWR);
	small_format(h.fd, V4L2_BUF_TYPE_VIDEO_CAPTURE);
	for (int i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, hammer_thread, &h);
	sleep(2);
	__atomic_store_n(&h.stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	close(h.fd);
	EXPECT(!h.bad, "%u of %u racing ioctls gave an unexpected errno", h.bad, h.calls);
	printf("vs-hostile: stress: %u ioctls from 4 threads on one fd in 2 s\n", h.calls);
	end();
}

/* Every ioctl of the V4L2 API, for the fuzzer. */
static const unsigned long v4l2_ioctls[] = {
	VIDIOC_QUERYCAP, VIDIOC_ENUM_FMT, VIDIOC_G_FMT, VIDIOC_S_FMT, VIDIOC_REQBUFS,
	VIDIOC_QUERYBUF, VIDIOC_G_FBUF, VIDIOC_S_FBUF, VIDIOC_OVERLAY, VIDIOC_QBUF,
	VIDIOC_EXPBUF, VIDIOC_DQBUF, VIDIOC_STREAMON, VIDIOC_STREAMOFF, VIDIOC_G_PARM,
	VIDIOC_S_PARM, VIDIOC_G_STD, VIDIOC_S_STD, VIDIOC_ENUMSTD, VIDIOC_ENUMINPUT,
	VIDIOC_G_CTRL, VIDIOC_S_CTRL, VIDIOC_G_TUNER, VIDIOC_S_TUNER, VIDIOC_G_AUDIO,
	VIDIOC_S_AUDIO, VIDIOC_QUERYCTRL, VIDIOC_QUERYMENU, VIDIOC_G_INPUT, VIDIOC_S_INPUT,
	VIDIOC_G_EDID, VIDIOC_S_EDID, VIDIOC_G_OUTPUT, VIDIOC_S_OUTPUT, VIDIOC_ENUMOUTPUT,
	VIDIOC_G_AUDOUT, VIDIOC_S_AUDOUT, VIDIOC_G_MODULATOR, VIDIOC_S_MODULATOR,
	VIDIOC_G_FREQUENCY, VIDIOC_S_FREQUENCY, VIDIOC_CROPCAP, VIDIOC_G_CROP, VIDIOC_S_CROP,
	VIDIOC_G_JPEGCOMP, VIDIOC_S_JPEGCOMP, VIDIOC_QUERYSTD, VIDIOC_TRY_FMT,
	VIDIOC_ENUMAUDIO, VIDIOC_ENUMAUDOUT, VIDIOC_G_PRIORITY, VIDIOC_S_PRIORITY,
	VIDIOC_G_SLICED_VBI_CAP, VIDIOC_LOG_STATUS, VIDIOC_G_EXT_CTRLS, VIDIOC_S_EXT_CTRLS,
	VIDIOC_TRY_EXT_CTRLS, VIDIOC_ENUM_FRAMESIZES, VIDIOC_ENUM_FRAMEINTERVALS,
	VIDIOC_G_ENC_INDEX, VIDIOC_ENCODER_CMD, VIDIOC_TRY_ENCODER_CMD, VIDIOC_S_HW_FREQ_SEEK,
	VIDIOC_CREATE_BUFS, VIDIOC_PREPARE_BUF, VIDIOC_G_SELECTION, VIDIOC_S_SELECTION,
	VIDIOC_DECODER_CMD, VIDIOC_TRY_DECODER_CMD, VIDIOC_ENUM_DV_TIMINGS,
	VIDIOC_QUERY_DV_TIMINGS, VIDIOC_DV_TIMINGS_CAP, VIDIOC_ENUM_FREQ_BANDS,
	VIDIOC_DBG_G_CHIP_INFO, VIDIOC_QUERY_EXT_CTRL, VIDIOC_S_DV_TIMINGS,
	VIDIOC_G_DV_TIMINGS, VIDIOC_DQEVENT, VIDIOC_SUBSCRIBE_EVENT,
	VIDIOC_UNSUBSCRIBE_EVENT,
};

static void fuzz(const char *path, unsigned int calls, double secs, unsigned int seed)
{
	const unsigned int n = sizeof(v4l2_ioctls) / sizeof(v4l2_ioctls[0]);
	unsigned int i, ok = 0, hung = 0;
	struct timespec a, b;
	int fd = -1;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < calls; i++) {
		unsigned long req;
		uint8_t arg[4096];
		uint32_t *w = (uint32_t *)arg;
		struct timespec c0, c1;

		if (i % 256 == 0) {
			if (fd >= 0)
				close(fd);
			fd = open_node(path, O_RDWR);
		}
		for (unsigned int k = 0; k < sizeof(arg) / 4; k++)
			w[k] = rand_r(&seed);
		/* half the calls start with a plausible buffer type and small numbers */
		if (rand_r(&seed) & 1) {
			w[0] = 1 + rand_r(&seed) % 2;
			w[1] %= 64;
			w[2] %= 64;
		}
		req = v4l2_ioctls[rand_r(&seed) % n];
		if (i % 16 == 15)	/* now and then a command nobody defined */
			req = _IOC(rand_r(&seed) % 4, 'V', 100 + rand_r(&seed) % 156,
				   rand_r(&seed) % 512);
		clock_gettime(CLOCK_MONOTONIC, &c0);
		ok += ioctl(fd, req, arg) == 0;
		clock_gettime(CLOCK_MONOTONIC, &c1);
		/* O_NONBLOCK: nothing may block for long */
		if (c1.tv_sec - c0.tv_sec > 2) {
			hung++;
			fprintf(stderr, "FAIL [fuzz] ioctl %#lx took %lds\n", req,
				(long)(c1.tv_sec - c0.tv_sec));
		}
		clock_gettime(CLOCK_MONOTONIC, &b);
		if (b.tv_sec - a.tv_sec + (b.tv_nsec - a.tv_nsec) / 1e9 > secs)
			break;
	}
	close(fd);
	tried += i;
	failed += hung;
	printf("vs-hostile: fuzz %s: %u calls (%u succeeded)\n", path, i, ok);
}

int main(int argc, char **argv)
{
	const char *only = NULL;
	unsigned int fuzz_calls = 20000, cycles = 1000;
	double fuzz_secs = 30;
	int opt;

	while ((opt = getopt(argc, argv, "o:c:x:g:n:t:k:")) != -1) {
		switch (opt) {
		case 'o': out_path = optarg; break;
		case 'c': cap_path = optarg; break;
		case 'x': cap2_path = optarg; break;
		case 'g': only = optarg; break;
		case 'n': fuzz_calls = atoi(optarg); break;
		case 't': fuzz_secs = atof(optarg); break;
		case 'k': cycles = atoi(optarg); break;
		default: return 2;
		}
	}
	CHECK(out_path && cap_path, "usage: -o OUTPUT -c CAPTURE");
	signal(SIGPIPE, SIG_IGN);
#define GROUP(name, call) if (!only || !strcmp(only, name)) { call; }
	GROUP("buffers", buffers());
	GROUP("fresh", fresh());
	GROUP("userptr", userptr());
	GROUP("mmap", mmaps());
	GROUP("mount", mounts());
	if (cap2_path)
		GROUP("race", race(fuzz_secs / 3));
	GROUP("formats", formats());
	GROUP("lifecycle", lifecycle());
	GROUP("stress", stress(cycles));
	if (!only || !strcmp(only, "fuzz")) {
		begin("fuzz");
		fuzz(out_path, fuzz_calls, fuzz_secs / 2, 1);
		fuzz(cap_path, fuzz_calls, fuzz_secs / 2, 2);
		end();
	}
	printf("vs-hostile: %s\n", total_failed ? "FAILED" : "all cases clean");
	return total_failed ? 1 : 0;
}
