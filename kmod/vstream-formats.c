// SPDX-License-Identifier: GPL-2.0
/*
 * Pixel format table, size/stride rules, frame
 * intervals, and a tiny JPEG writer for the MJPEG test pattern.
 */

#include <linux/gcd.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/videodev2.h>

#include "vstream.h"

static const struct vstream_format vstream_formats[] = {
	{ V4L2_PIX_FMT_YUYV,    16, 2, 2, 1, true,  false },
	{ V4L2_PIX_FMT_UYVY,    16, 2, 2, 1, true,  false },
	{ V4L2_PIX_FMT_YVYU,    16, 2, 2, 1, true,  false },
	{ V4L2_PIX_FMT_NV12,     8, 3, 2, 2, true,  false },
	{ V4L2_PIX_FMT_NV21,     8, 3, 2, 2, true,  false },
	{ V4L2_PIX_FMT_NV16,     8, 4, 2, 1, true,  false },
	{ V4L2_PIX_FMT_NV61,     8, 4, 2, 1, true,  false },
	{ V4L2_PIX_FMT_YUV420,   8, 3, 2, 2, true,  false },
	{ V4L2_PIX_FMT_YVU420,   8, 3, 2, 2, true,  false },
	{ V4L2_PIX_FMT_YUV422P,  8, 4, 2, 1, true,  false },
	{ V4L2_PIX_FMT_GREY,     8, 2, 1, 1, true,  false },
	{ V4L2_PIX_FMT_RGB565,  16, 2, 1, 1, false, false },
	{ V4L2_PIX_FMT_RGB24,   24, 2, 1, 1, false, false },
	{ V4L2_PIX_FMT_BGR24,   24, 2, 1, 1, false, false },
	{ V4L2_PIX_FMT_XRGB32,  32, 2, 1, 1, false, false },
	{ V4L2_PIX_FMT_XBGR32,  32, 2, 1, 1, false, false },
	{ V4L2_PIX_FMT_ARGB32,  32, 2, 1, 1, false, false },
	{ V4L2_PIX_FMT_ABGR32,  32, 2, 1, 1, false, false },
	{ V4L2_PIX_FMT_MJPEG,    0, 0, 1, 1, true,  true  },
};

/**
 * vstream_num_formats() - the number of formats in the table
 *
 * Return: the count.
 */
unsigned int vstream_num_formats(void)
{
	return ARRAY_SIZE(vstream_formats);
}

/**
 * vstream_format_by_index() - a format of the table by position
 * @index: from 0
 *
 * Return: the format, or NULL past the end.
 */
const struct vstream_format *vstream_format_by_index(unsigned int index)
{
	return index < ARRAY_SIZE(vstream_formats) ? &vstream_formats[index] : NULL;
}

/**
 * vstream_find_format() - a format of the table by fourcc
 * @fourcc: the V4L2 pixel format
 *
 * Return: the format, or NULL if the driver has none such.
 */
const struct vstream_format *vstream_find_format(u32 fourcc)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(vstream_formats); i++)
		if (vstream_formats[i].fourcc == fourcc)
			return &vstream_formats[i];
	return NULL;
}

/**
 * vstream_field_valid() - whether a format may carry a field order
 * @vf: the format
 * @field: a V4L2_FIELD_* value
 *
 * Return: true if @vf can stream @field; compressed formats only
 * V4L2_FIELD_NONE.
 */
bool vstream_field_valid(const struct vstream_format *vf, u32 field)
{
	if (vf->compressed)
		return field == V4L2_FIELD_NONE;
	switch (field) {
	case V4L2_FIELD_NONE:
	case V4L2_FIELD_TOP:
	case V4L2_FIELD_BOTTOM:
	case V4L2_FIELD_INTERLACED:
	case V4L2_FIELD_SEQ_TB:
	case V4L2_FIELD_SEQ_BT:
	case V4L2_FIELD_ALTERNATE:
	case V4L2_FIELD_INTERLACED_TB:
	case V4L2_FIELD_INTERLACED_BT:
		return true;
	default:
		return false;
	}
}

/**
 * vstream_fill_pix() - make a format the device accepts
 * @pipe: the pipe, its limits
 * @vf: the format of the table to use
 * @pix: the request in, the nearest format the rules allow out
 * @output: whether it is for the output node
 *
 * The same function serves TRY_FMT and S_FMT, so they never disagree.
 * Capture nodes report colorimetry; output nodes take the producer's when
 * it is valid.
 */
void vstream_fill_pix(const struct vstream_pipe *pipe, const struct vstream_format *vf,
		      struct v4l2_pix_format *pix, bool output)
{
	u32 min_bpl, max_bpl;
	bool rgb = !vf->yuv;

	pix->pixelformat = vf->fourcc;
	pix->width = clamp(pix->width, (u32)VSTREAM_MIN_SIZE, pipe->cfg.max_width);
	pix->height = clamp(pix->height, (u32)VSTREAM_MIN_SIZE, pipe->cfg.max_height);
	pix->width = round_down(pix->width, vf->walign);
	pix->height = round_down(pix->height, vf->halign);

	if (!vstream_field_valid(vf, pix->field))
		pix->field = V4L2_FIELD_NONE;

	if (vf->compressed) {
		pix->bytesperline = 0;
		pix->sizeimage = pix->width * pix->height * 2 + 4096;
	} else {
		min_bpl = pix->width * vf->depth / 8;
		max_bpl = max(min_bpl, pipe->cfg.max_width * vf->depth / 8);
		/* Honour a padded stride: it lets imported buffers fit. */
		pix->bytesperline = clamp(pix->bytesperline, min_bpl, max_bpl);
		pix->bytesperline = ALIGN(pix->bytesperline, vf->walign);
		pix->sizeimage = pix->bytesperline * pix->height * vf->size_mul / 2;
	}

	if (!output || pix->colorspace == V4L2_COLORSPACE_DEFAULT ||
	    pix->colorspace > V4L2_COLORSPACE_DCI_P3 ||
	    pix->colorspace == 4 /* unused value in the enum */) {
		pix->colorspace = V4L2_COLORSPACE_SRGB;
		pix->xfer_func = V4L2_XFER_FUNC_DEFAULT;
		pix->ycbcr_enc = V4L2_YCBCR_ENC_DEFAULT;
		pix->quantization = V4L2_QUANTIZATION_DEFAULT;
	}
	if (!pix->xfer_func || pix->xfer_func > V4L2_XFER_FUNC_SMPTE2084)
		pix->xfer_func = V4L2_MAP_XFER_FUNC_DEFAULT(pix->colorspace);
	if (!pix->ycbcr_enc || pix->ycbcr_enc > V4L2_YCBCR_ENC_SMPTE240M ||
	    pix->ycbcr_enc == 5 /* unused value in the enum */)
		pix->ycbcr_enc = V4L2_MAP_YCBCR_ENC_DEFAULT(pix->colorspace);
	if (!pix->quantization || pix->quantization > V4L2_QUANTIZATION_LIM_RANGE)
		pix->quantization = V4L2_MAP_QUANTIZATION_DEFAULT(rgb, pix->colorspace,
								  pix->ycbcr_enc);
	pix->flags = 0;
}

/**
 * vstream_clamp_tpf() - bring a time per frame into the driver's range
 * @tpf: the interval in, within 1/VSTREAM_FPS_MAX to 1/VSTREAM_FPS_MIN
 *	 seconds out (a zero one becomes 1/VSTREAM_FPS_DEFAULT)
 */
void vstream_clamp_tpf(struct v4l2_fract *tpf)
{
	unsigned long g;

	if (!tpf->numerator || !tpf->denominator) {
		tpf->numerator = 1;
		tpf->denominator = VSTREAM_FPS_DEFAULT;
		return;
	}
	/* interval must lie in [1/FPS_MAX, 1/FPS_MIN] seconds */
	if ((u64)tpf->numerator * VSTREAM_FPS_MAX < tpf->denominator) {
		tpf->numerator = 1;
		tpf->denominator = VSTREAM_FPS_MAX;
	} else if ((u64)tpf->numerator * VSTREAM_FPS_MIN > tpf->denominator) {
		tpf->numerator = 1;
		tpf->denominator = VSTREAM_FPS_MIN;
	}
	g = gcd(tpf->numerator, tpf->denominator);
	tpf->numerator /= g;
	tpf->denominator /= g;
}

/**
 * vstream_gen_jpeg() - a flat mid-grey baseline JPEG of any size
 * @dst: where it goes
 * @size: room at @dst
 * @width: image width
 * @height: image height
 *
 * Every 8x8 block codes a zero DC difference and an immediate
 * end-of-block, each with a one-bit Huffman code: two bits per block.
 *
 * Return: the number of bytes written, or 0 if @size is too small.
 */
int vstream_gen_jpeg(u8 *dst, size_t size, unsigned int width, unsigned int height)
{
	static const u8 tables[] = {
		0xff, 0xd8,					/* SOI */
		0xff, 0xdb, 0x00, 0x43, 0x00,			/* DQT, 64 x 1 */
		1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
		1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
		1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
		1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
		0xff, 0xc4, 0x00, 0x26,				/* DHT */
		0x00, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x00,
		0x10, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x00,
	};
	static const u8 sos[] = {
		0xff, 0xda, 0x00, 0x08, 0x01, 0x01, 0x00, 0x00, 0x3f, 0x00,
	};
	size_t blocks = (size_t)DIV_ROUND_UP(width, 8) * DIV_ROUND_UP(height, 8);
	size_t data = DIV_ROUND_UP(blocks * 2, 8);
	size_t total = sizeof(tables) + 13 + sizeof(sos) + data + 2;
	u8 *p = dst;

	if (total > size)
		return 0;
	memcpy(p, tables, sizeof(tables));
	p += sizeof(tables);
	*p++ = 0xff; *p++ = 0xc0; *p++ = 0x00; *p++ = 0x0b;	/* SOF0 */
	*p++ = 8;
	*p++ = height >> 8; *p++ = height & 0xff;
	*p++ = width >> 8; *p++ = width & 0xff;
	*p++ = 1; *p++ = 1; *p++ = 0x11; *p++ = 0;
	memcpy(p, sos, sizeof(sos));
	p += sizeof(sos);
	memset(p, 0, data);
	if (blocks % 4)		/* pad the last byte with one-bits */
		p[data - 1] = 0xff >> ((blocks % 4) * 2);
	p += data;
	*p++ = 0xff; *p++ = 0xd9;				/* EOI */
	return p - dst;
}

/**
 * vstream_parse_format() - parse a runtime pipe's fixed format
 * @s: "FOURCC:WxH" or "FOURCC:WxH@FPS" (FPS default 30), or empty
 * @cfg: the description whose fixed format is set (cleared by "")
 *
 * The size must be one the format allows within @cfg's limits.  Numbers
 * go through kstrtouint() in base 10: no minus sign, spaces or
 * wrap-around.
 *
 * Return: 0, or -EINVAL for anything malformed or out of range.
 */
int vstream_parse_format(const char *s, struct vstream_pipe_config *cfg)
{
	const struct vstream_format *vf;
	unsigned int w, h, fps = VSTREAM_FPS_DEFAULT;
	char buf[32], *p = buf, *ws, *hs, *fs;

	if (!*s) {
		cfg->fixed = NULL;
		return 0;
	}
	if (strscpy(buf, s, sizeof(buf)) < 0 || strlen(buf) < 5 || buf[4] != ':')
		return -EINVAL;
	buf[4] = 0;
	p = buf + 5;
	ws = strsep(&p, "x");
	hs = strsep(&p, "@");
	fs = p;
	if (!hs || kstrtouint(ws, 10, &w) || kstrtouint(hs, 10, &h) ||
	    (fs && kstrtouint(fs, 10, &fps)))
		return -EINVAL;
	vf = vstream_find_format(v4l2_fourcc(buf[0], buf[1], buf[2], buf[3]));
	if (!vf || fps < VSTREAM_FPS_MIN || fps > VSTREAM_FPS_MAX ||
	    w < VSTREAM_MIN_SIZE || w > cfg->max_width || w % vf->walign ||
	    h < VSTREAM_MIN_SIZE || h > cfg->max_height || h % vf->halign)
		return -EINVAL;
	cfg->fixed = vf;
	cfg->fixed_width = w;
	cfg->fixed_height = h;
	cfg->fixed_tpf.numerator = 1;
	cfg->fixed_tpf.denominator = fps;
	return 0;
}
