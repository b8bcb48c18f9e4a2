// SPDX-License-Identifier: GPL-2.0
/*
 * vs-isolate - no reader can hurt the producer or another reader, and a
 * dequeued frame never changes.  Every frame the producer writes carries
 * its number and a body computed from it, so a reader checks each frame
 * bit-exact (an idle test-pattern frame or a torn frame fails).
 *
 *   vs-isolate -o OUT -c CAP [-c CAP]... -g GROUP [-s WxH] [-e] [-X CMD]
 *
 * Groups:
 *   frozen  a reader that dequeues every buffer and stops (SIGSTOP) must
 *           leave the producer and the other reader at >= 90 % of their
 *           rates without it; after SIGCONT it streams again.  With -X
 *           the frozen reader is `sh -c CMD` on the first node instead
 *           (e.g. a vstreamsrc whose downstream blocks).
 *   stable  a dequeued frame keeps its bytes through the reader's
 *           STREAMOFF, the producer's STREAMOFF and close, and the
 *           reader's REQBUFS(0) while mapped; a reader writing its frame
 *           changes nobody else's (copy on write).
 *   fanout  every reader gets every byte, and the pipe made no copy.
 *   paced   a producer at a camera's pace (it dequeues a buffer only when
 *           its next frame is due) that scribbles over each buffer right
 *           after queuing it (a buggy producer, or a second thread), and
 *           a reader that checks each frame and queues it back: every
 *           frame intact and shared (a QBUF'd frame is the driver's, and
 *           the producer's mapping shows another one from then on).  Then
 *           a frame the reader holds while the producer writes three
 *           rounds of its buffers must not change.
 *   idle    with no producer, a reader that held every buffer past its
 *           frame times gets its next idle frame right after it queues
 *           a buffer (its QBUF wakes the pipe thread), not at the
 *           thread's one-second fallback.  Judged by the frames' own
 *           timestamps, the driver's clock.
 *   silence a producer that sets its Producer Timeout and goes silent
 *           while the reader holds every buffer, speaks once (the reader
 *           has no buffer: a drop), is silent again once the reader has
 *           queued them all back: idle frames come (the producer's QBUF
 *           after its silence woke the pipe thread to arm the deadline).
 * With -e the producer is external and already streaming: `videotestsrc
 * pattern=ball` in YUYV, so frames are checked to be its picture (a top
 * line mostly black, which the kernel's colour bars are not) instead of
 * against the formula.
 */
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/wait.h>
#include <time.h>
#include "vs-util.h"

#define MAXCAP 4

static const char *out_path;
static const char *cap_path[MAXCAP];
static unsigned int ncap, width = 640, height = 480;
static bool external;
static const char *frozen_cmd;
static volatile bool stop_producer;
static struct v4l2_format fmt;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static uint32_t word(uint32_t n, size_t i)
{
	return i ? n * 2654435761u + (uint32_t)i : n;
}

static void fill(void *p, size_t len, uint32_t n)
{
	uint32_t *w = p;

	for (size_t i = 0; i < len / 4; i++)
		w[i] = word(n, i);
}

/* Is this frame #n exactly as the producer wrote it? */
static bool intact(const void *p, size_t len)
{
	const uint32_t *w = p;
	uint32_t n = w[0];

	if (external) {
		/* the ball on black: Y of most of the top line is 16 */
		const uint8_t *y = p;
		unsigned int black = 0;

		for (unsigned int x = 0; x < width && 2 * x < len; x++)
			black += y[2 * x] <= 20;
		return 2 * black > width;
	}
	for (size_t i = 1; i < len / 4; i++)
		if (w[i] != word(n, i))
			return false;
	return true;
}

static int open_side(struct side *s, const char *path, int type)
{
	s->path = path;
	s->type = type;
	s->memory = V4L2_MEMORY_MMAP;
	s->fd = open(path, O_RDWR | O_NONBLOCK);
	CHECK(s->fd >= 0, "open %s", path);
	return s->fd;
}

/* wait up to @ms for a buffer and dequeue it; -1 on timeout */
static int dq(struct side *s, struct v4l2_buffer *b, int ms)
{
	struct pollfd p = { .fd = s->fd, .events = POLLIN | POLLOUT | POLLPRI };

	memset(b, 0, sizeof(*b));
	b->type = s->type;
	b->memory = s->memory;
	if (poll(&p, 1, ms) <= 0)
		return -1;
	if (xioctl(s->fd, VIDIOC_DQBUF, b) < 0) {
		CHECK(errno == EAGAIN, "DQBUF %s", s->path);
		return -1;
	}
	return 0;
}

/* Producer */

static long long produced;
static bool camera;	/* dequeue a buffer only when its frame is due */
static bool scribble;	/* write over each buffer after queuing it */

/* With @camera: sleep until the next 1/30 s tick after @next. */
static void camera_wait(struct timespec *next)
{
	if (!camera)
		return;
	if (!next->tv_sec)
		clock_gettime(CLOCK_MONOTONIC, next);
	next->tv_nsec += 1000000000 / 30;
	if (next->tv_nsec >= 1000000000) {
		next->tv_nsec -= 1000000000;
		next->tv_sec++;
	}
	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, next, NULL);
}

static void *producer(void *arg)
{
	struct side o = { 0 };
	struct v4l2_streamparm parm = { .type = V4L2_BUF_TYPE_VIDEO_OUTPUT };
	struct v4l2_format f = fmt;
	struct timespec next = { 0 };
	uint32_t n = 1;
	unsigned int i;
	int type = V4L2_BUF_TYPE_VIDEO_OUTPUT;

	open_side(&o, out_path, type);
	f.type = type;
	CHECK(xioctl(o.fd, VIDIOC_S_FMT, &f) == 0, "S_FMT output");
	parm.parm.output.timeperframe.numerator = 1;
	parm.parm.output.timeperframe.denominator = 30;
	CHECK(xioctl(o.fd, VIDIOC_S_PARM, &parm) == 0, "S_PARM");
	setup(&o, &f, NULL);
	for (i = 0; i < o.count; i++) {
		fill(o.ptr[i], f.fmt.pix.sizeimage, n++);
		qbuf(&o, i, f.fmt.pix.sizeimage, 0);
	}
	CHECK(xioctl(o.fd, VIDIOC_STREAMON, &type) == 0, "STREAMON output");
	while (!stop_producer) {
		struct v4l2_buffer b;

		camera_wait(&next);
		if (dq(&o, &b, 200))
			continue;
		fill(o.ptr[b.index], f.fmt.pix.sizeimage, n++);
		qbuf(&o, b.index, f.fmt.pix.sizeimage, 0);
		if (scribble)
			memset(o.ptr[b.index], 0x5a, f.fmt.pix.sizeimage);
		__atomic_add_fetch(&produced, 1, __ATOMIC_RELAXED);
	}
	/* the producer's STREAMOFF and close must not touch readers' frames */
	CHECK(xioctl(o.fd, VIDIOC_STREAMOFF, &type) == 0, "STREAMOFF output");
	for (i = 0; i < o.count; i++)
		munmap(o.ptr[i], o.len[i]);
	close(o.fd);
	return NULL;
}

static pthread_t producer_thread;

static void start_producer(void)
{
	stop_producer = false;
	if (!external)
		pthread_create(&producer_thread, NULL, producer, NULL);
}

static void stop_producer_now(void)
{
	stop_producer = true;
	if (!external)
		pthread_join(producer_thread, NULL);
}

/* Readers */

struct reader {
	struct side s;
	pthread_t thread;
	volatile bool stop;
	long long frames, bad;
};

static void reader_open(struct reader *r, const char *path)
{
	int type = V4L2_BUF_TYPE_VIDEO_CAPTURE;

	memset(r, 0, sizeof(*r));
	open_side(&r->s, path, type);
	setup(&r->s, &fmt, NULL);
	for (unsigned int i = 0; i < r->s.count; i++)
		qbuf(&r->s, i, 0, 0);
	CHECK(xioctl(r->s.fd, VIDIOC_STREAMON, &type) == 0, "STREAMON %s", path);
}

static void reader_close(struct reader *r)
{
	for (unsigned int i = 0; i < r->s.count; i++)
		munmap(r->s.ptr[i], r->s.len[i]);
	close(r->s.fd);
}

/* Wait for a producer frame: idle frames (test pattern) are skipped. */
static int reader_next(struct reader *r, struct v4l2_buffer *b, int ms)
{
	double end = now() + ms / 1000.0;
	int got = 0;

	while (now() < end) {
		if (dq(&r->s, b, 200))
			continue;
		got++;
		if (intact(r->s.ptr[b->index], b->bytesused))
			return 0;
		qbuf(&r->s, b->index, 0, 0);
	}
	fprintf(stderr, "vs-isolate: %s: %d frames in %d ms, none from the producer\n",
		r->s.path, got, ms);
	return -1;
}

static void *reader_loop(void *arg)
{
	struct reader *r = arg;

	while (!r->stop) {
		struct v4l2_buffer b;

		if (dq(&r->s, &b, 200))
			continue;
		if (!intact(r->s.ptr[b.index], b.bytesused))
			r->bad++;
		r->frames++;
		qbuf(&r->s, b.index, 0, 0);
	}
	return NULL;
}

static void count_for(struct reader *r, double seconds, double *rate, double *prate)
{
	long long p0 = produced, f0;
	double t0;

	r->stop = false;
	pthread_create(&r->thread, NULL, reader_loop, r);
	usleep(300000);
	f0 = r->frames;
	p0 = produced;
	t0 = now();
	usleep(seconds * 1e6);
	*rate = (r->frames - f0) / (now() - t0);
	*prate = (produced - p0) / (now() - t0);
	r->stop = true;
	pthread_join(r->thread, NULL);
}

/* Wait up to @tenths tenths of a second for @n more producer frames. */
static void wait_more_frames(long long n, int tenths, const char *why)
{
	long long f0 = vs_stat(out_path, "frames");

	for (int i = 0; i < tenths && vs_stat(out_path, "frames") < f0 + n; i++)
		usleep(100000);
	CHECK(vs_stat(out_path, "frames") >= f0 + n, "%s", why);
}

static void wait_for_producer(void)
{
	wait_more_frames(3, 600, "producer never streamed");
}

/* frozen */

static int group_frozen(void)
{
	struct reader other;
	double alone, aprod, with, wprod;
	int sync[2];
	pid_t pid;
	char c;

	CHECK(ncap >= 2, "frozen needs two readers");
	start_producer();
	wait_for_producer();
	reader_open(&other, cap_path[1]);
	count_for(&other, 5, &alone, &aprod);
	printf("vs-isolate: alone: reader %.1f fps, producer %.1f fps\n", alone, aprod);

	CHECK(pipe(sync) == 0, "pipe");
	pid = fork();
	if (!pid && frozen_cmd) {
		execl("/bin/sh", "sh", "-c", frozen_cmd, (char *)NULL);
		_exit(127);
	}
	if (!pid) {
		struct reader r;
		struct v4l2_buffer b;
		unsigned int held = 0, i;

		reader_open(&r, cap_path[0]);
		while (held < r.s.count)
			if (!dq(&r.s, &b, 1000))
				held++;
		/* holds every buffer: now it freezes */
		CHECK(write(sync[1], "h", 1) == 1, "sync");
		raise(SIGSTOP);
		/* thawed: give them back and stream on */
		for (i = 0; i < r.s.count; i++)
			qbuf(&r.s, i, 0, 0);
		for (i = 0; i < 10; i++) {
			CHECK(reader_next(&r, &b, 10000) == 0, "no frame after SIGCONT");
			qbuf(&r.s, b.index, 0, 0);
		}
		_exit(0);
	}
	if (frozen_cmd) {
		long long f0 = vs_stat(cap_path[0], "frames"), f;

		/* started (slowly, under emulation) once it took frames... */
		for (int i = 0; i < 1200 && vs_stat(cap_path[0], "frames") < f0 + 4; i++)
			usleep(100000);
		/* ... and stuck once it takes no more */
		do {
			f = vs_stat(cap_path[0], "frames");
			sleep(1);
		} while (vs_stat(cap_path[0], "frames") != f);
		printf("vs-isolate: %s took %lld frames and stopped\n", frozen_cmd, f - f0);
		CHECK(f > f0, "the frozen reader never took a frame: it tests nothing");
	} else {
		CHECK(read(sync[0], &c, 1) == 1, "frozen reader never held its buffers");
	}
	count_for(&other, 5, &with, &wprod);
	printf("vs-isolate: one reader frozen: reader %.1f fps, producer %.1f fps\n",
	       with, wprod);
	kill(pid, frozen_cmd ? SIGTERM : SIGCONT);
	{
		int st;

		CHECK(waitpid(pid, &st, 0) == pid, "waitpid");
		CHECK(frozen_cmd || (WIFEXITED(st) && !WEXITSTATUS(st)),
		      "the frozen reader did not recover after SIGCONT");
	}
	stop_producer_now();
	reader_close(&other);
	CHECK(!other.bad, "%lld torn or foreign frames", other.bad);
	CHECK(with >= 0.9 * alone, "reader fell to %.0f %% with a frozen peer",
	      100 * with / alone);
	CHECK(external || wprod >= 0.9 * aprod,
	      "producer fell to %.0f %% with a frozen reader", 100 * wprod / aprod);
	printf("vs-isolate: frozen: ok (reader %.0f %%, producer %.0f %%)\n",
	       100 * with / alone, external ? 100.0 : 100 * wprod / aprod);
	return 0;
}

/* stable */

static long long us(const struct v4l2_buffer *b)
{
	return b->timestamp.tv_sec * 1000000LL + b->timestamp.tv_usec;
}

/* dequeue a producer frame and keep a copy of its bytes */
static void *take(struct reader *r, struct v4l2_buffer *b)
{
	void *copy;

	CHECK(reader_next(r, b, 20000) == 0, "no producer frame on %s", r->s.path);
	copy = malloc(b->bytesused);
	memcpy(copy, r->s.ptr[b->index], b->bytesused);
	return copy;
}

static void same(struct reader *r, struct v4l2_buffer *b, void *copy, const char *when)
{
	CHECK(!memcmp(r->s.ptr[b->index], copy, b->bytesused),
	      "the dequeued frame changed %s", when);
	printf("vs-isolate: frame unchanged %s\n", when);
}

static int group_stable(void)
{
	int type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	struct v4l2_requestbuffers req = { .type = type, .memory = V4L2_MEMORY_MMAP };
	struct reader r, peer;
	struct v4l2_buffer b, pb;
	void *copy, *pcopy;
	long long cow0;

	start_producer();
	wait_for_producer();

	/* the reader's own STREAMOFF */
	reader_open(&r, cap_path[0]);
	copy = take(&r, &b);
	CHECK(xioctl(r.s.fd, VIDIOC_STREAMOFF, &type) == 0, "STREAMOFF");
	sleep(2);
	same(&r, &b, copy, "2 s after the reader's STREAMOFF");
	/* ... and its REQBUFS(0) with the buffer still mapped */
	CHECK(xioctl(r.s.fd, VIDIOC_REQBUFS, &req) == 0, "REQBUFS(0)");
	sleep(2);
	same(&r, &b, copy, "2 s after the reader's REQBUFS(0), still mapped");
	reader_close(&r);
	free(copy);

	/* copy on write: a reader writing its frame changes nobody else's */
	if (ncap >= 2) {
		reader_open(&r, cap_path[0]);
		reader_open(&peer, cap_path[1]);
		cow0 = vs_stat(cap_path[0], "cow");
		/* both dequeue the same producer frame */
		copy = take(&r, &b);
		pcopy = take(&peer, &pb);
		/* one delivery reaches both with the same timestamp */
		while (us(&b) != us(&pb)) {
			bool r_behind = us(&b) < us(&pb);
			struct reader *x = r_behind ? &r : &peer;
			struct v4l2_buffer *xb = r_behind ? &b : &pb;
			void **xc = r_behind ? &copy : &pcopy;

			qbuf(&x->s, xb->index, 0, 0);
			free(*xc);
			*xc = take(x, xb);
		}
		memset(r.s.ptr[b.index], 0x5a, 4096);
		CHECK(((uint8_t *)r.s.ptr[b.index])[100] == 0x5a, "the writer lost its write");
		same(&peer, &pb, pcopy, "when another reader wrote its copy");
		printf("vs-isolate: cow %lld -> %lld\n", cow0, vs_stat(cap_path[0], "cow"));
		CHECK(external || vs_stat(cap_path[0], "cow") == cow0 + 1,
		      "the write was not a copy on write");
		reader_close(&r);
		free(copy);
		copy = pcopy;
		r = peer;
		b = pb;
	} else {
		reader_open(&r, cap_path[0]);
		copy = take(&r, &b);
	}

	if (external) {
		reader_close(&r);
		free(copy);
		printf("vs-isolate: stable (external producer): ok\n");
		return 0;
	}
	/* the producer's STREAMOFF and close */
	stop_producer_now();
	sleep(2);
	same(&r, &b, copy, "2 s after the producer stopped");
	/* a new producer writes its own buffers, not this one */
	start_producer();
	wait_for_producer();
	sleep(1);
	same(&r, &b, copy, "while a new producer streams");
	stop_producer_now();
	reader_close(&r);
	free(copy);
	printf("vs-isolate: stable: ok\n");
	return 0;
}

/* fanout */

static int group_fanout(void)
{
	struct reader r[MAXCAP];
	long long z0 = vs_stat(out_path, "zerocopy"), c0 = vs_stat(out_path, "copies");
	unsigned int i;

	for (i = 0; i < ncap; i++)
		CHECK(vs_stat(cap_path[i], "copies") >= 0, "no stats");
	start_producer();
	wait_for_producer();
	for (i = 0; i < ncap; i++) {
		reader_open(&r[i], cap_path[i]);
		pthread_create(&r[i].thread, NULL, reader_loop, &r[i]);
	}
	for (int t = 0; t < 600; t++) {
		bool done = true;

		for (i = 0; i < ncap; i++)
			done = done && r[i].frames >= 30;
		if (done)
			break;
		usleep(100000);
	}
	for (i = 0; i < ncap; i++) {
		r[i].stop = true;
		pthread_join(r[i].thread, NULL);
	}
	stop_producer_now();
	for (i = 0; i < ncap; i++) {
		printf("vs-isolate: reader %u: %lld frames, %lld not intact\n", i,
		       r[i].frames, r[i].bad);
		CHECK(r[i].frames >= 30, "reader %u starved", i);
		CHECK(!r[i].bad, "reader %u got frames not intact", i);
		reader_close(&r[i]);
	}
	printf("vs-isolate: pipe zerocopy %lld, copies %lld\n",
	       vs_stat(out_path, "zerocopy") - z0, vs_stat(out_path, "copies") - c0);
	CHECK(vs_stat(out_path, "copies") == c0, "the pipe copied frames");
	CHECK(vs_stat(out_path, "zerocopy") > z0, "no zero-copy delivery");
	printf("vs-isolate: fanout: ok\n");
	return 0;
}

/* paced */

static int group_paced(void)
{
	long long f0, z0, d0, frames, zerocopy, drops;
	struct v4l2_buffer b;
	double rate, prate;
	struct reader r;

	camera = true;
	scribble = !external;
	start_producer();
	wait_for_producer();
	reader_open(&r, cap_path[0]);
	CHECK(reader_next(&r, &b, 20000) == 0, "no producer frame on %s", r.s.path);
	qbuf(&r.s, b.index, 0, 0);
	f0 = vs_stat(out_path, "frames");
	z0 = vs_stat(out_path, "zerocopy");
	d0 = vs_stat(cap_path[0], "drops");
	count_for(&r, 3, &rate, &prate);
	frames = vs_stat(out_path, "frames") - f0;
	zerocopy = vs_stat(out_path, "zerocopy") - z0;
	drops = vs_stat(cap_path[0], "drops") - d0;
	for (int k = 0; k < 3; k++) {
		void *held = take(&r, &b);

		wait_more_frames(3 * NBUF, 100, "the producer stalled while a reader held a frame");
		same(&r, &b, held, "while the producer wrote three rounds of its buffers");
		free(held);
		qbuf(&r.s, b.index, 0, 0);
	}
	stop_producer_now();
	reader_close(&r);
	printf("vs-isolate: paced: %lld frames (%.1f/s read), %lld not intact, zerocopy %lld, drops %lld\n",
	       frames, rate, r.bad, zerocopy, drops);
	CHECK(frames >= 45, "the producer made %lld frames in 3.3 s", frames);
	CHECK(!r.bad, "frames not intact: the producer's writes after QBUF reached a reader");
	CHECK(zerocopy >= frames * 9 / 10, "frames were not shared");
	printf("vs-isolate: paced: ok\n");
	return 0;
}

/* idle */

static double buf_time(const struct v4l2_buffer *b)
{
	return b->timestamp.tv_sec + b->timestamp.tv_usec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

#define IDLE_ROUNDS 7

static int group_idle(void)
{
	struct v4l2_streamparm parm = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	struct v4l2_buffer b;
	struct reader r;
	double delay[IDLE_ROUNDS], period, t;
	unsigned int i, k, held[NBUF];

	reader_open(&r, cap_path[0]);
	CHECK(xioctl(r.s.fd, VIDIOC_G_PARM, &parm) == 0, "G_PARM %s", r.s.path);
	period = (double)parm.parm.capture.timeperframe.numerator /
		 parm.parm.capture.timeperframe.denominator;
	CHECK(period > 0 && period < 0.2, "%s: frame interval %.3f s", r.s.path, period);
	for (k = 0; k < IDLE_ROUNDS; k++) {
		/* hold every buffer for three frame times: ticks pass with none queued */
		for (i = 0; i < r.s.count; i++) {
			CHECK(dq(&r.s, &b, 5000) == 0, "%s: no idle frame in 5 s", r.s.path);
			CHECK(!intact(r.s.ptr[b.index], b.bytesused),
			      "%s: a producer's frame with no producer", r.s.path);
			held[i] = b.index;
		}
		usleep(3 * period * 1e6);
		t = now();
		qbuf(&r.s, held[0], 0, 0);
		CHECK(dq(&r.s, &b, 5000) == 0, "%s: no idle frame in 5 s after QBUF", r.s.path);
		delay[k] = buf_time(&b) - t;
		printf("vs-isolate: idle frame %.1f ms after QBUF\n", delay[k] * 1e3);
		qbuf(&r.s, b.index, 0, 0);
		for (i = 1; i < r.s.count; i++)
			qbuf(&r.s, held[i], 0, 0);
	}
	reader_close(&r);
	qsort(delay, IDLE_ROUNDS, sizeof(delay[0]), cmp_double);
	/* the thread's fallback would be about 1 s less the three frame times */
	printf("vs-isolate: idle: median %.1f ms, frame interval %.1f ms\n",
	       delay[IDLE_ROUNDS / 2] * 1e3, period * 1e3);
	CHECK(delay[IDLE_ROUNDS / 2] < 0.4, "idle frames wait for the thread's fallback");
	printf("vs-isolate: idle: ok\n");
	return 0;
}

/* silence */

#define VSTREAM_CID_PRODUCER_TIMEOUT	(V4L2_CID_USER_BASE | 0xe001)
/* long enough that the reader's QBUFs below come before it runs out */
#define SILENCE_MS	2000

static int group_silence(void)
{
	struct v4l2_control ctrl = { .id = VSTREAM_CID_PRODUCER_TIMEOUT,
				     .value = SILENCE_MS };
	int type = V4L2_BUF_TYPE_VIDEO_OUTPUT;
	struct v4l2_format f = fmt;
	struct side o = { 0 };
	struct v4l2_buffer b;
	struct reader r;
	unsigned int i, held[NBUF], nheld = 0;

	open_side(&o, out_path, type);
	CHECK(xioctl(o.fd, VIDIOC_S_FMT, &f) == 0, "S_FMT output");
	CHECK(xioctl(o.fd, VIDIOC_S_CTRL, &ctrl) == 0, "S_CTRL Producer Timeout ms");
	setup(&o, &f, NULL);
	CHECK(xioctl(o.fd, VIDIOC_STREAMON, &type) == 0, "STREAMON output");
	reader_open(&r, cap_path[0]);
	/* a frame, then silence: idle frames fill the reader's other buffers */
	fill(o.ptr[0], f.fmt.pix.sizeimage, 1);
	qbuf(&o, 0, f.fmt.pix.sizeimage, 0);
	CHECK(reader_next(&r, &b, 10000) == 0, "%s: no producer's frame", r.s.path);
	held[nheld++] = b.index;
	while (nheld < r.s.count) {
		CHECK(dq(&r.s, &b, SILENCE_MS + 5000) == 0,
		      "%s: no idle frame in the producer's silence", r.s.path);
		CHECK(!intact(r.s.ptr[b.index], b.bytesused),
		      "%s: a producer's frame in its silence", r.s.path);
		held[nheld++] = b.index;
	}
	/* one frame while the reader has no buffer, every buffer back at once */
	CHECK(dq(&o, &b, 5000) == 0, "DQBUF output");
	fill(o.ptr[b.index], f.fmt.pix.sizeimage, 2);
	qbuf(&o, b.index, f.fmt.pix.sizeimage, 0);
	for (i = 0; i < nheld; i++)
		qbuf(&r.s, held[i], 0, 0);
	/* silent again: idle frames, not a reader waiting for ever */
	CHECK(dq(&r.s, &b, SILENCE_MS + 5000) == 0,
	      "%s: no frame %d ms into the producer's second silence", r.s.path,
	      SILENCE_MS + 5000);
	CHECK(!intact(r.s.ptr[b.index], b.bytesused),
	      "%s: a producer's frame in its second silence", r.s.path);
	reader_close(&r);
	ctrl.value = 0;
	CHECK(xioctl(o.fd, VIDIOC_S_CTRL, &ctrl) == 0, "S_CTRL Producer Timeout ms");
	CHECK(xioctl(o.fd, VIDIOC_STREAMOFF, &type) == 0, "STREAMOFF output");
	for (i = 0; i < o.count; i++)
		munmap(o.ptr[i], o.len[i]);
	close(o.fd);
	printf("vs-isolate: silence: ok\n");
	return 0;
}

/*
 * A stalled pipe must fail the test, not hang the suite: give up after
 * 300 one-second sleeps.  Counting sleeps, not reading a clock, because
 * a guest under emulation can see its clock jump (clocksource watchdog)
 * and alarm(300) once fired 9 s after the start; a jump ends one sleep.
 */
static pthread_t watchdog_thread;

static void *watchdog(void *arg)
{
	double start = now();
	int i;

	for (i = 0; i < 300; i++)
		sleep(1);
	fprintf(stderr, "vs-isolate: stalled: 300 s of sleeps (clock says %.0f s)\n",
		now() - start);
	_exit(1);
}

int main(int argc, char **argv)
{
	const char *group = NULL;
	int c;

	signal(SIGPIPE, SIG_IGN);
	pthread_create(&watchdog_thread, NULL, watchdog, NULL);
	while ((c = getopt(argc, argv, "o:c:g:s:eX:")) != -1) {
		switch (c) {
		case 'o': out_path = optarg; break;
		case 'c': if (ncap < MAXCAP) cap_path[ncap++] = optarg; break;
		case 'g': group = optarg; break;
		case 's': sscanf(optarg, "%ux%u", &width, &height); break;
		case 'e': external = true; break;
		case 'X': frozen_cmd = optarg; break;
		default: return 2;
		}
	}
	if (!out_path || !ncap || !group)
		return 2;
	setvbuf(stdout, NULL, _IOLBF, 0);
	fmt.type = V4L2_BUF_TYPE_VIDEO_OUTPUT;
	fmt.fmt.pix.width = width;
	fmt.fmt.pix.height = height;
	fmt.fmt.pix.pixelformat = V4L2_PIX_FMT_YUYV;
	fmt.fmt.pix.field = V4L2_FIELD_NONE;
	fmt.fmt.pix.sizeimage = width * height * 2;
	if (!strcmp(group, "frozen"))
		return group_frozen();
	if (!strcmp(group, "stable"))
		return group_stable();
	if (!strcmp(group, "fanout"))
		return group_fanout();
	if (!strcmp(group, "paced"))
		return group_paced();
	if (!strcmp(group, "idle"))
		return group_idle();
	if (!strcmp(group, "silence"))
		return group_silence();
	return 2;
}
