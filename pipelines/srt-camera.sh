#!/bin/sh
# A camera from the network over SRT: MPEG-TS with H.264 (from
# pipelines/srt-serve.sh, ffmpeg -f mpegts, OBS) decoded and fed to a
# vstream output node.
#   pipelines/srt-camera.sh OUT URI
# URI: srt://HOST:PORT calls a listening sender; srt://:PORT listens for
# one.  Readers get WIDTHxHEIGHT (default 1280x720) whatever the sender's
# size.  LATENCY: SRT's, in ms (120); it retransmits what the network
# loses within it.
# When the sender goes, srtsrc warns and reconnects, and the pipe's
# readers get its idle frames a second later (test pattern or last frame:
# the "Frames Without Producer" control); the picture returns with the
# sender, readers never reopening.
OUT=${1:?usage: srt-camera.sh OUT URI}
URI=${2:?usage: srt-camera.sh OUT URI}
W=${WIDTH:-1280} H=${HEIGHT:-720}
exec gst-launch-1.0 -q srtsrc uri="$URI" latency=${LATENCY:-120} ! tsdemux ! \
	h264parse ! avdec_h264 ! videoconvert ! videoscale ! \
	video/x-raw,format=YUY2,width=$W,height=$H ! \
	vstreamsink device="$OUT" sync=false
