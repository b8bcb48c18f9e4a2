#!/bin/sh
# Read a capture node three ways: vstreamsrc, stock v4l2src, v4l2-ctl.
#   pipelines/read-camera.sh [CAP [vstreamsrc|v4l2src|v4l2-ctl]]
# Without CAP (or with ""), vstreamsrc opens the first vstream capture node;
# v4l2src and v4l2-ctl need CAP.
# NUM=n frames (30); SAVE=file keeps them (raw YUY2; v4l2-ctl: as read).
CAP=${1:-}
NUM=${NUM:-30}
SINK="fakesink"
[ -z "$SAVE" ] || SINK="video/x-raw,format=YUY2 ! filesink location=$SAVE"
case ${2:-vstreamsrc} in
vstreamsrc)
	exec gst-launch-1.0 -q vstreamsrc ${CAP:+device="$CAP"} io-mode=${IO_MODE:-mmap} \
		num-buffers=$NUM ! videoconvert ! $SINK ;;
v4l2src)
	[ -n "$CAP" ] || { echo "read-camera.sh: v4l2src needs CAP" >&2; exit 2; }
	exec gst-launch-1.0 -q v4l2src device="$CAP" num-buffers=$NUM ! \
		videoconvert ! $SINK ;;
v4l2-ctl)
	[ -n "$CAP" ] || { echo "read-camera.sh: v4l2-ctl needs CAP" >&2; exit 2; }
	exec v4l2-ctl -d "$CAP" --stream-mmap --stream-count=$NUM \
		${SAVE:+--stream-to=$SAVE} ;;
esac
