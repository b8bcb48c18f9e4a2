#!/bin/sh
# The network group, run inside the guest by tests/vm/vm-run: cameras
# across machines with pipelines/rtp-*.sh, srt-*.sh and rtsp-*.  Two network
# namespaces stand for the two machines: the sender in "tx", vstream's
# receiver and its readers in the guest's own, joined by a veth pair with
# 20 ms delay and 1 % loss each way (tc netem).  Every reader's frames are
# judged by picture: the producer's, never the idle bars.
# Usage: net.sh BUILDDIR SRCDIR
B=$(readlink -f "$1")
S=$(readlink -f "$2")
. $S/tests/vm/lib.sh
group_init net
P=$S/pipelines
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
		NUM=10 SAVE=/tmp/net-raw.yuyv timeout 120 $P/read-camera.sh $CAP0 v4l2-ctl >/dev/null &&
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
	wait_frames $OUT0 $((b + 5)) 180 || { stop $snd $rcv; return 1; }
	v4l2-ctl -d $CAP0 --stream-mmap --stream-count=100000 \
		--stream-to=/tmp/net-rec.yuyv >/dev/null 2>&1 &
	rd=$!
	b=$(frames $CAP0)
	wait_frames $CAP0 $((b + 15)) 180 || { stop $rd $snd $rcv; return 1; }
	stop $snd
	echo "sender stopped"
	# idle frames come at the reader's own rate once the pipe is silent
	# for the recipe's Producer Timeout
	b=$(frames $CAP0)
	wait_frames $CAP0 $((b + 30)) 120 || { stop $rd $rcv; return 1; }
	send_raw
	echo "sender started again"
	b=$(frames $OUT0)
	wait_frames $OUT0 $((b + 15)) 180 || { stop $rd $snd $rcv; return 1; }
	stop $rd $snd $rcv
	$PIC recover /tmp/net-rec.yuyv /tmp/net-ref.yuyv
}

# served_h264 NAME SERVE PORT CAMERA URL: both ways through vstream, an
# orange producer on pipe 0 whose reader pipelines/SERVE serves from
# "tx" on PORT, and pipe 1 fed from URL by pipelines/CAMERA.  Judged by
# colour: pipe 1's reader sees flat orange within 12 levels of Y, U, V
# (x264's quantisation)
served_h264() {
	$TX env FG=0xffff8000 $P/virtual-camera.sh $OUT0 >$LOG/$1-producer.log 2>&1 &
	prod=$!
	$TX $P/$2 $CAP0 $3 >$LOG/$1-serve.log 2>&1 &
	srv=$!
	# rtsp-serve.py says when it listens: an RTSP client does not retry
	# (srtsrc does)
	i=0
	while [ "$1" = rtsp ] && ! grep -q rtsp:// $LOG/$1-serve.log; do
		i=$((i + 1))
		if [ $i -gt 600 ] || ! kill -0 $srv 2>/dev/null; then
			stop $srv $prod
			cat $LOG/$1-serve.log
			return 1
		fi
		sleep 0.2
	done
	$P/$4 $OUT1 $5 >$LOG/$1-camera.log 2>&1 &
	cam=$!
	b=$(frames $OUT1)
	wait_frames $OUT1 $((b + 10)) 240 &&
		NUM=5 SAVE=/tmp/net-$1.yuyv timeout 120 $P/read-camera.sh $CAP1 v4l2-ctl >/dev/null &&
		$PIC flat /tmp/net-$1.yuyv 320 240 12
	r=$?
	stop $cam $srv $prod
	cat $LOG/$1-camera.log $LOG/$1-serve.log
	return $r
}

# SRT the other way round, as OBS (through ffmpeg's libsrt) sends: pipe
# 1's recipe listens, ffmpeg in "tx" calls it with flat orange in H.264
# and MPEG-TS, goes, and calls again.  A reader open throughout gets
# orange, the idle bars once the caller is gone for the recipe's Producer
# Timeout, then orange again
srt_send() {
	$TX ffmpeg -nostdin -hide_banner -loglevel error -re -f lavfi \
		-i color=c=0xff8000:s=320x240:r=30 -c:v libx264 -preset ultrafast \
		-tune zerolatency -g 30 -pix_fmt yuv420p -f mpegts \
		"srt://$RX_IP:7002?mode=caller&latency=120000" >>$LOG/srtl-send.log 2>&1 &
	snd=$!
}
srt_listen() {
	$P/srt-camera.sh $OUT1 srt://:7002 >$LOG/srtl-camera.log 2>&1 &
	cam=$!
	srt_send
	b=$(frames $OUT1)
	if wait_frames $OUT1 $((b + 10)) 240; then
		v4l2-ctl -d $CAP1 --stream-mmap --stream-count=100000 \
			--stream-to=/tmp/net-srtl.yuyv >/dev/null 2>&1 &
		rd=$!
		b=$(frames $CAP1)
		wait_frames $CAP1 $((b + 15)) 180 && stop $snd && echo "caller stopped" &&
			b=$(frames $CAP1) && wait_frames $CAP1 $((b + 30)) 120 && {
			srt_send
			echo "caller started again"
			b=$(frames $OUT1)
			wait_frames $OUT1 $((b + 15)) 240
		}
		r=$?
		stop $rd
	else
		r=1
	fi
	stop $snd $cam
	cat $LOG/srtl-camera.log $LOG/srtl-send.log
	[ $r = 0 ] && $PIC recover /tmp/net-srtl.yuyv 320 240 12
}

# The serving recipes' encoder reads the node's own buffers when the pipe
# streams a format it takes: an NV12 producer, then srt-serve.sh's and
# rtsp-serve.py's vstreamsrc ! videoconvert (passing through) ! x264enc.
# vstreamsrc's stats: every frame pushed zero-copy, none copied; the
# reader node's: no copy or conversion in the kernel either
encoder_zero_copy() {
	FORMAT=NV12 FG=0xffff8000 $P/virtual-camera.sh $OUT0 >$LOG/zc-producer.log 2>&1 &
	prod=$!
	b=$(frames $OUT0)
	wait_frames $OUT0 $((b + 5)) 180 || { stop $prod; return 1; }
	kc=$(node_stat $CAP0 copies)
	timeout 180 /usr/bin/python3 - $CAP0 <<-'PY'
	import sys
	import gi
	gi.require_version('Gst', '1.0')
	from gi.repository import Gst
	Gst.init(None)
	p = Gst.parse_launch(
	    'vstreamsrc name=src device=%s num-buffers=30 ! videoconvert ! x264enc '
	    'tune=zerolatency speed-preset=ultrafast ! fakesink' % sys.argv[1])
	p.set_state(Gst.State.PLAYING)
	msg = p.get_bus().timed_pop_filtered(
	    Gst.CLOCK_TIME_NONE, Gst.MessageType.EOS | Gst.MessageType.ERROR)
	stats = p.get_by_name('src').get_property('stats')
	p.set_state(Gst.State.NULL)
	print(msg.type, stats.to_string())
	copies, zero = stats.get_uint64('copies')[1], stats.get_uint64('zero-copy')[1]
	sys.exit(0 if msg.type == Gst.MessageType.EOS and copies == 0 and zero >= 30 else 1)
	PY
	r=$?
	stop $prod
	echo "reader node: $(tr '\n' ' ' </sys/class/video4linux/${CAP0#/dev/}/stats)"
	[ $r = 0 ] && [ "$(node_stat $CAP0 copies)" = "$kc" ]
}

# H.264 over RTP: no retransmission, so a lost packet could spoil frames
# until the next key frame (one a second); judged as SRT's, 5 frames
rtp_h264() {
	CODEC=h264 $P/rtp-camera.sh $OUT1 5006 >$LOG/rtp264-camera.log 2>&1 &
	rcv=$!
	$TX env CODEC=h264 FG=0xffff8000 $P/rtp-send.sh $RX_IP 5006 \
		>$LOG/rtp264-send.log 2>&1 &
	snd=$!
	b=$(frames $OUT1)
	wait_frames $OUT1 $((b + 10)) 240 &&
		NUM=5 SAVE=/tmp/net-264.yuyv timeout 120 $P/read-camera.sh $CAP1 v4l2-ctl >/dev/null &&
		$PIC flat /tmp/net-264.yuyv 320 240 12
	r=$?
	stop $snd $rcv
	cat $LOG/rtp264-camera.log
	return $r
}

# kv KEY LINE: the value of KEY=... in gst-bench's LINE
kv() {
	echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"
}

# The latency the network path adds, measured as tests/bench does
# (gst-bench: each frame stamped with CLOCK_MONOTONIC as it enters the
# payloader, or vstreamsink, and taken at the reader's fakesink): raw RTP,
# 160x120 UYVY at 15 fps, out to "tx" and back through a relay there (two
# hops of 20 ms and 1 % loss) into rtp-camera.sh (its 50 ms jitter
# buffer), against the same frames straight into vstreamsink.  Printed,
# not judged: it passes when both paths deliver stamped frames.
net_latency() {
	GB=$B/tests/bench/gst-bench
	caps=video/x-raw,format=UYVY,width=160,height=120,framerate=15/1
	src="videotestsrc is-live=true ! $caps ! identity name=stamp"
	rd="vstreamsrc device=$CAP0 ! fakesink name=sink sync=false"
	direct=$(timeout 150 $GB -t 10 -p "$src ! vstreamsink device=$OUT0 sync=false" -c "$rd" 2>&1)
	echo "direct: $direct"
	$TX gst-launch-1.0 -q udpsrc port=5008 ! udpsink host=$RX_IP port=5010 \
		>$LOG/relay.log 2>&1 &
	relay=$!
	FORMAT=UYVY WIDTH=160 HEIGHT=120 $P/rtp-camera.sh $OUT0 5010 >$LOG/lat-camera.log 2>&1 &
	rcv=$!
	net=$(timeout 150 $GB -t 10 -w 5 -p "$src ! rtpvrawpay ! udpsink host=$TX_IP port=5008" \
		-c "$rd" 2>&1)
	stop $rcv $relay
	echo "network: $net"
	d50=$(kv lat_p50_ms "$direct") n50=$(kv lat_p50_ms "$net")
	[ -n "$d50" ] && [ -n "$n50" ] || return 1
	echo "# latency p50/p99 ms: direct $d50/$(kv lat_p99_ms "$direct")," \
		"RTP there and back $n50/$(kv lat_p99_ms "$net")"
}

# pipe_memory: what a 1080p pipe holds in the kernel (VmallocUsed: vb2's
# buffers and the frames in flight) and the guest's CPU use, a producer
# and then one reader each streaming 4 MMAP buffers of 1920x1080 YUYV.
# Printed, not judged.
vmalloc_kb() {
	sed -n 's/^VmallocUsed: *\([0-9]*\) kB/\1/p' /proc/meminfo
}
# busy: % of all CPUs in use over a 5 s window (/proc/stat): a measuring
# interval, not a wait for anything
busy() {
	read -r _ u1 n1 s1 i1 w1 q1 sq1 _ </proc/stat
	sleep 5
	read -r _ u2 n2 s2 i2 w2 q2 sq2 _ </proc/stat
	t=$((u2 + n2 + s2 + i2 + w2 + q2 + sq2 - u1 - n1 - s1 - i1 - w1 - q1 - sq1))
	echo $((100 * (t - (i2 - i1) - (w2 - w1)) / t))
}
pipe_memory() {
	v4l2-ctl -d $OUT1 --set-fmt-video-out=width=1920,height=1080,pixelformat=YUYV &&
		v4l2-ctl -d $CAP1 --set-fmt-video=width=1920,height=1080,pixelformat=YUYV ||
		return 1
	m0=$(vmalloc_kb)
	v4l2-ctl -d $OUT1 --stream-out-mmap=4 --stream-count=100000 >/dev/null 2>&1 &
	prod=$!
	b=$(frames $OUT1)
	wait_frames $OUT1 $((b + 10)) 120 || { stop $prod; return 1; }
	m1=$(vmalloc_kb) f0=$(frames $OUT1)
	c1=$(busy)
	f1=$(frames $OUT1)
	v4l2-ctl -d $CAP1 --stream-mmap=4 --stream-count=100000 >/dev/null 2>&1 &
	rd=$!
	b=$(frames $CAP1)
	wait_frames $CAP1 $((b + 10)) 120 || { stop $rd $prod; return 1; }
	m2=$(vmalloc_kb) f2=$(frames $OUT1)
	c2=$(busy)
	f3=$(frames $OUT1)
	echo "reader's stats: $(cat /sys/class/video4linux/${CAP1#/dev/}/stats | tr '\n' ' ')"
	stop $rd $prod
	echo "# memory, 1920x1080 YUYV, 4 buffers a side: the producer" \
		"$(((m1 - m0) / 1024)) MiB, each reader $(((m2 - m1) / 1024)) MiB more"
	echo "# CPU, 2 vCPUs, TCG: the producer (v4l2-ctl drawing its pattern)" \
		"$c1 % at $(((f1 - f0) / 5)) frames/s, with an MMAP reader $c2 %" \
		"at $(((f3 - f2) / 5)) frames/s"
}

echo "# vstream network group on $(uname -r)"
# said, never a silent pass: tests/matrix fails the lane on a SKIP
for e in rtpvrawpay x264enc avdec_h264 srtsrc rtspsrc; do
	gst-inspect-1.0 $e >/dev/null 2>&1 || { echo "1..0 # SKIP no GStreamer element $e"; exit 0; }
done
ffmpeg -hide_banner -protocols 2>/dev/null | grep -qw srt ||
	{ echo "1..0 # SKIP no ffmpeg with SRT"; exit 0; }
/usr/bin/python3 -c "import gi; gi.require_version('GstRtspServer', '1.0')" 2>/dev/null ||
	{ echo "1..0 # SKIP no gir1.2-gst-rtsp-server-1.0"; exit 0; }
run "load videobuf2 and v4l2-tpg" load_deps
run "insmod vstream.ko pipes=2 readers=1" load pipes=2 readers=1 max_width=1920 max_height=1088
OUT0=$(node vstream-0-output) CAP0=$(node vstream-0-capture)
OUT1=$(node vstream-1-output) CAP1=$(node vstream-1-capture)
run "two network namespaces, veth, netem 20 ms 1 % loss each way" netns
$PIC make yuyv422 320 240 /tmp/net-ref.yuyv
run "RTP raw across the lossy link: frames bit-exact" rtp_raw
run "RTP raw: sender gone and back, the reader gets its frames, idle frames, its frames" rtp_recover
# a control keeps its value: pipe 0's next producers are waited for again
v4l2-ctl -d $OUT0 -c producer_timeout_ms=0
# SRT retransmits what netem drops
run "SRT H.264 out of one pipe and into another: flat orange within 12" \
	served_h264 srt srt-serve.sh 7001 srt-camera.sh srt://$TX_IP:7001
run "SRT with the receiver listening, ffmpeg calling: gone and back, orange, idle, orange" srt_listen
run "the serving recipes' encoder takes the node's NV12 buffers, no copy" encoder_zero_copy
run "RTP H.264 across the lossy link: flat orange within 12" rtp_h264
run "RTSP H.264 out of one pipe and into another: flat orange within 12" \
	served_h264 rtsp rtsp-serve.py 8554 rtsp-camera.sh rtsp://$TX_IP:8554/cam
run "latency the network path adds (printed, not judged)" net_latency
grep '^# latency' $LOG/$n.log
run "memory and CPU a 1080p pipe takes (printed, not judged)" pipe_memory
grep -E '^# (memory|CPU)' $LOG/$n.log
run "dmesg has no WARNING/BUG/Oops" \
	sh -c "! dmesg | $S/tests/vm/dmesg-filter | grep -E 'WARNING:|BUG:|Oops|Call Trace'"
echo "1..$n"
echo "# network group: $((n - failed)) passed, $failed failed"
[ $failed -eq 0 ]
