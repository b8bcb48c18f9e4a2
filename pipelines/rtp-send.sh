#!/bin/sh
# Send video to another machine as uncompressed RTP (RFC 4175, rtpvrawpay):
# for a LAN, where 320x240 at 30 fps is 37 Mbit/s and 1280x720 440.
#   pipelines/rtp-send.sh HOST [PORT] [file]
# WIDTH, HEIGHT, RATE (frames/s, default 30), PATTERN (videotestsrc),
# RAW=file: frames of raw YUY2 at WIDTHxHEIGHT, sent in a loop.
# The receiving side is pipelines/rtp-camera.sh with the same size.
HOST=${1:?usage: rtp-send.sh HOST [PORT] [file]}
PORT=${2:-5004}
W=${WIDTH:-320} H=${HEIGHT:-240}
if [ -n "$3" ]; then
	SRC="filesrc location=$3 ! decodebin ! videoconvert ! videoscale ! videorate"
elif [ -n "$RAW" ]; then
	SRC="multifilesrc location=$RAW loop=true ! rawvideoparse format=yuy2 width=$W height=$H framerate=${RATE:-30}/1 ! identity sync=true"
else
	SRC="videotestsrc is-live=true pattern=${PATTERN:-smpte}"
fi
# rtpvrawpay's 4:2:2 is UYVY; YUY2 to UYVY is a byte swap, lossless
exec gst-launch-1.0 -q $SRC ! \
	video/x-raw,width=$W,height=$H,framerate=${RATE:-30}/1 ! videoconvert ! \
	video/x-raw,format=UYVY ! rtpvrawpay ! udpsink host="$HOST" port=$PORT
