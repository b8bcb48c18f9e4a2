#!/bin/sh
# Interlaced SD through the pipe: 720x576 top-field-first, interleaved.
# capssetter only relabels videotestsrc's frames; the device and both
# elements carry the field order (V4L2_FIELD_INTERLACED_TB) end to end.
#   pipelines/interlaced-sd.sh [OUT]              (producer; without OUT the
#                                                  first vstream output node)
#   gst-launch-1.0 vstreamsrc ! fakesink -v       (shows interlace-mode)
OUT=${1:-}
exec gst-launch-1.0 -q videotestsrc is-live=true num-buffers=${NUM:--1} ! \
	video/x-raw,format=UYVY,width=720,height=576,framerate=25/1 ! \
	capssetter join=true caps="video/x-raw,interlace-mode=interleaved,field-order=top-field-first" ! \
	vstreamsink ${OUT:+device="$OUT"}
