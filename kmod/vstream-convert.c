// SPDX-License-Identifier: GPL-2.0
/*
 * Format conversion for readers that stream another layout than the
 * producer.
 *
 * A reader that opened its node before the producer started (a browser
 * page opened before the meeting's camera app) has picked a format and
 * size from the idle node's list, and most applications never renegotiate
 * (they ignore SOURCE_CHANGE).  Rather than keep showing them the idle
 * pattern, such a reader gets the producer's picture converted: any 8-bit
 * YUV layout to any other, scaled by nearest neighbour.  This costs one
 * pass over the reader's frame, no more than the copy that a reader
 * outside zero copy gets anyway; readers with the producer's layout are
 * not affected.  Only progressive frames are converted: scaling an
 * interlaced frame would mix its fields.  RGB and compressed formats are
 * not converted: those readers keep the idle frame and SOURCE_CHANGE.
 */

#include <linux/kernel.h>
#include <linux/videodev2.h>

#include "vstream.h"

/* Where the samples of one frame are: a pointer and a step per component. */
struct vstream_yuv {
	u8 *y, *u, *v;		/* u and v are NULL for GREY */
	u32 ystride, cstride;	/* bytes per line of luma and of chroma */
	u8 ystep, cstep;	/* bytes from one sample to the next in a line */
	u8 vsub;		/* chroma lines per luma line: 1 or 2 (4:2:0) */
	u32 width, height;
};

/* Packed 4:2:2: two pixels in four bytes, at these offsets */
static void vstream_yuv_packed(struct vstream_yuv *m, u8 *base, u8 y, u8 u, u8 v)
{
	m->y = base + y;
	m->u = base + u;
	m->v = base + v;
	m->ystep = 2;
	m->cstep = 4;
}

static void vstream_yuv_map(const struct v4l2_pix_format *pix, u8 *base,
			    struct vstream_yuv *m)
{
	u32 bpl = pix->bytesperline, h = pix->height;
	u8 *chroma = base + bpl * h;

	*m = (struct vstream_yuv) {
		.y = base, .ystride = bpl, .ystep = 1, .cstride = bpl,
		.vsub = 1, .width = pix->width, .height = h,
	};
	switch (pix->pixelformat) {
	case V4L2_PIX_FMT_YUYV:
		vstream_yuv_packed(m, base, 0, 1, 3);
		return;
	case V4L2_PIX_FMT_UYVY:
		vstream_yuv_packed(m, base, 1, 0, 2);
		return;
	case V4L2_PIX_FMT_YVYU:
		vstream_yuv_packed(m, base, 0, 3, 1);
		return;
	case V4L2_PIX_FMT_NV12:
	case V4L2_PIX_FMT_NV16:
		m->u = chroma;
		m->v = chroma + 1;
		break;
	case V4L2_PIX_FMT_NV21:
	case V4L2_PIX_FMT_NV61:
		m->v = chroma;
		m->u = chroma + 1;
		break;
	case V4L2_PIX_FMT_YUV420:
	case V4L2_PIX_FMT_YVU420:
	case V4L2_PIX_FMT_YUV422P:
		m->cstride = bpl / 2;
		m->cstep = 1;
		m->vsub = pix->pixelformat == V4L2_PIX_FMT_YUV422P ? 1 : 2;
		m->u = chroma;
		m->v = chroma + m->cstride * (h / m->vsub);
		if (pix->pixelformat == V4L2_PIX_FMT_YVU420)
			swap(m->u, m->v);
		return;
	default:	/* GREY */
		return;
	}
	/* semi-planar: interleaved chroma, one pair per two pixels */
	m->cstep = 2;
	m->vsub = (pix->pixelformat == V4L2_PIX_FMT_NV12 ||
		   pix->pixelformat == V4L2_PIX_FMT_NV21) ? 2 : 1;
}

static bool vstream_yuv_known(u32 fourcc)
{
	switch (fourcc) {
	case V4L2_PIX_FMT_YUYV:
	case V4L2_PIX_FMT_UYVY:
	case V4L2_PIX_FMT_YVYU:
	case V4L2_PIX_FMT_NV12:
	case V4L2_PIX_FMT_NV16:
	case V4L2_PIX_FMT_NV21:
	case V4L2_PIX_FMT_NV61:
	case V4L2_PIX_FMT_YUV420:
	case V4L2_PIX_FMT_YVU420:
	case V4L2_PIX_FMT_YUV422P:
	case V4L2_PIX_FMT_GREY:
		return true;
	default:
		return false;
	}
}

/**
 * vstream_can_convert() - whether the driver converts between two formats
 * @src: the producer's format
 * @dst: a reader's format
 *
 * Return: true if a reader streaming @dst can be fed from a producer
 * streaming @src.
 */
bool vstream_can_convert(const struct v4l2_pix_format *src,
			 const struct v4l2_pix_format *dst)
{
	return src->field == V4L2_FIELD_NONE && dst->field == V4L2_FIELD_NONE &&
	       vstream_yuv_known(src->pixelformat) && vstream_yuv_known(dst->pixelformat);
}

/* One plane's worth of samples, nearest neighbour; 16.16 fixed point steps. */
static void vstream_scale(u8 *d, u32 dstride, u8 dstep, u32 dw, u32 dh,
			  const u8 *s, u32 sstride, u8 sstep, u32 sw, u32 sh)
{
	u32 xstep = div_u64((u64)sw << 16, dw);
	u32 x, y;

	for (y = 0; y < dh; y++) {
		const u8 *sl = s + (u64)y * sh / dh * sstride;
		u8 *dl = d + y * dstride;
		u32 sx = 0;

		for (x = 0; x < dw; x++, sx += xstep)
			dl[x * dstep] = sl[(sx >> 16) * sstep];
	}
}

static void vstream_fill(u8 *d, u32 dstride, u8 dstep, u32 dw, u32 dh, u8 val)
{
	u32 x, y;

	for (y = 0; y < dh; y++)
		for (x = 0; x < dw; x++)
			d[y * dstride + x * dstep] = val;
}

/**
 * vstream_convert() - convert and scale one frame
 * @src: the format of @sbuf
 * @sbuf: the producer's frame
 * @dst: the format of @dbuf
 * @dbuf: the reader's buffer
 *
 * The caller checked vstream_can_convert() and the sizes of both buffers.
 */
void vstream_convert(const struct v4l2_pix_format *src, const void *sbuf,
		     const struct v4l2_pix_format *dst, void *dbuf)
{
	struct vstream_yuv s, d;
	u32 dcw, dch, scw, sch;

	vstream_yuv_map(src, (u8 *)sbuf, &s);
	vstream_yuv_map(dst, dbuf, &d);
	vstream_scale(d.y, d.ystride, d.ystep, d.width, d.height,
		      s.y, s.ystride, s.ystep, s.width, s.height);
	if (!d.u)
		return;
	dcw = d.width / 2;
	dch = d.height / d.vsub;
	if (!s.u) {	/* from GREY: neutral chroma */
		vstream_fill(d.u, d.cstride, d.cstep, dcw, dch, 0x80);
		vstream_fill(d.v, d.cstride, d.cstep, dcw, dch, 0x80);
		return;
	}
	scw = s.width / 2;
	sch = s.height / s.vsub;
	vstream_scale(d.u, d.cstride, d.cstep, dcw, dch, s.u, s.cstride, s.cstep, scw, sch);
	vstream_scale(d.v, d.cstride, d.cstep, dcw, dch, s.v, s.cstride, s.cstep, scw, sch);
}
