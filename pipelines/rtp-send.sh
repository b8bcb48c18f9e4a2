#!/bin/sh
# Send video to another machine as RTP: uncompressed (RFC 4175, rtpvrawpay)
# for a LAN, where 320x240 at 30 fps is 37 Mbit/s and 1280x720 440; or
# H.264 (CODEC=h264, x264enc from gst-plugins-ugly) for anything else.
#   pipelines/rtp-send.sh HOST [PORT] [file]
# WIDTH, HEIGHT, RATE (frames/s, default 30), PATTERN (videotestsrc),
# RAW=file: frames of raw YUY2 at WIDTHxHEIGHT, sent in a loop;
# BITRATE (kbit/s, H.264, default 2000).
# The receiving side is pipelines/rtp-camera.sh with the same CODEC (and
# for raw video the same size).
HOST=${1:?usage: rtp-send.sh HOST [PORT] [file]}
PORT=${2:-5004}
W=${WIDTH:-320} H=${HEIGHT:-240}
if [ -n "$3" ]; then
	SRC="filesrc location=$3 ! decodebin ! videoconvert ! videoscale ! videorate"
elif [ -n "$RAW" ]; then
	SRC="multifilesrc location=$RAW loop=true ! rawvideoparse format=yuy2 width=$W height=$H framerate=${RATE:-30}/1 ! identity sync=true"
else
	SRC="videotestsrc is-live=true pattern=${PATTERN:-smpte}"
	[ -z "$FG" ] || SRC="$SRC pattern=solid-color foreground-color=$FG"
fi
case ${CODEC:-raw} in
# rtpvrawpay's 4:2:2 is UYVY; YUY2 to UYVY is a byte swap, lossless
raw) ENC="video/x-raw,format=UYVY ! rtpvrawpay" ;;
# a key frame every second and the parameter sets with each: a receiver
# that starts late or loses packets recovers within a second
h264) ENC="x264enc tune=zerolatency speed-preset=ultrafast bitrate=${BITRATE:-2000} key-int-max=${RATE:-30} !
	video/x-h264,profile=constrained-baseline ! rtph264pay config-interval=-1 pt=96" ;;
*) echo "rtp-send.sh: CODEC is raw or h264" >&2; exit 2 ;;
esac
exec gst-launch-1.0 -q $SRC ! \
	video/x-raw,width=$W,height=$H,framerate=${RATE:-30}/1 ! videoconvert ! \
	$ENC ! udpsink host="$HOST" port=$PORT
