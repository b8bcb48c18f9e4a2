#!/bin/sh
# A vstream capture node served to the network: H.264 in MPEG-TS over SRT,
# listening for callers on PORT (pipelines/srt-camera.sh on another
# machine, ffplay srt://HOST:PORT, OBS's media source, VLC).
#   pipelines/srt-serve.sh CAP [PORT]
# BITRATE (kbit/s, default 2000), LATENCY (SRT's, in ms: 120).
# x264enc (gst-plugins-ugly) reads the node's own buffers when the pipe
# streams a format it takes (I420, NV12: videoconvert passes them
# through); YUYV costs one conversion.
CAP=${1:?usage: srt-serve.sh CAP [PORT]}
PORT=${2:-7001}
exec gst-launch-1.0 -q vstreamsrc device="$CAP" ! videoconvert ! \
	x264enc tune=zerolatency speed-preset=ultrafast bitrate=${BITRATE:-2000} \
	key-int-max=30 ! video/x-h264,profile=constrained-baseline ! mpegtsmux ! \
	srtsink uri="srt://:$PORT" latency=${LATENCY:-120} wait-for-connection=false
