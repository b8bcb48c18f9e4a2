#!/bin/sh
# The README demo, run inside the test guest: load vstream.ko, feed its
# output node from videotestsrc, read the capture node with vstreamsrc and
# write one frame as a PNG into the build dir.  Usage: demo-guest.sh BUILDDIR
B=$(readlink -f "$1")
K=$VSTREAM_KROOT
set -e
# what vstream.ko needs, as its own modinfo says (what modprobe would load)
modprobe -d "$K" -a $(modinfo -F depends $B/kmod/vstream.ko | tr , ' ')
insmod $B/kmod/vstream.ko 'card_label="vstream demo"'
export GST_PLUGIN_PATH=$B/gst-plugin GST_REGISTRY=/tmp/gst-registry.bin
v4l2-ctl --list-devices
gst-inspect-1.0 vstreamsrc >/dev/null
# node NAME: the sysfs directory of the node with that name, whatever
# /dev/videoN it got (a machine may have other cameras)
node() {
	f=$(grep -lx "$1" /sys/class/video4linux/video*/name) || {
		echo "demo: no node named $1" >&2
		return 1
	}
	dirname "$f"
}
OUT=$(node vstream-0-output)
CAP=$(node vstream-0-capture)
echo "producer: videotestsrc ! vstreamsink device=/dev/${OUT##*/}"
gst-launch-1.0 -q videotestsrc pattern=smpte is-live=true ! \
	video/x-raw,format=YUY2,width=640,height=480,framerate=30/1 ! \
	vstreamsink device=/dev/${OUT##*/} >/dev/null &
PROD=$!
# wait until the producer's frames flow through the pipe
for i in $(seq 1 60); do
	grep -q 'frames [1-9]' $OUT/stats 2>/dev/null && break
	sleep 1
done
echo "consumer: vstreamsrc device=/dev/${CAP##*/} ! pngenc"
gst-launch-1.0 -q vstreamsrc device=/dev/${CAP##*/} num-buffers=1 ! videoconvert ! \
	pngenc ! filesink location=$B/vstream-snapshot.png
kill $PROD
wait $PROD 2>/dev/null || true
cat $CAP/stats
rmmod vstream
echo "snapshot: $B/vstream-snapshot.png"
