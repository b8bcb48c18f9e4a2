#!/bin/sh
# Record a capture node to a Motion-JPEG AVI (encoders from gst-plugins-good).
#   pipelines/record.sh [CAP [out.avi]]   (without CAP or with "": the first
#   vstream capture node)
CAP=${1:-}
exec gst-launch-1.0 -q -e vstreamsrc ${CAP:+device="$CAP"} num-buffers=${NUM:-30} ! \
	videoconvert ! jpegenc ! avimux ! filesink location="${2:-vstream.avi}"
