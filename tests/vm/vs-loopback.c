// SPDX-License-Identifier: GPL-2.0
/*
 * vs-loopback: push known frames into a vstream output node and check every
 * byte, the field, bytesused, sequence and timestamps of what a capture
 * node delivers.  Each side may use MMAP, USERPTR or DMABUF (imported from
 * buffers exported by a third node), or USERPTR that is a third node's
 * MMAP buffers, mapped ("mapped": a capture node's for the output, an
 * output node's for the capture side).
 *
 *   vs-loopback -o /dev/video0 -c /dev/video1 -f YUYV -s 320x240 -F alternate
 *               -O mmap -C dmabuf -x /dev/video3 -n 30 [-Z zero|one]
 *
 * -Z checks the capture node's sysfs counters: every frame delivered
 * without a copy (zero) or with exactly one (one).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/videodev2.h>

#include "vs-util.h"

static const struct { const char *name; unsigned int field; } fields[] = {
	{ "none", V4L2_FIELD_NONE }, { "top", V4L2_FIELD_TOP },
	{ "bottom", V4L2_FIELD_BOTTOM }, { "interlaced", V4L2_FIELD_INTERLACED },
	{ "seq_tb", V4L2_FIELD_SEQ_TB }, { "seq_bt", V4L2_FIELD_SEQ_BT },
	{ "alternate", V4L2_FIELD_ALTERNATE },
	{ "interlaced_tb", V4L2_FIELD_INTERLACED_TB },
	{ "interlaced_bt", V4L2_FIELD_INTERLACED_BT },
};

static unsigned int parse_field(const char *s)
{
	for (unsigned int i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (!strcmp(fields[i].name, s))
			return fields[i].field;
	fprintf(stderr, "unknown field %s\n", s);
	exit(2);
}

static uint8_t pattern(uint32_t frame, size_t i)
{
	return (uint8_t)(i * 131 + frame * 7 + (i >> 9));
}

static void fill(uint8_t *p, size_t n, uint32_t frame)
{
	for (size_t i = 0; i < n; i++)
		p[i] = pattern(frame, i);
	memcpy(p, &frame, sizeof(frame));
}

/* Returns the frame number the payload carries, or -1 on a mismatch. */
static long verify(const uint8_t *p, size_t n)
{
	uint32_t frame;

	memcpy(&frame, p, sizeof(frame));
	for (size_t i = sizeof(frame); i < n; i++)
		if (p[i] != pattern(frame, i)) {
			fprintf(stderr, "byte %zu of frame %u: %02x != %02x\n", i, frame,
				p[i], pattern(frame, i));
			return -1;
		}
	return frame;
}

int main(int argc, char **argv)
{
	struct side out = { .type = V4L2_BUF_TYPE_VIDEO_OUTPUT, .memory = V4L2_MEMORY_MMAP };
	struct side cap = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_MMAP };
	const char *fourcc = "YUYV", *xout = NULL, *xcap = NULL;
	unsigned int w = 320, h = 240, field = V4L2_FIELD_NONE, frames = 30;
	struct v4l2_format fmt = { .type = V4L2_BUF_TYPE_VIDEO_OUTPUT }, cfmt;
	struct v4l2_streamparm parm = { .type = V4L2_BUF_TYPE_VIDEO_OUTPUT };
	uint32_t next_frame = 0, got = 0, last_seq = 0;
	uint64_t last_ts = 0;
	long expect = -1;
	long long zc0 = 0, cp0 = 0;
	const char *copies = NULL;
	int opt, type;

	while ((opt = getopt(argc, argv, "o:c:f:s:F:O:C:x:y:n:Z:")) != -1) {
		switch (opt) {
		case 'o': out.path = optarg; break;
		case 'c': cap.path = optarg; break;
		case 'f': fourcc = optarg; break;
		case 's': sscanf(optarg, "%ux%u", &w, &h); break;
		case 'F': field = parse_field(optarg); break;
		case 'O': out.memory = parse_mem(optarg); break;
		case 'C': cap.memory = parse_mem(optarg); break;
		case 'x': xcap = optarg; break;
		case 'y': xout = optarg; break;
		case 'n': frames = atoi(optarg); break;
		case 'Z': copies = optarg; break;
		default: return 2;
		}
	}
	CHECK(out.path && cap.path && strlen(fourcc) == 4, "usage");
	out.fd = open(out.path, O_RDWR | O_NONBLOCK);
	cap.fd = open(cap.path, O_RDWR | O_NONBLOCK);
	CHECK(out.fd >= 0 && cap.fd >= 0, "open");

	fmt.fmt.pix.pixelformat = v4l2_fourcc(fourcc[0], fourcc[1], fourcc[2], fourcc[3]);
	fmt.fmt.pix.width = w;
	fmt.fmt.pix.height = h;
	fmt.fmt.pix.field = field;
	CHECK(xioctl(out.fd, VIDIOC_S_FMT, &fmt) == 0, "S_FMT output");
	CHECK(fmt.fmt.pix.field == field && fmt.fmt.pix.width == w &&
	      fmt.fmt.pix.height == h, "output format not taken");
	parm.parm.output.timeperframe.numerator = 1;
	parm.parm.output.timeperframe.denominator = 240;
	CHECK(xioctl(out.fd, VIDIOC_S_PARM, &parm) == 0, "S_PARM");
	setup(&out, &fmt, xout);

	/* the reader follows the producer once it owns buffers */
	cfmt.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	CHECK(xioctl(cap.fd, VIDIOC_G_FMT, &cfmt) == 0, "G_FMT capture");
	CHECK(cfmt.fmt.pix.pixelformat == fmt.fmt.pix.pixelformat &&
	      cfmt.fmt.pix.width == w && cfmt.fmt.pix.height == h &&
	      cfmt.fmt.pix.field == field &&
	      cfmt.fmt.pix.sizeimage == fmt.fmt.pix.sizeimage,
	      "capture did not follow the producer's format");
	cfmt.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	setup(&cap, &cfmt, xcap);

	for (unsigned int i = 0; i < out.count; i++, next_frame++) {
		fill(out.ptr[i], fmt.fmt.pix.sizeimage, next_frame);
		qbuf(&out, i, fmt.fmt.pix.sizeimage, field == V4L2_FIELD_ALTERNATE ?
		     (next_frame & 1 ? V4L2_FIELD_BOTTOM : V4L2_FIELD_TOP) : field);
	}
	type = V4L2_BUF_TYPE_VIDEO_OUTPUT;
	CHECK(xioctl(out.fd, VIDIOC_STREAMON, &type) == 0, "STREAMON output");
	/* Readers that stream before the producer get the idle pattern, so
	 * start the producer first. */
	for (unsigned int i = 0; i < cap.count; i++)
		qbuf(&cap, i, 0, 0);
	type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	zc0 = vs_stat(cap.path, "zerocopy");
	cp0 = vs_stat(cap.path, "copies");
	CHECK(xioctl(cap.fd, VIDIOC_STREAMON, &type) == 0, "STREAMON capture");

	while (got < frames) {
		struct pollfd p[2] = { { .fd = out.fd, .events = POLLOUT },
					{ .fd = cap.fd, .events = POLLIN } };
		struct v4l2_buffer b;

		CHECK(poll(p, 2, 5000) > 0, "timeout after %u frames", got);
		memset(&b, 0, sizeof(b));
		b.type = V4L2_BUF_TYPE_VIDEO_OUTPUT;
		b.memory = out.memory;
		if (xioctl(out.fd, VIDIOC_DQBUF, &b) == 0) {
			fill(out.ptr[b.index], fmt.fmt.pix.sizeimage, next_frame);
			qbuf(&out, b.index, fmt.fmt.pix.sizeimage,
			     field == V4L2_FIELD_ALTERNATE ?
			     (next_frame & 1 ? V4L2_FIELD_BOTTOM : V4L2_FIELD_TOP) : field);
			next_frame++;
		}
		memset(&b, 0, sizeof(b));
		b.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
		b.memory = cap.memory;
		if (xioctl(cap.fd, VIDIOC_DQBUF, &b) == 0) {
			long frame;
			uint64_t ts = b.timestamp.tv_sec * 1000000ULL + b.timestamp.tv_usec;
			unsigned int want_field = field;

			CHECK(b.bytesused == cfmt.fmt.pix.sizeimage, "bytesused %u != %u",
			      b.bytesused, cfmt.fmt.pix.sizeimage);
			frame = verify(cap.ptr[b.index], b.bytesused);
			CHECK(frame >= 0, "payload mismatch");
			/* the producer's first frames may precede the reader */
			CHECK(expect < 0 || frame >= expect, "frame %ld went back", frame);
			if (field == V4L2_FIELD_ALTERNATE)
				want_field = frame & 1 ? V4L2_FIELD_BOTTOM : V4L2_FIELD_TOP;
			CHECK(b.field == want_field, "field %u != %u", b.field, want_field);
			CHECK(!got || b.sequence >= last_seq, "sequence went back");
			CHECK(ts && ts >= last_ts, "timestamp");
			CHECK((b.flags & V4L2_BUF_FLAG_TIMESTAMP_MASK) ==
			      V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC, "timestamp type");
			expect = frame + 1;
			last_seq = b.sequence;
			last_ts = ts;
			got++;
			qbuf(&cap, b.index, 0, 0);
		}
	}
	if (copies) {
		long long zc = vs_stat(cap.path, "zerocopy") - zc0;
		long long cp = vs_stat(cap.path, "copies") - cp0;

		printf("vs-loopback: %lld frames without a copy, %lld copied\n", zc, cp);
		CHECK(zc0 >= 0 && cp0 >= 0, "no stats for %s", cap.path);
		if (!strcmp(copies, "zero"))
			CHECK(cp == 0 && zc >= got, "expected every frame without a copy");
		else
			CHECK(zc == 0 && cp >= got, "expected exactly one copy per frame");
	}
	printf("vs-loopback: %u frames %s %ux%u field %u out %d cap %d verified\n",
	       got, fourcc, w, h, field, out.memory, cap.memory);
	return 0;
}
