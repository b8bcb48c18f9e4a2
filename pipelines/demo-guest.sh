#!/bin/sh
# The README demo, run inside the test guest: load vstream.ko, feed its
# output node from videotestsrc, read the capture node with vstreamsrc and
# write one frame as a PNG into the build dir.  Usage: demo-guest.sh BUILDDIR
B=$(readlink -f "$1")
K=$VSTREAM_KROOT
set -e
for m in videodev videobuf2-common videobuf2-v4l2 videobuf2-vmalloc v4l2-tpg; do
	modprobe -d "$K" $m
done
insmod $B/kmod/vstream.ko 'card_label="vstream demo"'
export GST_PLUGIN_PATH=$B/gst-plugin GST_REGISTRY=/tmp/gst-registry.bin
v4l2-ctl --list-devices
gst-inspect-1.0 vstreamsrc >/dev/null
echo "producer: videotestsrc ! vstreamsink device=/dev/video0"
gst-launch-1.0 -q videotestsrc pattern=smpte is-live=true ! \
	video/x-raw,format=YUY2,width=640,height=480,framerate=30/1 ! \
	vstreamsink device=/dev/video0 >/dev/null &
PROD=$!
# wait until the producer's frames flow through the pipe
for i in $(seq 1 60); do
	grep -q 'frames [1-9]' /sys/class/video4linux/video0/stats 2>/dev/null && break
	sleep 1
done
echo "consumer: vstreamsrc device=/dev/video1 ! pngenc"
gst-launch-1.0 -q vstreamsrc device=/dev/video1 num-buffers=1 ! videoconvert ! \
	pngenc ! filesink location=$B/vstream-snapshot.png
kill $PROD
wait $PROD 2>/dev/null || true
cat /sys/class/video4linux/video1/stats
rmmod vstream
echo "snapshot: $B/vstream-snapshot.png"
