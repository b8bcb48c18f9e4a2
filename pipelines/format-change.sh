#!/bin/sh
# A producer that changes format mid-stream, as a camera application that
# switches resolution: 320x240, then 640x480 (NUM frames each, default 150;
# NUM1 frames of the first size if set).
# Readers that play on renegotiate: vstreamsrc hears SOURCE_CHANGE, gives
# its buffers back and takes the new format.
#   pipelines/format-change.sh [OUT]   (without OUT: the first vstream output node)
OUT=${1:-}
NUM=${NUM:-150}
trap 'kill $pid 2>/dev/null; exit 143' INT TERM
n=${NUM1:-$NUM}
for size in 320x240 640x480; do
	gst-launch-1.0 -q videotestsrc is-live=true num-buffers=$n ! \
		video/x-raw,format=YUY2,width=${size%x*},height=${size#*x},framerate=30/1 ! \
		vstreamsink ${OUT:+device="$OUT"} &
	pid=$!
	wait $pid || exit 1
	n=$NUM
done
