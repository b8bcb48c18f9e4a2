// SPDX-License-Identifier: GPL-2.0
/*
 * vs-bench: frames per second through a V4L2 output -> capture pipe with
 * raw ioctls, a producer and one consumer process per capture node, as
 * applications drive vstream or v4l2loopback (give the same node twice):
 * the producer and each reader are separate programs with their own
 * address spaces (OBS feeding a browser), so a page-table change in one
 * does not stop the others' CPUs.  -T runs the readers as threads of the
 * producer's process instead: one program feeding itself.
 *
 *   vs-bench -o OUT -c CAP -f YUYV -s 1920x1080 -m mmap [-t SECS]
 *   vs-bench -o OUT -c CAP0 -c CAP1 ...   fan-out: up to 4 readers
 *   vs-bench -o OUT ...            the producer alone (nobody reads)
 *   vs-bench -M -f NV12 -s WxH     one memcpy of a frame, the one-copy cost
 *   -r FPS                         pace the producer like a camera
 *   -C                             check every byte of every frame (torn)
 *   -T                             readers as threads, not processes
 *
 * The producer writes every byte of each frame (as a real one would): the
 * frame number's low byte everywhere, its number at the start and the end,
 * and CLOCK_MONOTONIC just before QBUF.  Each consumer reads both numbers
 * and counts a frame whose two differ (or that is not the producer's) as
 * torn; with -C it also checks every byte in between, so a frame
 * overwritten in its middle only is caught too (a read pass per frame, so
 * the fps rows leave it off).  Latency is DQBUF's return minus the
 * producer's stamp, for every intact new frame of every consumer that the
 * producer queued once the consumers stream (not the ones it queued before
 * STREAMON, stamped before any consumer joined): lat_p50_us and
 * lat_p99_us.  Prints one line of key=value: fps (intact frames
 * the slowest consumer received per second; the producer's own with no
 * consumer), all_fps (every frame handed over to it, torn and repeated
 * ones too), torn (share of received frames that were torn, over all
 * consumers), repeats (frames delivered again), cpu_us (process plus the
 * pipe's kernel thread, -k, per frame of the slowest consumer) and copies
 * per received frame from vstream's sysfs counters of the capture nodes,
 * summed over them (-1 where there are none).  Then readers=N, per reader
 * rI_fps, rI_torn and rI_copies, and pipe_copies (the output node's copies
 * per producer frame, all readers together).
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <dirent.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../vm/vs-util.h"

#define MAGIC 0x76737472u	/* "vstr" */
#define MAXCAP 4		/* vstream's readers per pipe */
#define HDR 16			/* magic, frame number, QBUF time in ns */
#define MAXLAT (1u << 20)	/* latencies kept per reader */

struct bench;

struct reader {
	struct bench *bn;
	struct side s;
	pthread_t thread;
	pid_t pid;
	uint32_t received, gaps, torn, repeats;
	double t_last;
	long long fr0, zc0, cp0;	/* its node's sysfs counters at the start */
	uint32_t *lat;			/* us from the producer's QBUF to DQBUF */
	size_t nlat;
};

struct bench {
	struct side out;
	struct reader cap[MAXCAP];
	unsigned int ncap;
	struct v4l2_format fmt;
	const char *xout, *xcap;
	double secs;
	double rate;			/* producer frames per second, 0: flat out */
	int full_check;			/* -C: every byte of every frame */
	uint32_t produced;
	double t_first, t_end;
	int producer_streaming, producer_done;
	unsigned int consumers_ready;
	pthread_mutex_t lock;
	pthread_cond_t cond;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static double cpu_of(int who)
{
	struct rusage ru;

	getrusage(who, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

/* this process, and the reader processes once reaped */
static double cpu_self(void)
{
	return cpu_of(RUSAGE_SELF) + cpu_of(RUSAGE_CHILDREN);
}

/* CPU seconds of the kernel thread named @comm (the pipe's), 0 if none. */
static double cpu_kthread(const char *comm)
{
	DIR *d;
	struct dirent *e;
	double t = 0;

	if (!comm || !(d = opendir("/proc")))
		return 0;
	while ((e = readdir(d))) {
		char path[300], name[64] = "";
		unsigned long ut, st;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%*d (%63[^)]) %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
			   name, &ut, &st) == 3 && !strcmp(name, comm))
			t += (double)(ut + st) / sysconf(_SC_CLK_TCK);
		fclose(f);
	}
	closedir(d);
	return t;
}

static void stamp(uint8_t *p, size_t n, uint32_t frame)
{
	uint32_t hdr[2] = { MAGIC, frame };

	memset(p, frame & 0xff, n);
	memcpy(p, hdr, sizeof(hdr));
	memcpy(p + n - sizeof(frame), &frame, sizeof(frame));
}

/*
 * Memory the producer's process and the readers' share: the bench, its
 * lock and every reader's latencies (untouched pages cost nothing).
 */
static void *shared_alloc(size_t n)
{
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	CHECK(p != MAP_FAILED, "mmap shared %zu", n);
	return p;
}

/* The time the frame leaves the producer, written last. */
static void stamp_time(uint8_t *p)
{
	uint64_t t = now_ns();

	memcpy(p + 8, &t, sizeof(t));
}

/* Every byte between the header and the tail is the frame's low byte. */
static int body_intact(const uint8_t *p, size_t n, uint32_t frame)
{
	uint64_t want = 0x0101010101010101ull * (frame & 0xff);
	size_t i = HDR, end = n - sizeof(frame);

	for (; i + 8 <= end; i += 8) {
		uint64_t v;

		memcpy(&v, p + i, 8);
		if (v != want)
			return 0;
	}
	for (; i < end; i++)
		if (p[i] != (frame & 0xff))
			return 0;
	return 1;
}

static void add_latency(struct reader *r, uint64_t sent, uint64_t got)
{
	/* past MAXLAT (-t of an hour at 300 fps) the percentiles cover the first */
	if (r->nlat < MAXLAT)
		r->lat[r->nlat++] = got > sent ? (got - sent) / 1000 : 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static void dq(struct side *s, struct v4l2_buffer *b)
{
	memset(b, 0, sizeof(*b));
	b->type = s->type;
	b->memory = s->memory;
	CHECK(xioctl(s->fd, VIDIOC_DQBUF, b) == 0, "DQBUF %s", s->path);
}

static void *producer(void *arg)
{
	struct bench *bn = arg;
	struct side *s = &bn->out;
	size_t size = bn->fmt.fmt.pix.sizeimage;
	int type = s->type;
	double end;

	for (unsigned int i = 0; i < s->count; i++, bn->produced++) {
		stamp(s->ptr[i], size, bn->produced);
		stamp_time(s->ptr[i]);
		qbuf(s, i, size, V4L2_FIELD_NONE);
	}
	CHECK(xioctl(s->fd, VIDIOC_STREAMON, &type) == 0, "STREAMON output");
	pthread_mutex_lock(&bn->lock);
	bn->producer_streaming = 1;
	pthread_cond_broadcast(&bn->cond);
	/* the clock starts once every reader streams: all count alike */
	while (bn->consumers_ready < bn->ncap)
		pthread_cond_wait(&bn->cond, &bn->lock);
	pthread_mutex_unlock(&bn->lock);

	end = now() + bn->secs;
	bn->t_first = now();
	while (now() < end) {
		struct pollfd p = { .fd = s->fd, .events = POLLOUT };
		struct v4l2_buffer b;

		if (bn->rate > 0) {
			double due = bn->t_first + (bn->produced - s->count) / bn->rate;

			if (due > now())
				usleep((due - now()) * 1e6);
		}

		CHECK(poll(&p, 1, 5000) > 0, "producer stalled after %u frames", bn->produced);
		dq(s, &b);
		stamp(s->ptr[b.index], size, bn->produced++);
		stamp_time(s->ptr[b.index]);
		qbuf(s, b.index, size, V4L2_FIELD_NONE);
	}
	bn->t_end = now();
	pthread_mutex_lock(&bn->lock);
	bn->producer_done = 1;
	pthread_mutex_unlock(&bn->lock);
	return NULL;
}

static void *consumer(void *arg)
{
	struct reader *r = arg;
	struct bench *bn = r->bn;
	struct side *s = &r->s;
	size_t size = bn->fmt.fmt.pix.sizeimage;
	uint32_t expect = 0;
	int type = s->type;
	int idle = 0;

	for (unsigned int i = 0; i < s->count; i++)
		qbuf(s, i, 0, 0);
	CHECK(xioctl(s->fd, VIDIOC_STREAMON, &type) == 0, "STREAMON capture");
	pthread_mutex_lock(&bn->lock);
	bn->consumers_ready++;
	pthread_cond_broadcast(&bn->cond);
	pthread_mutex_unlock(&bn->lock);

	/* until the producer is done and nothing came for 0.5 s */
	while (idle < 5) {
		struct pollfd p = { .fd = s->fd, .events = POLLIN };
		struct v4l2_buffer b;
		uint32_t hdr[2], tail;
		uint64_t sent, got;
		uint8_t *data;

		if (poll(&p, 1, 100) <= 0) {
			pthread_mutex_lock(&bn->lock);
			idle = bn->producer_done ? idle + 1 : 0;
			pthread_mutex_unlock(&bn->lock);
			continue;
		}
		dq(s, &b);
		got = now_ns();
		data = s->ptr[b.index];
		memcpy(hdr, data, sizeof(hdr));
		memcpy(&sent, data + 8, sizeof(sent));
		memcpy(&tail, data + size - sizeof(tail), sizeof(tail));
		r->t_last = now();
		if (hdr[0] != MAGIC || hdr[1] != tail ||
		    (bn->full_check && !body_intact(data, size, tail))) {
			r->torn++;	/* overwritten while we read, or not ours */
		} else if (r->received && hdr[1] < expect) {
			r->repeats++;	/* a frame we already had */
		} else {
			if (r->received && hdr[1] != expect)
				r->gaps += hdr[1] - expect;
			expect = hdr[1] + 1;
			r->received++;
			/* frames queued before STREAMON waited for us to join */
			if (hdr[1] >= bn->out.count)
				add_latency(r, sent, got);
		}
		qbuf(s, b.index, 0, 0);
	}
	return NULL;
}

static size_t frame_size(uint32_t fourcc, unsigned int w, unsigned int h)
{
	return fourcc == V4L2_PIX_FMT_NV12 ? (size_t)w * h * 3 / 2 : (size_t)w * h * 2;
}

static int bench_memcpy(uint32_t fourcc, unsigned int w, unsigned int h, double secs)
{
	size_t n = frame_size(fourcc, w, h);
	uint8_t *a = malloc(n), *b = malloc(n);
	unsigned long frames = 0;
	double t0, c0, t;

	CHECK(a && b, "malloc");
	memset(a, 1, n);
	memset(b, 2, n);
	t0 = now();
	c0 = cpu_self();
	do {
		memcpy(b, a, n);
		a[frames % n] ^= b[(frames * 4099) % n];
		frames++;
		t = now() - t0;
	} while (t < secs);
	printf("copies=1 fps=%.1f cpu_us=%.0f frames=%lu\n", frames / t,
	       (cpu_self() - c0) * 1e6 / frames, frames);
	return 0;
}

/* Readers join a running virtual camera: wait until the producer streams. */
static void wait_producer_streaming(struct bench *bn)
{
	pthread_mutex_lock(&bn->lock);
	while (!bn->producer_streaming)
		pthread_cond_wait(&bn->cond, &bn->lock);
	pthread_mutex_unlock(&bn->lock);
}

/* Open reader @r's node as the producer's format and set its buffers up. */
static void reader_open(struct bench *bn, struct reader *r, unsigned int w, unsigned int h)
{
	struct v4l2_format cfmt = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };

	r->s.fd = open(r->s.path, O_RDWR);
	CHECK(r->s.fd >= 0, "open %s", r->s.path);
	CHECK(xioctl(r->s.fd, VIDIOC_G_FMT, &cfmt) == 0, "G_FMT capture");
	CHECK(cfmt.fmt.pix.pixelformat == bn->fmt.fmt.pix.pixelformat &&
	      cfmt.fmt.pix.width == w && cfmt.fmt.pix.height == h,
	      "capture format of %s differs from the producer's", r->s.path);
	setup(&r->s, &cfmt, bn->xcap);
}

/*
 * Reader @r as a process of its own, forked before the producer opens or
 * maps anything (a child would inherit its mappings, and a page-table
 * change of the producer's would reach the reader's CPU); it opens its
 * node once the producer streams, as a camera application joins a running
 * virtual camera.  Dies with the producer's process.
 */
static void reader_fork(struct bench *bn, struct reader *r, unsigned int w, unsigned int h)
{
	pid_t parent = getpid(), pid = fork();	/* r is shared: only the parent writes r->pid */

	CHECK(pid >= 0, "fork");
	if (pid) {
		r->pid = pid;
		return;
	}
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)	/* it died before prctl() */
		_exit(1);
	wait_producer_streaming(bn);
	reader_open(bn, r, w, h);
	consumer(r);
	_exit(0);
}

/* -T: reader @r as a thread of the producer's process, once it streams */
static void reader_thread(struct bench *bn, struct reader *r, unsigned int w, unsigned int h)
{
	reader_open(bn, r, w, h);
	pthread_create(&r->thread, NULL, consumer, r);
}

/*
 * Wait for every reader.  Processes are reaped in the order they end, so
 * one that fails (before it streams, the producer would wait for it
 * forever) ends the run at once: the others die with this process.
 */
static void readers_join(struct bench *bn, int threads)
{
	unsigned int i, j;

	for (i = 0; i < bn->ncap; i++) {
		int st;
		pid_t pid;

		if (threads) {
			pthread_join(bn->cap[i].thread, NULL);
			continue;
		}
		pid = waitpid(-1, &st, 0);
		CHECK(pid > 0, "waitpid");
		for (j = 0; j < bn->ncap && bn->cap[j].pid != pid; j++)
			;
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "reader of %s failed",
		      j < bn->ncap ? bn->cap[j].s.path : "?");
	}
}

/* Copies per frame @r received, from its node's sysfs; -1 without stats. */
static double reader_copies(const struct reader *r)
{
	long long fr, cp;

	if (r->fr0 < 0)
		return -1;
	fr = vs_stat(r->s.path, "frames") - r->fr0;
	cp = vs_stat(r->s.path, "copies") - r->cp0;
	return fr > 0 ? (double)cp / fr : 0;
}

int main(int argc, char **argv)
{
	struct bench *bn = shared_alloc(sizeof(*bn));
	pthread_mutexattr_t ma;
	pthread_condattr_t ca;
	struct v4l2_streamparm parm = { .type = V4L2_BUF_TYPE_VIDEO_OUTPUT };
	const char *fourcc = "YUYV", *kthread = NULL;
	unsigned int w = 640, h = 480, i, slow = 0;
	int opt, do_memcpy = 0, memory = V4L2_MEMORY_MMAP, threads = 0;
	long long ofr0, ocp0, zc = 0;
	uint32_t torn = 0, intact = 0, gaps = 0, repeats = 0;
	uint32_t *lat = NULL;
	size_t nlat = 0;
	double c0, k0, cpu, t, copies = 0;
	pthread_t pt;
	uint32_t frames;

	bn->out.type = V4L2_BUF_TYPE_VIDEO_OUTPUT;
	bn->secs = 3;
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
	pthread_mutex_init(&bn->lock, &ma);
	pthread_condattr_init(&ca);
	pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED);
	pthread_cond_init(&bn->cond, &ca);
	while ((opt = getopt(argc, argv, "o:c:f:s:m:x:y:t:k:r:MCT")) != -1) {
		switch (opt) {
		case 'o': bn->out.path = optarg; break;
		case 'c':
			if (bn->ncap == MAXCAP) {
				fprintf(stderr, "usage: at most %d -c\n", MAXCAP);
				return 2;
			}
			bn->cap[bn->ncap++].s.path = optarg;
			break;
		case 'f': fourcc = optarg; break;
		case 's': sscanf(optarg, "%ux%u", &w, &h); break;
		case 'm': memory = parse_mem(optarg); break;
		case 'x': bn->xcap = optarg; break;
		case 'y': bn->xout = optarg; break;
		case 't': bn->secs = atof(optarg); break;
		case 'k': kthread = optarg; break;
		case 'r': bn->rate = atof(optarg); break;
		case 'M': do_memcpy = 1; break;
		case 'C': bn->full_check = 1; break;
		case 'T': threads = 1; break;
		default: return 2;
		}
	}
	CHECK(strlen(fourcc) == 4, "usage: fourcc");
	bn->fmt.fmt.pix.pixelformat = v4l2_fourcc(fourcc[0], fourcc[1], fourcc[2], fourcc[3]);
	if (do_memcpy)
		return bench_memcpy(bn->fmt.fmt.pix.pixelformat, w, h, bn->secs);
	CHECK(bn->out.path, "usage: -o OUTPUT");
	/* one exporter's buffers imported by two readers would be written twice */
	CHECK(bn->ncap <= 1 || memory != V4L2_MEMORY_DMABUF, "usage: DMABUF takes one -c");
	bn->out.memory = memory;
	for (i = 0; i < bn->ncap; i++) {
		struct reader *r = &bn->cap[i];

		r->bn = bn;
		r->s.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
		r->s.memory = memory;
		r->lat = shared_alloc(MAXLAT * sizeof(*r->lat));
		/* sampled before the readers exist: their own counters */
		r->fr0 = vs_stat(r->s.path, "frames");
		r->zc0 = vs_stat(r->s.path, "zerocopy");
		r->cp0 = vs_stat(r->s.path, "copies");
		if (!threads)
			reader_fork(bn, r, w, h);
	}

	bn->out.fd = open(bn->out.path, O_RDWR);
	CHECK(bn->out.fd >= 0, "open %s", bn->out.path);
	bn->fmt.type = V4L2_BUF_TYPE_VIDEO_OUTPUT;
	bn->fmt.fmt.pix.width = w;
	bn->fmt.fmt.pix.height = h;
	bn->fmt.fmt.pix.field = V4L2_FIELD_NONE;
	CHECK(xioctl(bn->out.fd, VIDIOC_S_FMT, &bn->fmt) == 0, "S_FMT output");
	CHECK(bn->fmt.fmt.pix.width == w && bn->fmt.fmt.pix.height == h,
	      "output took %ux%u", bn->fmt.fmt.pix.width, bn->fmt.fmt.pix.height);
	parm.parm.output.timeperframe.numerator = 1;
	parm.parm.output.timeperframe.denominator = 240;
	xioctl(bn->out.fd, VIDIOC_S_PARM, &parm);
	setup(&bn->out, &bn->fmt, bn->xout);

	/* the output node's counters are the pipe's, over all readers */
	ofr0 = vs_stat(bn->out.path, "frames");
	ocp0 = vs_stat(bn->out.path, "copies");
	c0 = cpu_self();
	k0 = cpu_kthread(kthread);
	pthread_create(&pt, NULL, producer, bn);
	if (bn->ncap && threads) {
		wait_producer_streaming(bn);
		for (i = 0; i < bn->ncap; i++)
			reader_thread(bn, &bn->cap[i], w, h);
	}
	readers_join(bn, threads);
	pthread_join(pt, NULL);
	cpu = cpu_self() - c0 + cpu_kthread(kthread) - k0;

	/* the pipe is as fast as its slowest reader */
	for (i = 0; i < bn->ncap; i++) {
		struct reader *r = &bn->cap[i], *s = &bn->cap[slow];

		CHECK(r->received > 0 && r->t_last > bn->t_first,
		      "no frames went through to %s", r->s.path);
		if (r->received / (r->t_last - bn->t_first) <
		    s->received / (s->t_last - bn->t_first))
			slow = i;
	}
	if (bn->ncap) {
		frames = bn->cap[slow].received;
		t = bn->cap[slow].t_last - bn->t_first;
	} else {
		frames = bn->produced;
		t = bn->t_end - bn->t_first;
	}
	CHECK(frames > 0 && t > 0, "no frames went through");
	for (i = 0; i < bn->ncap; i++) {
		struct reader *r = &bn->cap[i];
		double c = reader_copies(r);

		if (c < 0 || copies < 0) {
			copies = -1;
		} else {
			copies += c;
			zc += vs_stat(r->s.path, "zerocopy") - r->zc0;
		}
		intact += r->received;
		torn += r->torn;
		lat = realloc(lat, (nlat + r->nlat + 1) * sizeof(*lat));
		CHECK(lat, "realloc");
		if (r->nlat)
			memcpy(lat + nlat, r->lat, r->nlat * sizeof(*lat));
		nlat += r->nlat;
		gaps += r->gaps;
		repeats += r->repeats;
	}
	if (bn->ncap && copies >= 0)
		printf("copies=%.2f zerocopy=%lld ", copies, zc);
	else
		printf("copies=-1 ");
	printf("fps=%.1f all_fps=%.1f cpu_us=%.0f torn=%.2f frames=%u produced=%u gaps=%u "
	       "repeats=%u", frames / t,
	       (bn->ncap ? frames + bn->cap[slow].torn + bn->cap[slow].repeats : frames) / t,
	       cpu * 1e6 / frames,
	       intact + torn ? (double)torn / (intact + torn) : 0,
	       frames, bn->produced, gaps, repeats);
	printf(" readers=%u", bn->ncap);
	if (nlat) {
		qsort(lat, nlat, sizeof(*lat), cmp_u32);
		printf(" lat_p50_us=%u lat_p99_us=%u lat_max_us=%u", lat[nlat / 2],
		       lat[(nlat * 99) / 100], lat[nlat - 1]);
	}
	for (i = 0; i < bn->ncap; i++) {
		struct reader *r = &bn->cap[i];

		printf(" r%u_fps=%.1f r%u_torn=%.2f r%u_copies=%.2f", i,
		       r->received / (r->t_last - bn->t_first), i,
		       r->received + r->torn ? (double)r->torn / (r->received + r->torn) : 0,
		       i, reader_copies(r));
	}
	if (bn->ncap && ofr0 >= 0) {
		long long fr = vs_stat(bn->out.path, "frames") - ofr0;

		printf(" pipe_copies=%.2f",
		       fr > 0 ? (double)(vs_stat(bn->out.path, "copies") - ocp0) / fr : 0);
	}
	printf("\n");
	return 0;
}
