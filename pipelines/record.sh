#!/bin/sh
# Record a capture node to a Motion-JPEG AVI (encoders from gst-plugins-good).
#   pipelines/record.sh /dev/video1 out.avi
CAP=${1:-/dev/video1}
exec gst-launch-1.0 -q -e vstreamsrc device="$CAP" num-buffers=${NUM:-30} ! \
	videoconvert ! jpegenc ! avimux ! filesink location="${2:-vstream.avi}"
