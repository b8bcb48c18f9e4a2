#!/bin/sh
# A camera from the network over SRT: MPEG-TS with H.264 (from
# pipelines/srt-serve.sh, ffmpeg -f mpegts, OBS) decoded and fed to a
# vstream output node.
#   pipelines/srt-camera.sh OUT URI
# URI: srt://HOST:PORT calls a listening sender (srt-serve.sh);
# srt://:PORT listens for callers (OBS's SRT output, ffmpeg -f mpegts
# srt://HOST:PORT), one after another.  Both are tested
# (tests/vm/net.sh).  Readers get WIDTHxHEIGHT (default 1280x720)
# whatever the sender's size.  LATENCY: SRT's, in ms (120); it
# retransmits what the network loses within it.
# When the sender goes, srtsrc (1.22) calls again or listens on, and the
# pipe's readers get its idle frames once no frame came for
# TIMEOUT ms (1000: the output's Producer Timeout; test pattern or last
# frame, as the readers' "Frames Without Producer" control says).
OUT=${1:?usage: srt-camera.sh OUT URI}
URI=${2:?usage: srt-camera.sh OUT URI}
W=${WIDTH:-1280} H=${HEIGHT:-720}
# keep-listening: a listening recipe takes the sender's next call too
exec gst-launch-1.0 -q srtsrc uri="$URI" latency=${LATENCY:-120} keep-listening=true ! tsdemux ! \
	h264parse ! avdec_h264 ! videoconvert ! videoscale ! \
	video/x-raw,format=YUY2,width=$W,height=$H ! \
	vstreamsink device="$OUT" sync=false \
	extra-controls="c,producer_timeout_ms=${TIMEOUT:-1000}"
