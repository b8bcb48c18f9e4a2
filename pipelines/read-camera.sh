#!/bin/sh
# Read a capture node three ways: vstreamsrc, stock v4l2src, v4l2-ctl.
#   pipelines/read-camera.sh /dev/video1 [vstreamsrc|v4l2src|v4l2-ctl]
# NUM=n frames (30); SAVE=file keeps them (raw YUY2; v4l2-ctl: as read).
CAP=${1:-/dev/video1}
NUM=${NUM:-30}
SINK="fakesink"
[ -z "$SAVE" ] || SINK="video/x-raw,format=YUY2 ! filesink location=$SAVE"
case ${2:-vstreamsrc} in
vstreamsrc)
	exec gst-launch-1.0 -q vstreamsrc device="$CAP" io-mode=${IO_MODE:-mmap} \
		num-buffers=$NUM ! videoconvert ! $SINK ;;
v4l2src)
	exec gst-launch-1.0 -q v4l2src device="$CAP" num-buffers=$NUM ! \
		videoconvert ! $SINK ;;
v4l2-ctl)
	exec v4l2-ctl -d "$CAP" --stream-mmap --stream-count=$NUM \
		${SAVE:+--stream-to=$SAVE} ;;
esac
