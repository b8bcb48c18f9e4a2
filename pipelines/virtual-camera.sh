#!/bin/sh
# A test pattern (or a file) as a virtual camera: feeds a vstream output node.
#   pipelines/virtual-camera.sh [OUT [file]]   (NUM=n stops after n frames,
#   PATTERN=videotestsrc pattern, FG=0xAARRGGBB a flat colour)
# Without OUT (or with ""), vstreamsink opens the first vstream output node.
# Readers then open the capture node(s) like any webcam.
OUT=${1:-}
NUM=${NUM:--1}
if [ -n "$2" ]; then
	# videorate: a file at 25, 29.97 or 60 fps becomes the 30 readers get
	SRC="filesrc location=$2 ! decodebin ! videoconvert ! videoscale ! videorate"
else
	SRC="videotestsrc is-live=true pattern=${PATTERN:-smpte} num-buffers=$NUM"
	[ -z "$FG" ] || SRC="$SRC pattern=solid-color foreground-color=$FG"
fi
exec gst-launch-1.0 -q $SRC ! \
	video/x-raw,format=${FORMAT:-YUY2},width=${WIDTH:-1280},height=${HEIGHT:-720},framerate=30/1 ! \
	vstreamsink ${OUT:+device="$OUT"} io-mode=${IO_MODE:-mmap}
