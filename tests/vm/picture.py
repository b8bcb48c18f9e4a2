#!/usr/bin/python3
"""Pictures for the real-clients tests, and checks that what a client got
is the producer's picture (never the idle test pattern).

The producer's picture is four flat quadrants, orange and azure
crosswise: colours and a layout the idle colour bars cannot have.

  picture.py make FMT W H OUT       a raw frame (yuyv422, yuv420p, nv12)
  picture.py same FILE REF          FILE is >= 2 whole copies of REF
  picture.py recover FILE REF       FILE's frames are REF, then others (idle
                                    frames), then REF again: a sender that
                                    left and came back
  picture.py recover FILE W H TOL   the same with flat orange YUYV frames
                                    (within TOL, as flat) for REF
  picture.py jpegs FILE REF         FILE is >= 2 copies of JPEG REF, nothing else
  picture.py yuv FILE FMT W H       the last frame in FILE shows the quadrants
                                    (any size: the reader may scale)
  picture.py opencv DEV               OpenCV reads DEV and sees the quadrants
  picture.py flat FILE W H [TOL]    every YUYV frame in FILE is flat orange
                                    (pipelines/virtual-camera.sh FG=0xffff8000)
  picture.py png FILE REF [X,Y,W,H] PNG FILE has REF's pixels, every one but
                                    those in the rectangle (./demo's snapshot
                                    against the producer's; its noise moves)
  picture.py rgb "R,G,B ..." quad|bars
                                    colours sampled by a client (quadrant centres
                                    TL TR BL BR, or the 8 bar centres) match
"""
import sys

# BT.601 limited range: orange (255,128,0) and azure (0,128,255)
ORANGE = (146, 53, 193)
AZURE = (106, 203, 63)
RGB = {ORANGE: (255, 128, 0), AZURE: (0, 128, 255)}
# v4l2-tpg's 75% colour bars, left to right
BARS = [(191, 191, 191), (191, 191, 0), (0, 191, 191), (0, 191, 0),
        (191, 0, 191), (191, 0, 0), (0, 0, 191), (0, 0, 0)]
TOL = 40  # a browser's YUV->RGB matrix and range guess vary this much


def quad(x, y, w, h):
    """The colour of pixel (x, y): TL and BR orange, TR and BL azure."""
    return ORANGE if (x < w // 2) == (y < h // 2) else AZURE


def frame_size(fmt, w, h):
    return w * h * 2 if fmt == 'yuyv422' else w * h * 3 // 2


def make(fmt, w, h):
    y = bytearray(w * h)
    cw, ch = w // 2, (h if fmt == 'yuyv422' else h // 2)
    u = bytearray(cw * ch)
    v = bytearray(cw * ch)
    for j in range(h):
        for i in range(w):
            y[j * w + i] = quad(i, j, w, h)[0]
    sub = h // ch
    for j in range(ch):
        for i in range(cw):
            c = quad(2 * i, sub * j, w, h)
            u[j * cw + i], v[j * cw + i] = c[1], c[2]
    if fmt == 'yuyv422':
        out = bytearray(w * h * 2)
        out[0::2] = y
        out[1::4] = u
        out[3::4] = v
        return bytes(out)
    if fmt == 'nv12':
        uv = bytearray(cw * ch * 2)
        uv[0::2] = u
        uv[1::2] = v
        return bytes(y + uv)
    return bytes(y + u + v)


def sample(buf, fmt, w, h, x, y):
    """(Y, U, V) of pixel (x, y) in a raw frame."""
    if fmt == 'yuyv422':
        p = y * w * 2 + (x // 2) * 4
        return buf[p + (x % 2) * 2], buf[p + 1], buf[p + 3]
    c = (y // 2) * (w // 2) + x // 2
    if fmt == 'nv12':
        return buf[y * w + x], buf[w * h + 2 * c], buf[w * h + 2 * c + 1]
    return buf[y * w + x], buf[w * h + c], buf[w * h * 5 // 4 + c]


def rgb(got, kind):
    """Colours a client sampled are the quadrants' or the idle bars'."""
    want = ([RGB[c] for c in (ORANGE, AZURE, AZURE, ORANGE)]
            if kind == 'quad' else BARS)
    if len(got) != len(want):
        fail('%d samples, want %d' % (len(got), len(want)))
    for g, e in zip(got, want):
        if max(abs(p - q) for p, q in zip(g, e)) > TOL:
            fail('sampled %s, want %s (%s)' % (got, want, kind))
    print('colours are the %s: %s' % (kind, got))


def png_pixels(path):
    """(width, height, channels, rows) of an 8-bit RGB or RGBA PNG."""
    import struct
    import zlib
    data = open(path, 'rb').read()
    if data[:8] != b'\x89PNG\r\n\x1a\n':
        fail(path + ': not a PNG')
    pos, idat, hdr = 8, b'', None
    while pos < len(data):
        n, kind = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b'IHDR':
            hdr = struct.unpack('>IIBBBBB', body)
        elif kind == b'IDAT':
            idat += body
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = hdr
    if depth != 8 or ctype not in (2, 6) or interlace:
        fail('%s: depth %d colour type %d interlace %d: not 8-bit RGB(A)'
             % (path, depth, ctype, interlace))
    bpp = 3 if ctype == 2 else 4
    raw, stride, rows, prev = zlib.decompress(idat), w * bpp, [], bytearray(w * bpp)
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows


FLAT_POINTS = ((1, 1), (1, 7), (7, 1), (7, 7), (4, 4))  # eighths of W, H


def not_flat(frame, w, h, tol):
    """Why a YUYV frame is not flat orange within tol, or None."""
    for fx, fy in FLAT_POINTS:
        x, y = fx * w // 8, fy * h // 8
        got = sample(frame, 'yuyv422', w, h, x, y)
        if max(abs(p - q) for p, q in zip(got, ORANGE)) > tol:
            return '(%d,%d) is YUV %s, not the producer\'s orange %s' % (x, y, got, ORANGE)
    return None


def is_flat(frame, w, h, tol):
    return not_flat(frame, w, h, tol) is None


def fail(msg):
    print('picture.py: ' + msg)
    sys.exit(1)


def main(a):
    if a[0] == 'make':
        fmt, w, h = a[1], int(a[2]), int(a[3])
        open(a[4], 'wb').write(make(fmt, w, h))
    elif a[0] == 'same':
        data, ref = open(a[1], 'rb').read(), open(a[2], 'rb').read()
        n = len(data) // len(ref)
        if n < 2:
            fail('%d bytes: fewer than 2 frames of %d' % (len(data), len(ref)))
        for k in range(n):
            if data[k * len(ref):(k + 1) * len(ref)] != ref:
                fail('frame %d of %d differs from the producer\'s' % (k, n))
        print('%d frames, every byte the producer\'s' % n)
    elif a[0] == 'recover':
        data = open(a[1], 'rb').read()
        if len(a) > 3:
            w, h, tol = int(a[2]), int(a[3]), int(a[4])
            size = frame_size('yuyv422', w, h)
            frames = [data[k * size:(k + 1) * size] for k in range(len(data) // size)]
            good = [is_flat(f, w, h, tol) for f in frames]
        else:
            ref = open(a[2], 'rb').read()
            good = [data[k * len(ref):(k + 1) * len(ref)] == ref
                    for k in range(len(data) // len(ref))]
        runs = []
        for got in good:
            if runs and runs[-1][0] == got:
                runs[-1][1] += 1
            else:
                runs.append([got, 1])
        said = ', '.join('%d %s' % (n, 'the producer\'s' if got else 'other')
                         for got, n in runs)
        if [got for got, n in runs] != [True, False, True]:
            fail('frames in order: %s; want the producer\'s, other, the '
                 'producer\'s' % said)
        print('frames in order: ' + said)
    elif a[0] == 'jpegs':
        data, ref = open(a[1], 'rb').read(), open(a[2], 'rb').read()
        n = data.count(ref)
        if n < 2 or n * len(ref) != len(data):
            fail('%d bytes are not whole copies of the %d-byte JPEG (%d found)'
                 % (len(data), len(ref), n))
        print('%d JPEG frames, each exactly the producer\'s' % n)
    elif a[0] == 'yuv':
        fmt, w, h = a[2], int(a[3]), int(a[4])
        size = frame_size(fmt, w, h)
        data = open(a[1], 'rb').read()
        if len(data) < size:
            fail('%d bytes: no whole %dx%d %s frame' % (len(data), w, h, fmt))
        last = data[(len(data) // size - 1) * size:][:size]
        for x, y in ((w // 4, h // 4), (3 * w // 4, h // 4),
                     (w // 4, 3 * h // 4), (3 * w // 4, 3 * h // 4)):
            got, want = sample(last, fmt, w, h, x, y), quad(x, y, w, h)
            if got != want:
                fail('(%d,%d) is YUV %s, not the producer\'s %s' % (x, y, got, want))
        print('%dx%d %s: the producer\'s quadrants' % (w, h, fmt))
    elif a[0] == 'flat':
        w, h = int(a[2]), int(a[3])
        tol = int(a[4]) if len(a) > 4 else 6
        size = frame_size('yuyv422', w, h)
        data = open(a[1], 'rb').read()
        if len(data) < size or len(data) % size:
            fail('%d bytes: not whole %dx%d YUYV frames' % (len(data), w, h))
        for k in range(len(data) // size):
            bad = not_flat(data[k * size:(k + 1) * size], w, h, tol)
            if bad:
                fail('frame %d: %s' % (k, bad))
        print('%d frames %dx%d: each the producer\'s flat orange' % (len(data) // size, w, h))
    elif a[0] == 'png':
        w, h, bpp, rows = png_pixels(a[1])
        rw, rh, rbpp, ref = png_pixels(a[2])
        sx, sy, sw, sh = (int(v) for v in a[3].split(',')) if len(a) > 3 else (0, 0, 0, 0)
        if (w, h) != (rw, rh):
            fail('%dx%d, the producer\'s picture is %dx%d' % (w, h, rw, rh))
        for y in range(h):
            for x in range(w):
                if sx <= x < sx + sw and sy <= y < sy + sh:
                    continue
                got = rows[y][x * bpp:x * bpp + 3]
                want = ref[y][x * rbpp:x * rbpp + 3]
                if got != want:
                    fail('(%d,%d) is RGB %s, the producer\'s is %s'
                         % (x, y, tuple(got), tuple(want)))
        print('%dx%d: every pixel the producer\'s (%d skipped)' % (w, h, sw * sh))
    elif a[0] == 'rgb':
        rgb([tuple(int(c) for c in s.split(',')) for s in a[1].split()], a[2])
    elif a[0] == 'opencv':
        import cv2
        cap = cv2.VideoCapture(a[1], cv2.CAP_V4L2)
        if not cap.isOpened():
            fail('OpenCV cannot open ' + a[1])
        for _ in range(10):
            ok, img = cap.read()
            if not ok:
                fail('OpenCV read no frame from ' + a[1])
        h, w = img.shape[:2]
        print('OpenCV: %dx%d from %s' % (w, h, a[1]))
        rgb([tuple(int(c) for c in reversed(img[h * j // 4, w * i // 4]))
             for i, j in ((1, 1), (3, 1), (1, 3), (3, 3))], 'quad')
    else:
        fail('unknown command ' + a[0])


if __name__ == '__main__':
    main(sys.argv[1:])
