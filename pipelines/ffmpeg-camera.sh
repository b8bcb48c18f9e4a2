#!/bin/sh
# Any media file as a virtual camera, with ffmpeg (the way v4l2loopback
# guides and OBS feed a device: one write() per frame, no GStreamer):
#   pipelines/ffmpeg-camera.sh OUT FILE      (loops FILE at its own speed)
# WIDTH, HEIGHT (default 1280x720) and FPS (30) say what readers get;
# FORMAT is an ffmpeg pixel format (yuyv422; nv12, yuv420p, mjpeg work too).
OUT=${1:?usage: ffmpeg-camera.sh OUT FILE}
FILE=${2:?usage: ffmpeg-camera.sh OUT FILE}
FORMAT=${FORMAT:-yuyv422}
if [ "$FORMAT" = mjpeg ]; then
	ENC="-c:v mjpeg -pix_fmt yuvj422p -q:v 5"
else
	ENC="-pix_fmt $FORMAT"
fi
exec ffmpeg -nostdin -hide_banner -loglevel error -re -stream_loop -1 -i "$FILE" \
	-vf "scale=${WIDTH:-1280}:${HEIGHT:-720},fps=${FPS:-30}" $ENC -f v4l2 "$OUT"
