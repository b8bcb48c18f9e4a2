#!/bin/sh
# A camera from an RTSP server (pipelines/rtsp-serve.py on another
# machine, an IP camera, a media server) decoded into a vstream output node.
#   pipelines/rtsp-camera.sh OUT URL     (rtsp://HOST:8554/cam)
# H.264 streams; readers get WIDTHxHEIGHT (default 1280x720) whatever the
# server's size.  LATENCY: the jitter buffer's, in ms (100).  Readers get
# the pipe's idle frames once no frame came for TIMEOUT ms (1000).
OUT=${1:?usage: rtsp-camera.sh OUT URL}
URL=${2:?usage: rtsp-camera.sh OUT URL}
W=${WIDTH:-1280} H=${HEIGHT:-720}
exec gst-launch-1.0 -q rtspsrc location="$URL" latency=${LATENCY:-100} ! \
	rtph264depay ! h264parse ! avdec_h264 ! videoconvert ! videoscale ! \
	video/x-raw,format=YUY2,width=$W,height=$H ! \
	vstreamsink device="$OUT" sync=false \
	extra-controls="c,producer_timeout_ms=${TIMEOUT:-1000}"
