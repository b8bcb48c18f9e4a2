// SPDX-License-Identifier: GPL-2.0
/*
 * vs-bench: frames per second through a V4L2 output -> capture pipe with
 * raw ioctls, a producer thread and a consumer thread, as any application
 * would drive vstream or v4l2loopback (give the same node twice).
 *
 *   vs-bench -o OUT -c CAP -f YUYV -s 1920x1080 -m mmap [-t SECS]
 *   vs-bench -o OUT ...            the producer alone (nobody reads)
 *   vs-bench -M -f NV12 -s WxH     one memcpy of a frame, the one-copy cost
 *   -r FPS                         pace the producer like a camera
 *
 * The producer writes every byte of each frame (as a real one would) and
 * stamps its number at the start and the end; the consumer reads both
 * stamps and counts a frame whose two differ (or that is not the
 * producer's) as torn.  Prints one line of key=value: fps (intact frames
 * the consumer received per second; the producer's own with no consumer),
 * all_fps (every frame handed over, torn and repeated ones too), torn
 * (share of received frames that were torn), repeats (frames delivered
 * again), cpu_us (process plus the
 * pipe's kernel thread, -k, per frame) and copies per received frame from
 * vstream's sysfs counters of the capture node (-1 where there are none).
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
#include <sys/resource.h>
#include <unistd.h>

#include "../vm/vs-util.h"

#define MAGIC 0x76737472u	/* "vstr" */

struct bench {
	struct side out, cap;
	struct v4l2_format fmt;
	const char *xout, *xcap;
	double secs;
	double rate;			/* producer frames per second, 0: flat out */
	uint32_t produced;
	uint32_t received, gaps, torn, repeats;
	double t_first, t_last, t_end;
	int producer_streaming, producer_done, consumer_ready;
	pthread_mutex_t lock;
	pthread_cond_t cond;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double cpu_self(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
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
		qbuf(s, i, size, V4L2_FIELD_NONE);
	}
	CHECK(xioctl(s->fd, VIDIOC_STREAMON, &type) == 0, "STREAMON output");
	pthread_mutex_lock(&bn->lock);
	bn->producer_streaming = 1;
	pthread_cond_broadcast(&bn->cond);
	while (bn->cap.path && !bn->consumer_ready)
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
	struct bench *bn = arg;
	struct side *s = &bn->cap;
	size_t size = bn->fmt.fmt.pix.sizeimage;
	uint32_t expect = 0;
	int type = s->type;
	int idle = 0;

	for (unsigned int i = 0; i < s->count; i++)
		qbuf(s, i, 0, 0);
	CHECK(xioctl(s->fd, VIDIOC_STREAMON, &type) == 0, "STREAMON capture");
	pthread_mutex_lock(&bn->lock);
	bn->consumer_ready = 1;
	pthread_cond_broadcast(&bn->cond);
	pthread_mutex_unlock(&bn->lock);

	/* until the producer is done and nothing came for 0.5 s */
	while (idle < 5) {
		struct pollfd p = { .fd = s->fd, .events = POLLIN };
		struct v4l2_buffer b;
		uint32_t hdr[2], tail;
		uint8_t *data;

		if (poll(&p, 1, 100) <= 0) {
			pthread_mutex_lock(&bn->lock);
			idle = bn->producer_done ? idle + 1 : 0;
			pthread_mutex_unlock(&bn->lock);
			continue;
		}
		dq(s, &b);
		data = s->ptr[b.index];
		memcpy(hdr, data, sizeof(hdr));
		memcpy(&tail, data + size - sizeof(tail), sizeof(tail));
		bn->t_last = now();
		if (hdr[0] != MAGIC || hdr[1] != tail) {
			bn->torn++;	/* overwritten while we read, or not ours */
		} else if (bn->received && hdr[1] < expect) {
			bn->repeats++;	/* a frame we already had */
		} else {
			if (bn->received && hdr[1] != expect)
				bn->gaps += hdr[1] - expect;
			expect = hdr[1] + 1;
			bn->received++;
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

int main(int argc, char **argv)
{
	struct bench bn = {
		.out = { .type = V4L2_BUF_TYPE_VIDEO_OUTPUT, .memory = V4L2_MEMORY_MMAP },
		.cap = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_MMAP },
		.secs = 3,
		.lock = PTHREAD_MUTEX_INITIALIZER,
		.cond = PTHREAD_COND_INITIALIZER,
	};
	struct v4l2_streamparm parm = { .type = V4L2_BUF_TYPE_VIDEO_OUTPUT };
	const char *fourcc = "YUYV", *kthread = NULL;
	unsigned int w = 640, h = 480;
	int opt, do_memcpy = 0;
	long long zc0 = 0, cp0 = 0, fr0 = -1;
	double c0, k0, cpu, t;
	pthread_t pt, ct;
	uint32_t frames;

	while ((opt = getopt(argc, argv, "o:c:f:s:m:x:y:t:k:r:M")) != -1) {
		switch (opt) {
		case 'o': bn.out.path = optarg; break;
		case 'c': bn.cap.path = optarg; break;
		case 'f': fourcc = optarg; break;
		case 's': sscanf(optarg, "%ux%u", &w, &h); break;
		case 'm': bn.out.memory = bn.cap.memory = parse_mem(optarg); break;
		case 'x': bn.xcap = optarg; break;
		case 'y': bn.xout = optarg; break;
		case 't': bn.secs = atof(optarg); break;
		case 'k': kthread = optarg; break;
		case 'r': bn.rate = atof(optarg); break;
		case 'M': do_memcpy = 1; break;
		default: return 2;
		}
	}
	CHECK(strlen(fourcc) == 4, "usage: fourcc");
	bn.fmt.fmt.pix.pixelformat = v4l2_fourcc(fourcc[0], fourcc[1], fourcc[2], fourcc[3]);
	if (do_memcpy)
		return bench_memcpy(bn.fmt.fmt.pix.pixelformat, w, h, bn.secs);
	CHECK(bn.out.path, "usage: -o OUTPUT");

	bn.out.fd = open(bn.out.path, O_RDWR);
	CHECK(bn.out.fd >= 0, "open %s", bn.out.path);
	bn.fmt.type = V4L2_BUF_TYPE_VIDEO_OUTPUT;
	bn.fmt.fmt.pix.width = w;
	bn.fmt.fmt.pix.height = h;
	bn.fmt.fmt.pix.field = V4L2_FIELD_NONE;
	CHECK(xioctl(bn.out.fd, VIDIOC_S_FMT, &bn.fmt) == 0, "S_FMT output");
	CHECK(bn.fmt.fmt.pix.width == w && bn.fmt.fmt.pix.height == h,
	      "output took %ux%u", bn.fmt.fmt.pix.width, bn.fmt.fmt.pix.height);
	parm.parm.output.timeperframe.numerator = 1;
	parm.parm.output.timeperframe.denominator = 240;
	xioctl(bn.out.fd, VIDIOC_S_PARM, &parm);
	setup(&bn.out, &bn.fmt, bn.xout);

	if (bn.cap.path) {
		fr0 = vs_stat(bn.cap.path, "frames");
		zc0 = vs_stat(bn.cap.path, "zerocopy");
		cp0 = vs_stat(bn.cap.path, "copies");
	}
	c0 = cpu_self();
	k0 = cpu_kthread(kthread);
	pthread_create(&pt, NULL, producer, &bn);
	if (bn.cap.path) {
		struct v4l2_format cfmt = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };

		/* the reader opens once the producer streams, as a camera
		 * application joins a running virtual camera */
		pthread_mutex_lock(&bn.lock);
		while (!bn.producer_streaming)
			pthread_cond_wait(&bn.cond, &bn.lock);
		pthread_mutex_unlock(&bn.lock);
		bn.cap.fd = open(bn.cap.path, O_RDWR);
		CHECK(bn.cap.fd >= 0, "open %s", bn.cap.path);
		CHECK(xioctl(bn.cap.fd, VIDIOC_G_FMT, &cfmt) == 0, "G_FMT capture");
		CHECK(cfmt.fmt.pix.pixelformat == bn.fmt.fmt.pix.pixelformat &&
		      cfmt.fmt.pix.width == w && cfmt.fmt.pix.height == h,
		      "capture format differs from the producer's");
		setup(&bn.cap, &cfmt, bn.xcap);
		pthread_create(&ct, NULL, consumer, &bn);
		pthread_join(ct, NULL);
	}
	pthread_join(pt, NULL);
	cpu = cpu_self() - c0 + cpu_kthread(kthread) - k0;

	if (bn.cap.path) {
		frames = bn.received;
		t = bn.t_last - bn.t_first;
	} else {
		frames = bn.produced;
		t = bn.t_end - bn.t_first;
	}
	CHECK(frames > 0 && t > 0, "no frames went through");
	if (bn.cap.path && fr0 >= 0) {
		long long fr = vs_stat(bn.cap.path, "frames") - fr0;
		long long cp = vs_stat(bn.cap.path, "copies") - cp0;
		long long zc = vs_stat(bn.cap.path, "zerocopy") - zc0;

		printf("copies=%.2f zerocopy=%lld ", fr > 0 ? (double)cp / fr : 0, zc);
	} else {
		printf("copies=-1 ");
	}
	printf("fps=%.1f all_fps=%.1f cpu_us=%.0f torn=%.2f frames=%u produced=%u gaps=%u "
	       "repeats=%u\n", frames / t,
	       (bn.cap.path ? bn.received + bn.torn + bn.repeats : frames) / t,
	       cpu * 1e6 / frames,
	       bn.received + bn.torn ? (double)bn.torn / (bn.received + bn.torn) : 0,
	       frames, bn.produced, bn.gaps, bn.repeats);
	return 0;
}
