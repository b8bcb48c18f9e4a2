#!/bin/sh
# The network group, run inside the guest by tests/vm/vm-run: cameras
# across machines with pipelines/rtp-*.sh and srt-*.sh.  Two network
# namespaces stand for the two machines: the sender in "tx", vstream's
# receiver and its readers in the guest's own, joined by a veth pair with
# 20 ms delay and 1 % loss each way (tc netem).  Every reader's frames are
# judged by picture: the producer's, never the idle bars.
# Usage: net.sh BUILDDIR SRCDIR
B=$(readlink -f "$1")
S=$(readlink -f "$2")
K=$VSTREAM_KROOT
LOG=$B/vm-logs-net
rm -rf $LOG
mkdir -p $LOG
export GST_PLUGIN_PATH=$B/gst-plugin GST_REGISTRY=/tmp/gst-registry.bin
export GST_DEBUG_NO_COLOR=1 TMPDIR=/tmp TEMP=/tmp
. $S/tests/vm/lib.sh
P=$S/pipelines
PIC="python3 $S/tests/vm/picture.py"
TX="ip netns exec tx"
RX_IP=10.9.0.2 TX_IP=10.9.0.1
export WIDTH=320 HEIGHT=240

netns() {
	modprobe -d "$K" veth && modprobe -d "$K" sch_netem || return 1
	ip netns add tx &&
		ip link add rx0 type veth peer name tx0 netns tx &&
		ip addr add $RX_IP/24 dev rx0 && ip link set rx0 up && ip link set lo up &&
		$TX ip addr add $TX_IP/24 dev tx0 && $TX ip link set tx0 up &&
		$TX ip link set lo up || return 1
	tc qdisc add dev rx0 root netem delay 20ms loss 1% &&
		$TX tc qdisc add dev tx0 root netem delay 20ms loss 1% || return 1
	tc qdisc show dev rx0
	$TX tc qdisc show dev tx0
}

# stop PID...: end background pipelines and reap them
stop() {
	kill "$@" 2>/dev/null
	wait "$@" 2>/dev/null
	return 0
}

# raw RTP: the sender loops a picture the idle bars cannot pass for
send_raw() {
	$TX env RAW=/tmp/net-ref.yuyv RATE=15 $P/rtp-send.sh $RX_IP 5004 \
		>>$LOG/rtp-send.log 2>&1 &
	snd=$!
}

# The uncompressed stream across the lossy link: every frame a reader
# gets is bit-exact.  The receiver stays up for rtp_recover.
rtp_raw() {
	$P/rtp-camera.sh $OUT0 5004 >$LOG/rtp-camera.log 2>&1 &
	rcv=$!
	send_raw
	b=$(frames $OUT0)
	wait_frames $OUT0 $((b + 5)) 180 &&
		NUM=10 SAVE=/tmp/net-raw.yuyv $P/read-camera.sh $CAP0 v4l2-ctl >/dev/null &&
		$PIC same /tmp/net-raw.yuyv /tmp/net-ref.yuyv
	r=$?
	stop $snd
	cat $LOG/rtp-camera.log
	return $r
}

# The sender goes and comes back while the receiver and a reader stay:
# the reader gets the sender's frames, the pipe's idle frames (a second
# after the last frame), then the sender's again, never reopening
rtp_recover() {
	send_raw
	b=$(frames $OUT0)
	wait_frames $OUT0 $((b + 5)) 180 || { stop $snd; return 1; }
	v4l2-ctl -d $CAP0 --stream-mmap --stream-count=100000 \
		--stream-to=/tmp/net-rec.yuyv >/dev/null 2>&1 &
	rd=$!
	b=$(frames $CAP0)
	wait_frames $CAP0 $((b + 15)) 180 || { stop $rd $snd; return 1; }
	stop $snd
	echo "sender stopped"
	# idle frames come at the reader's own rate once the pipe is silent
	b=$(frames $CAP0)
	wait_frames $CAP0 $((b + 30)) 120 || { stop $rd; return 1; }
	send_raw
	echo "sender started again"
	b=$(frames $OUT0)
	wait_frames $OUT0 $((b + 15)) 180 || { stop $rd $snd; return 1; }
	stop $rd $snd $rcv
	$PIC recover /tmp/net-rec.yuyv /tmp/net-ref.yuyv
}

# H.264 in MPEG-TS over SRT, both ways through vstream: pipe 0's reader
# served from "tx" (srt-serve.sh), pipe 1 fed from it (srt-camera.sh);
# SRT retransmits what netem drops.  Judged by colour: flat orange
# within 12 levels of Y, U, V (x264's quantisation)
srt_h264() {
	$TX env FG=0xffff8000 $P/virtual-camera.sh $OUT0 >$LOG/srt-producer.log 2>&1 &
	prod=$!
	$TX $P/srt-serve.sh $CAP0 7001 >$LOG/srt-serve.log 2>&1 &
	srv=$!
	$P/srt-camera.sh $OUT1 srt://$TX_IP:7001 >$LOG/srt-camera.log 2>&1 &
	cam=$!
	b=$(frames $OUT1)
	wait_frames $OUT1 $((b + 10)) 240 &&
		NUM=10 SAVE=/tmp/net-srt.yuyv $P/read-camera.sh $CAP1 v4l2-ctl >/dev/null &&
		$PIC flat /tmp/net-srt.yuyv 320 240 12
	r=$?
	stop $cam $srv $prod
	cat $LOG/srt-camera.log $LOG/srt-serve.log
	return $r
}

# H.264 over RTP: no retransmission, so a lost packet can spoil frames
# until the next key frame (one a second); the newest frames are judged
rtp_h264() {
	CODEC=h264 $P/rtp-camera.sh $OUT1 5006 >$LOG/rtp264-camera.log 2>&1 &
	rcv=$!
	$TX env CODEC=h264 FG=0xffff8000 $P/rtp-send.sh $RX_IP 5006 \
		>$LOG/rtp264-send.log 2>&1 &
	snd=$!
	b=$(frames $OUT1)
	wait_frames $OUT1 $((b + 10)) 240 &&
		NUM=5 SAVE=/tmp/net-264.yuyv $P/read-camera.sh $CAP1 v4l2-ctl >/dev/null &&
		$PIC flat /tmp/net-264.yuyv 320 240 12
	r=$?
	stop $snd $rcv
	cat $LOG/rtp264-camera.log
	return $r
}

echo "# vstream network group on $(uname -r)"
run "load videobuf2 and v4l2-tpg" load_deps
run "insmod vstream.ko pipes=2 readers=1" load pipes=2 readers=1
OUT0=$(node vstream-0-output) CAP0=$(node vstream-0-capture)
OUT1=$(node vstream-1-output) CAP1=$(node vstream-1-capture)
run "two network namespaces, veth, netem 20 ms 1 % loss each way" netns
$PIC make yuyv422 320 240 /tmp/net-ref.yuyv
run "RTP raw across the lossy link: frames bit-exact" rtp_raw
run "RTP raw: sender gone and back, the reader gets its frames, idle frames, its frames" rtp_recover
run "SRT H.264 out of one pipe and into another: flat orange within 12" srt_h264
run "RTP H.264 across the lossy link: flat orange within 12" rtp_h264
run "dmesg has no WARNING/BUG/Oops" \
	sh -c "! dmesg | $S/tests/vm/dmesg-filter | grep -E 'WARNING:|BUG:|Oops|Call Trace'"
echo "1..$n"
echo "# network group: $((n - failed)) passed, $failed failed"
[ $failed -eq 0 ]
