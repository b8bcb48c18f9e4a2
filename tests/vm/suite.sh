#!/bin/sh
# The vm suite, run inside the guest by tests/vm/vm-run: loads the freshly
# built vstream.ko and runs every device test, printing TAP so meson
# reports each one.  Usage: suite.sh BUILDDIR SRCDIR [full|quick|compliance|core]
B=$(readlink -f "$1")
S=$(readlink -f "$2")
MODE=${3:-full}
. $S/tests/vm/lib.sh
group_init

# compliance NODE [args]: 0 failures and 0 warnings, except the one
# known v4l-utils 1.22.1 / kernel 6.1 description skew (see docs/testing.md)
compliance() {
	dev=$1
	shift
	out=$(mktemp $LOG/compliance.XXXXXX)
	v4l2-compliance --no-progress -d $dev "$@" >$out 2>&1
	cat $out
	total=$(grep '^Total for' $out)
	[ -n "$total" ] || return 1
	echo "$total" | grep -q 'Warnings: 0$' || return 1
	bad=$(grep -E '^\s+fail:' $out | grep -v 'fmtdesc.description mismatch' | wc -l)
	skew=$(grep -c 'fmtdesc.description mismatch' $out)
	fails=$(echo "$total" | sed -n 's/.*Failed: \([0-9]*\).*/\1/p')
	[ "$bad" -eq 0 ] && [ "$fails" -le "$skew" ] && [ "$skew" -le 1 ]
}

# compliance_f: v4l2-compliance -s5 -f (every format x size x interval x
# field) on an output and a capture node at once, at 320x240 at most to
# keep it near 11 minutes under emulation
compliance_f() {
	lsmod | grep -q '^vivid' && rmmod vivid
	run "rmmod vstream" rmmod vstream
	run "insmod vstream.ko max 320x240 for -f" load pipes=2 readers=1 max_width=320 max_height=240
	OUT0=$(node vstream-0-output); CAP1=$(node vstream-1-capture)
	compliance $OUT0 -s5 -f >$LOG/f0.log 2>&1 & P0=$!
	compliance $CAP1 -s5 -f >$LOG/f1.log 2>&1 & P1=$!
	wait $P0; r0=$?; wait $P1; r1=$?
	run "v4l2-compliance -s5 -f vstream-0-output" sh -c "cat $LOG/f0.log; exit $r0"
	run "v4l2-compliance -s5 -f vstream-1-capture" sh -c "cat $LOG/f1.log; exit $r1"
}

rt() { run "runtime: $1" sh $S/tests/vm/runtime.sh $B $S $2; }
# unless_core: every step but in core mode, which keeps the pipes' lifetimes
# (delete while streaming, while open, re-add, racing adds) and drops
# stream-through-each, GStreamer, the 200-cycle loop, attribute checks,
# multi-planar and compliance
unless_core() { [ "$MODE" = core ] || "$@"; }
# runtime_pipes: pipes made, streamed and removed through configfs and
# vstream-ctl (tests/vm/runtime.sh); vstream must be unloaded before
runtime_pipes() {
	rt "insmod vstream.ko pipes=0, configfs empty" load
	rt "vstream-ctl add and load: 3 pipes, own readers, limit, label, fixed format" add3
	unless_core rt "stream through each, bit-exact, 0 copies" stream3
	rt "delete one while another streams: it goes on" del-other
	rt "delete an open, streaming pipe: ENODEV, clients end" del-open
	rt "re-add with the same names, stream" readd
	unless_core rt "GStreamer by name: vstream://fix feeds and reads, orange arrives" uri
	# a plugin built without GUdev (meson -Dgudev=disabled) lists
	# devices only when asked
	if ldd $B/gst-plugin/libgstvstream.so | grep -q libgudev; then
		unless_core rt "device monitor: vstream-ctl add and del come as devices added and removed" hotplug
	elif [ "$MODE" != core ]; then
		n=$((n + 1))
		echo "ok $n - device monitor hotplug # SKIP plugin built without GUdev"
	fi
	unless_core rt "200 enable/disable cycles, 20 rmdir while enabled" cycles
	rt "4 processes add and delete at once; one wins a shared name" concurrent
	if [ "$MODE" != core ]; then
		rt "hostile attributes and names: EINVAL/EBUSY, nothing made" hostile
		rt "vstream-ctl add --mplane: _MPLANE nodes, orange relayed, 0 copies" mplane
		run "v4l2-compliance -s5 runtime multi-planar mp-output" compliance $(node mp-output) -s5
		run "v4l2-compliance -s5 runtime multi-planar mp-capture" compliance $(node mp-capture) -s5
		run "v4l2-compliance -s5 runtime meet-output" compliance $(node meet-output) -s5
		run "v4l2-compliance -s5 runtime meet-capture-1" compliance $(node meet-capture-1) -s5
		run "v4l2-compliance -s5 -f runtime fixed-format fix-capture" compliance $(node fix-capture) -s5 -f
		run "v4l2-compliance -s5 -f runtime fixed-format fix-output" compliance $(node fix-output) -s5 -f
	fi
	rt "rmmod refused while pipes are configured; goes after del" rmmod
}

# kmemleak (debug kernels, tests/vm/debug-kernel): what was unreferenced
# before the suite is set aside, and nothing may be left after it once the
# modules are gone
KML=/sys/kernel/debug/kmemleak
kmemleak_check() {
	rmmod vstream 2>/dev/null
	rmmod vivid 2>/dev/null
	# kmemleak reports an object only once it is 5 s old (its minimum
	# age) when a scan finds it unreferenced: the age, not a result
	sleep 6
	echo scan >$KML && echo scan >$KML || return 1
	cat $KML >$LOG/kmemleak.txt
	grep -c 'unreferenced object' $LOG/kmemleak.txt | sed 's/^/unreferenced objects: /'
	cat $LOG/kmemleak.txt
	! grep -q 'unreferenced object' $LOG/kmemleak.txt
}

finish() {
	[ -e $KML ] && run "kmemleak: nothing unreferenced after the suite and rmmod" kmemleak_check
	run "dmesg has no WARNING/BUG/Oops" \
		sh -c "! dmesg | $S/tests/vm/dmesg-filter | grep -E 'WARNING:|BUG:|Oops|Call Trace'"
	echo "1..$n"
	echo "# vm suite: $((n - failed)) passed, $failed failed"
	[ $failed -eq 0 ]
	exit
}

echo "# vstream vm suite on $(uname -r), mode $MODE"
if [ -e $KML ]; then
	echo scan >$KML && echo clear >$KML
	echo "# kmemleak: on; leaks from before the suite cleared"
fi
run "load videobuf2 and v4l2-tpg" load_deps
run "insmod vstream.ko pipes=2 readers=2" load pipes=2 readers=2 max_width=1920 max_height=1088
OUT0=$(node vstream-0-output); CAP00=$(node vstream-0-capture-0); CAP01=$(node vstream-0-capture-1)
OUT1=$(node vstream-1-output); CAP10=$(node vstream-1-capture-0); CAP11=$(node vstream-1-capture-1)
echo "# nodes: $OUT0 $CAP00 $CAP01 / $OUT1 $CAP10 $CAP11"

nodes="$OUT0 $CAP00 $CAP01 $OUT1 $CAP10 $CAP11"
# core: one producer and one reader; the other four run the same code
[ "$MODE" = core ] && nodes="$OUT0 $CAP00"
for d in $nodes; do
	case $d in
	$OUT0) x=$CAP00 ;; $OUT1) x=$CAP10 ;; $CAP00) x=$CAP01 ;; *) x=$CAP00 ;;
	esac
	run "v4l2-compliance -s10 $(cat /sys/class/video4linux/${d#/dev/}/name)" \
		compliance $d -s10 -e $x
done

# Readers while a producer streams: stock v4l2-ctl feeds pipe 1.
base=$(frames $OUT1)
v4l2-ctl -d $OUT1 --set-fmt-video-out=width=640,height=480,pixelformat=YUYV \
	--stream-out-mmap --stream-count=100000 >/dev/null 2>&1 &
PROD=$!
wait_frames $OUT1 $((base + 2)) 60
run "v4l2-compliance -s10 reader while a producer streams" compliance $CAP11 -s10
kill $PROD; wait $PROD 2>/dev/null

# compliance mode (a lane that only proves the driver on a kernel): the
# runtime pipes' compliance runs, then out.  -f is full mode's: its 11
# minutes exercise the driver's format tables, not the kernel under them
if [ "$MODE" = compliance ]; then
	run "rmmod vstream" rmmod vstream
	runtime_pipes
	finish
fi

# The memory groups, which the arm64 guest runs too (tests/vm/groups.sh)
. $S/tests/vm/groups.sh
memory_groups
IB=$B/tests/vm/vs-isolate

# Frames Without Producer: a reader set to Last Frame gets the stopped
# producer's last frame bit-exact (a random picture: neither the test
# pattern nor anything else can match it); one left at Test Pattern must
# not, which is what shows the comparison can fail.
last_frame() {
	head -c $((320 * 240 * 2)) /dev/urandom >/tmp/lf.yuyv
	v4l2-ctl -d $CAP11 --set-ctrl frames_without_producer=$1 || return 1
	base=$(frames $OUT1)
	v4l2-ctl -d $OUT1 --set-fmt-video-out=width=320,height=240,pixelformat=YUYV \
		--stream-out-mmap --stream-from=/tmp/lf.yuyv --stream-loop >/dev/null 2>&1 &
	lfp=$!
	wait_frames $OUT1 $((base + 5)) 60; r=$?
	kill $lfp; wait $lfp 2>/dev/null
	[ $r -eq 0 ] || return 1
	v4l2-ctl -d $CAP11 --set-fmt-video=width=320,height=240,pixelformat=YUYV \
		--stream-mmap --stream-count=3 --stream-to=/tmp/lf.out || return 1
	python3 - $2 <<-'EOF'
	import sys
	want = open('/tmp/lf.yuyv', 'rb').read()
	got = open('/tmp/lf.out', 'rb').read()
	frames = [got[i:i + len(want)] for i in range(0, len(got), len(want))]
	same = sum(f == want for f in frames)
	print(f"{len(frames)} frames read, {same} the producer's last")
	sys.exit(not (len(frames) == 3 and same == (3 if sys.argv[1] == 'same' else 0)))
	EOF
}
run "Frames Without Producer = Last Frame: the stopped producer's frame, bit-exact" \
	last_frame 1 same
run "Frames Without Producer = Test Pattern: not the producer's frame" last_frame 0 none
v4l2-ctl -d $CAP11 --set-ctrl frames_without_producer=0

# Fan-out: four MMAP readers of one 1080p producer, bit-exact, no copy;
# then an open node pins the module and the last close lets it go.
fanout_and_unload() {
	run "rmmod vstream for fan-out" rmmod vstream
	run "insmod vstream.ko readers=4" load pipes=1 readers=4 max_width=1920 max_height=1088
	run "fan-out: 4 MMAP readers of 1080p, every byte, 0 copies" $IB -o $(node vstream-0-output) \
		-c $(node vstream-0-capture-0) -c $(node vstream-0-capture-1) \
		-c $(node vstream-0-capture-2) -c $(node vstream-0-capture-3) -g fanout -s 1920x1080
	exec 3<>$(node vstream-0-output)
	run "rmmod refused while a node is open" sh -c '! rmmod vstream'
	exec 3>&-
	run "rmmod vstream after all closed" rmmod vstream
}

# core mode (the debug-kernel lane in CI, docs/testing.md): what moves,
# shares and frees memory, without GStreamer, vivid or the clients
if [ "$MODE" = core ]; then
	fanout_and_unload
	runtime_pipes
	finish
fi

# GStreamer elements, stock elements and vivid (tests/vm/gst-pipe)
modprobe -d "$K" vivid n_devs=1 node_types=0x1 >/dev/null 2>&1
VIVID=$(node vivid-000-vid-cap)
# Build the plugin registry once: under emulation it takes a while.
gst-inspect-1.0 vstreamsrc >/dev/null 2>&1
export VSTREAM_OUT=$OUT0 VSTREAM_CAP=$CAP00 VSTREAM_CAP2=$CAP01 VSTREAM_VIVID=$VIVID
export VSTREAM_OUT1=$OUT1 VSTREAM_CAP1=$CAP10
run "isolation: vstreamsrc with a blocked downstream slows nobody" \
	$IB -o $OUT0 -c $CAP00 -c $CAP01 -g frozen \
	-X "exec gst-launch-1.0 -q vstreamsrc device=$CAP00 ! identity sleep-time=600000000 ! fakesink"
gst-launch-1.0 -q videotestsrc pattern=ball ! \
	video/x-raw,format=YUY2,width=640,height=480,framerate=30/1 ! \
	vstreamsink device=$OUT0 >$LOG/ball.log 2>&1 &
BALL=$!
run "isolation: a frame of videotestsrc pattern=ball stays put after dequeue" \
	$IB -o $OUT0 -c $CAP00 -c $CAP01 -g stable -e
kill $BALL; wait $BALL 2>/dev/null
run "gst-pipe (GstCheck element tests)" $B/tests/vm/gst-pipe
sed -n 's/^\(.*:[0-9]*:[EPF]:.*\)$/# \1/p' $LOG/$n.log
# its last test unbinds vivid (the device going away): bind it again
echo vivid.0 >/sys/bus/platform/drivers/vivid/bind 2>/dev/null
for i in 1 2 3 4 5 6 7 8 9 10; do VIVID=$(node vivid-000-vid-cap) && break; sleep 1; done
export VSTREAM_VIVID=$VIVID
# gst_leaks WANT PIPELINE...: gst-launch ends with an error naming WANT
# (or cleanly, for -) and the leaks tracer finds no object alive at exit.
gst_leaks() {
	want=$1
	shift
	GST_TRACERS=leaks GST_DEBUG=GST_TRACER:7 timeout 60 gst-launch-1.0 "$@" >/tmp/gl.out 2>&1
	rc=$?
	grep -v GST_TRACER /tmp/gl.out | tail -n 5
	alive=$(grep -c ':: object-alive, ' /tmp/gl.out)
	echo "exit $rc, GStreamer objects alive at exit: $alive"
	grep ':: object-alive, ' /tmp/gl.out | head -n 5
	[ "$alive" -eq 0 ] || return 1
	[ "$want" = - ] && return $rc
	[ $rc -ne 0 ] && grep -v GST_TRACER /tmp/gl.out | grep -q "ERROR.*$want"
}
run "leaks/error: device missing" gst_leaks /dev/nonexistent vstreamsrc device=/dev/nonexistent ! fakesink
run "leaks/error: source on an output node" gst_leaks $OUT0 vstreamsrc device=$OUT0 ! fakesink
run "leaks/error: sink on a capture node" gst_leaks $CAP00 videotestsrc num-buffers=5 ! vstreamsink device=$CAP00
run "leaks/error: caps the device lacks" gst_leaks $CAP00 vstreamsrc device=$CAP00 ! video/x-raw,width=4000,height=3000 ! fakesink
run "leaks: producer runs to EOS" gst_leaks - videotestsrc num-buffers=30 ! vstreamsink device=$OUT0 sync=false
run "leaks: reader runs to EOS" gst_leaks - vstreamsrc device=$CAP00 num-buffers=10 ! fakesink
run "leaks: userptr relay (src borrows the sink's pool) runs to EOS" gst_leaks - \
	vstreamsrc device=$CAP00 io-mode=userptr num-buffers=10 ! \
	vstreamsink device=$OUT1 io-mode=userptr sync=false
# No device set: each element opens the lowest-numbered vstream node of
# its direction (pipe 0's), whatever else (vivid) is loaded; the recipes
# run without one, an orange producer into one, read back from the other
default_device() {
	FG=0xffff8000 WIDTH=320 HEIGHT=240 $S/pipelines/virtual-camera.sh >/tmp/dprod.log 2>&1 &
	p=$!
	wait_frames $OUT0 $(($(frames $OUT0) + 5)) 120
	NUM=5 SAVE=/tmp/def.yuyv $S/pipelines/read-camera.sh
	kill $p
	wait $p
	python3 $S/tests/vm/picture.py flat /tmp/def.yuyv 320 240
}
run "no device set: virtual-camera.sh and read-camera.sh find pipe 0, orange arrives" default_device
# has FILE PATTERN: FILE has a line matching PATTERN, else say which not
has() {
	grep -q -e "$2" "$1" && return 0
	echo "no line matching: $2"
	return 1
}

# vstream's provider lists its own nodes only (not vivid's: those are
# v4l2src's provider's, which needs udev, not running here), with
# properties to pick one by
device_monitor() {
	timeout 120 gst-device-monitor-1.0 Video/Source Video/Sink >/tmp/mon.out 2>&1
	cat /tmp/mon.out
	has /tmp/mon.out ": vstream 0 (reader 1)\$" &&
	has /tmp/mon.out ": vstream 1 (output)\$" &&
	has /tmp/mon.out "vstreamsrc device=$CAP01 " &&
	has /tmp/mon.out "vstream.pipe = vstream-0" &&
	has /tmp/mon.out "vstream.reader = 1" &&
	has /tmp/mon.out "vstream.direction = output" &&
	has /tmp/mon.out "v4l2.device.driver = vstream" &&
	! has /tmp/mon.out "vstreamsrc device=$VIVID "
}
run "gst-device-monitor lists vstream nodes by name, and only them" device_monitor

# extra-controls by v4l2src's names reach the device: vivid's brightness,
# vstream's own menu control by its item's name (a structure string in a
# quoted property value, as gst-launch users write it)
extra_controls() {
	gst-launch-1.0 -q vstreamsrc device=$VIVID num-buffers=2 \
		extra-controls="c,brightness=201" ! fakesink || return 1
	v4l2-ctl -d $VIVID -C brightness >/tmp/ec.out
	has /tmp/ec.out "brightness: 201" || return 1
	gst-launch-1.0 -q vstreamsrc device=$CAP10 num-buffers=2 \
		'extra-controls="c,frames_without_producer=\"Last Frame\""' ! fakesink || return 1
	v4l2-ctl -d $CAP10 -C frames_without_producer >/tmp/ec.out
	v4l2-ctl -d $CAP10 -c frames_without_producer=0
	has /tmp/ec.out "frames_without_producer: 1"
}
run "extra-controls set vivid's brightness and vstream's Frames Without Producer" extra_controls

# crop-* on vivid's S-Video input (its webcam input cannot crop; vivid
# crops and scales): the 720x480 NTSC frame less the margins arrives
crop() {
	v4l2-ctl -d $VIVID -i 2 -s ntsc || return 1
	gst-launch-1.0 -v vstreamsrc device=$VIVID num-buffers=3 crop-left=100 \
		crop-right=100 crop-top=40 crop-bottom=40 ! fakesink >/tmp/crop.out 2>&1
	r=$?
	grep -E "caps =|WARN" /tmp/crop.out | head -4
	v4l2-ctl -d $VIVID --get-selection target=crop >/tmp/crop.sel 2>&1
	cat /tmp/crop.sel
	v4l2-ctl -d $VIVID -i 0
	[ $r = 0 ] && has /tmp/crop.out "width=(int)520, height=(int)400" &&
	has /tmp/crop.sel "Left 100, Top 40"
}
run "crop-left/right/top/bottom on vivid: 520x400 of its 720x480 arrive" crop

# DMA_DRM caps (GStreamer >= 1.24): an orange producer on pipe 0, a relay
# that must negotiate video/x-raw(memory:DMABuf),format=DMA_DRM from pipe
# 0's reader (io-mode=dmabuf) into pipe 1 (dmabuf-import); pipe 1's reader
# must see orange
dma_drm() {
	gst-launch-1.0 -q videotestsrc pattern=solid-color foreground-color=0xffff8000 ! \
		video/x-raw,format=YUY2,width=320,height=240,framerate=30/1 ! \
		vstreamsink device=$OUT0 >/tmp/drm-p.log 2>&1 &
	p=$!
	b=$(frames $OUT0)
	wait_frames $OUT0 $((b + 5)) 120 || { kill $p; return 1; }
	gst-launch-1.0 vstreamsrc device=$CAP00 io-mode=dmabuf ! \
		"video/x-raw(memory:DMABuf),format=DMA_DRM,drm-format=YUYV" ! \
		vstreamsink device=$OUT1 io-mode=dmabuf-import >/tmp/drm-r.log 2>&1 &
	r=$!
	b=$(frames $OUT1)
	wait_frames $OUT1 $((b + 10)) 120; ok=$?
	[ $ok = 0 ] && v4l2-ctl -d $CAP10 --stream-mmap --stream-count=4 --stream-to=/tmp/drm.yuyv
	kill $r $p; wait $r $p 2>/dev/null
	cat /tmp/drm-r.log
	[ $ok = 0 ] && python3 $S/tests/vm/picture.py flat /tmp/drm.yuyv 320 240
}
if gst-launch-1.0 --version | grep -qE "GStreamer 1\.(2[4-9]|[3-9][0-9])"; then
	run "DMA_DRM caps: dmabuf reader -> DMA_DRM -> dmabuf-import sink, orange arrives" dma_drm
else
	n=$((n + 1))
	echo "ok $n - DMA_DRM caps # SKIP GStreamer $(gst-launch-1.0 --version | sed -n 's/.*GStreamer //p') < 1.24"
fi

# pipelines/: each recipe against the device, results checked.
P=$S/pipelines
OUTN=$(basename $OUT0)
# waitfeed: until the producer started by pipeline_case has output a
# frame.  One, not more: a file producer under emulation decodes slower
# than real time, and vstreamsink (a GstVideoSink: max-lateness 20 ms,
# QoS upstream) drops its late frames, often all but the first.
cat >/tmp/waitfeed.sh <<EOT
b=\$(cat /tmp/before)
for i in \$(seq 1 90); do
	n=\$(sed -n 's/^frames //p' /sys/class/video4linux/$OUTN/stats)
	[ \$n -gt \$b ] && exit 0
	sleep 1
done
echo "producer never fed the pipe"; exit 1
EOT
# pipeline_case NAME PRODUCER...: start the producer, run the check from stdin
pipeline_case() {
	name=$1
	shift
	sed -n 's/^frames //p' /sys/class/video4linux/$OUTN/stats >/tmp/before
	"$@" >$LOG/producer.$n.log 2>&1 &
	prod=$!
	run "pipeline: $name" sh -c "$(cat)"
	kill $prod 2>/dev/null
	wait $prod 2>/dev/null
}
# Every producer shows flat orange (FG): the idle colour bars cannot pass
# for it, so each reader's frames are checked to be the producer's.
export FG=0xffff8000
WIDTH=640 HEIGHT=480 pipeline_case "virtual camera read by vstreamsrc" $P/virtual-camera.sh $OUT0 <<EOT
sh /tmp/waitfeed.sh &&
NUM=10 SAVE=/tmp/p1.yuyv $P/read-camera.sh $CAP00 vstreamsrc &&
$PIC flat /tmp/p1.yuyv 640 480
EOT
WIDTH=640 HEIGHT=480 IO_MODE=dmabuf pipeline_case "dma-buf producer, read as dma-buf" $P/virtual-camera.sh $OUT0 <<EOT
sh /tmp/waitfeed.sh &&
NUM=10 IO_MODE=dmabuf SAVE=/tmp/p2.yuyv $P/read-camera.sh $CAP00 vstreamsrc &&
$PIC flat /tmp/p2.yuyv 640 480
EOT
WIDTH=640 HEIGHT=480 pipeline_case "one producer, two readers (v4l2src and v4l2-ctl)" $P/virtual-camera.sh $OUT0 <<EOT
sh /tmp/waitfeed.sh || exit 1
NUM=10 SAVE=/tmp/p3.yuyv $P/read-camera.sh $CAP00 v4l2src & a=\$!
NUM=10 SAVE=/tmp/p4.yuyv $P/read-camera.sh $CAP01 v4l2-ctl 2>&1 | tee /tmp/ctl.out
wait \$a && grep -q '<' /tmp/ctl.out &&
$PIC flat /tmp/p3.yuyv 640 480 && $PIC flat /tmp/p4.yuyv 640 480
EOT
WIDTH=640 HEIGHT=480 IO_MODE=userptr pipeline_case "userptr producer, recorded to MJPEG AVI" $P/virtual-camera.sh $OUT0 <<EOT
sh /tmp/waitfeed.sh &&
NUM=10 $P/record.sh $CAP00 /tmp/rec.avi && test \$(stat -c %s /tmp/rec.avi) -gt 10000
EOT
# The file (10 frames) may end before a reader starts under emulation: the
# reader keeps its last frame (Frames Without Producer), which must be
# the file's picture, not the idle bars (as it was before this check).
v4l2-ctl -d $CAP00 --set-ctrl frames_without_producer=1
WIDTH=640 HEIGHT=480 pipeline_case "the recorded file as the camera" $P/virtual-camera.sh $OUT0 /tmp/rec.avi <<EOT
sh /tmp/waitfeed.sh &&
NUM=3 SAVE=/tmp/p5.yuyv $P/read-camera.sh $CAP00 vstreamsrc &&
$PIC flat /tmp/p5.yuyv 640 480 12
EOT
# files at other rates than the camera's 30: videorate in the recipe
# (without it a 25 or 60 fps file does not negotiate); their frames
# arrive, still orange
for r in 25 60; do
	gst-launch-1.0 -q videotestsrc num-buffers=$((2 * r)) pattern=solid-color \
		foreground-color=$FG ! video/x-raw,width=320,height=240,framerate=$r/1 ! \
		jpegenc ! avimux ! filesink location=/tmp/rate$r.avi >$LOG/rate$r.log 2>&1
	WIDTH=640 HEIGHT=480 pipeline_case "a $r fps file as the 30 fps camera" $P/virtual-camera.sh $OUT0 /tmp/rate$r.avi <<EOT
sh /tmp/waitfeed.sh &&
NUM=3 SAVE=/tmp/p6.yuyv $P/read-camera.sh $CAP00 vstreamsrc &&
$PIC flat /tmp/p6.yuyv 640 480 12
EOT
done
v4l2-ctl -d $CAP00 --set-ctrl frames_without_producer=0
# A producer slower than a frame a second (a still screen, shared): at the
# output's default Producer Timeout, 0, its readers wait for its frames;
# no idle picture comes between them
slow_producer() {
	gst-launch-1.0 -q videotestsrc is-live=true pattern=solid-color \
		foreground-color=$FG ! \
		video/x-raw,format=YUY2,width=320,height=240,framerate=2/3 ! \
		vstreamsink device=$OUT0 >$LOG/slow.log 2>&1 &
	p=$!
	b=$(frames $OUT0)
	wait_frames $OUT0 $((b + 1)) 120 || { kill $p; wait $p; return 1; }
	v4l2-ctl -d $OUT0 -C producer_timeout_ms
	# bounded: a reader stalled by a regression fails here, not the suite
	timeout 60 v4l2-ctl -d $CAP00 --stream-mmap --stream-count=3 --stream-to=/tmp/slow.yuyv
	r=$?
	kill $p
	wait $p
	[ $r = 0 ] && $PIC flat /tmp/slow.yuyv 320 240
}
run "a producer at 2/3 fps: readers get only its frames (Producer Timeout 0)" slow_producer
unset FG
# 20 s of the first size (60 s on a debug kernel, where gst-launch takes
# longer than 20 s to start): the reader must start while it lasts; it
# reads until the second
n1=600
[ ! -e $KML ] || n1=1800
NUM1=$n1 pipeline_case "format change: a playing vstreamsrc renegotiates" $P/format-change.sh $OUT0 <<EOT
sh /tmp/waitfeed.sh || exit 1
gst-launch-1.0 -v vstreamsrc device=$CAP00 ! fakesink >/tmp/fc.out 2>&1 &
fcp=\$!
for i in \$(seq 1 120); do
	grep -q 'src: caps = .*width=(int)640' /tmp/fc.out && break
	sleep 1
done
kill \$fcp; wait \$fcp
grep 'GstVstreamSrc.*src: caps' /tmp/fc.out | cut -c1-160
grep -q 'src: caps = .*width=(int)320' /tmp/fc.out && grep -q 'src: caps = .*width=(int)640' /tmp/fc.out
EOT
# A camera from the network: uncompressed RTP on loopback, the receiver's
# depayloader saying framerate=0/1 (variable), into vstreamsink; both a
# stock reader and ours get the sender's frames bit-exact.
$PIC make yuyv422 320 240 /tmp/rtp-ref.yuyv
WIDTH=320 HEIGHT=240 pipeline_case "network camera: RTP raw, framerate 0/1, bit-exact to v4l2-ctl and vstreamsrc" \
	$P/rtp-camera.sh $OUT0 5004 <<EOT
RAW=/tmp/rtp-ref.yuyv WIDTH=320 HEIGHT=240 RATE=15 $P/rtp-send.sh 127.0.0.1 5004 >/tmp/rtp-send.log 2>&1 &
s=\$!
sh /tmp/waitfeed.sh &&
NUM=3 SAVE=/tmp/rtp1.yuyv $P/read-camera.sh $CAP00 v4l2-ctl >/dev/null &&
NUM=3 SAVE=/tmp/rtp2.yuyv $P/read-camera.sh $CAP00 vstreamsrc &&
$PIC same /tmp/rtp1.yuyv /tmp/rtp-ref.yuyv && $PIC same /tmp/rtp2.yuyv /tmp/rtp-ref.yuyv
r=\$?
kill \$s; wait \$s; cat /tmp/rtp-send.log; exit \$r
EOT
pipeline_case "interlaced SD keeps its field order" $P/interlaced-sd.sh $OUT0 <<EOT
sh /tmp/waitfeed.sh &&
v4l2-ctl -d $CAP00 --get-fmt-video | grep -q 'Interlaced Top-Bottom' &&
gst-launch-1.0 -v vstreamsrc device=$CAP00 num-buffers=3 ! fakesink >/tmp/il.out &&
grep -q 'interlace-mode=(string)interleaved' /tmp/il.out && grep -q 'field-order=(string)top-field-first' /tmp/il.out
EOT

[ "$MODE" = full ] && compliance_f

lsmod | grep -q '^vivid' && rmmod vivid
# A multi-planar device (vivid multiplanar=2, as SoC cameras): vstreamsrc
# in every io-mode gives exactly the frame v4l2-ctl captures (no OSD text:
# vivid's bars are then the same in every frame)
mplane_vivid() {
	v=$(node vivid-000-vid-cap) || return 1
	v4l2-ctl -d $v -D | grep 'Video Capture Multiplanar' || return 1
	v4l2-ctl -d $v -c osd_text_mode=2 \
		--set-fmt-video=width=640,height=480,pixelformat=YUYV || return 1
	v4l2-ctl -d $v --stream-mmap --stream-count=1 --stream-to=/tmp/mpref.yuyv || return 1
	[ "$(stat -c %s /tmp/mpref.yuyv)" = 614400 ] || return 1
	for m in mmap userptr dmabuf; do
		gst-launch-1.0 -q vstreamsrc device=$v io-mode=$m num-buffers=4 ! \
			video/x-raw,format=YUY2,width=640,height=480 ! \
			filesink location=/tmp/mp-$m.yuyv || return 1
		echo "io-mode=$m:"
		python3 $S/tests/vm/picture.py same /tmp/mp-$m.yuyv /tmp/mpref.yuyv || return 1
	done
}
# A memory per colour plane: vivid has Y444 only as YUV444M (three
# memories), so caps format=Y444 must take that path; the file holds the
# planes one after the other, as v4l2-ctl writes them
per_plane_vivid() {
	v=$(node vivid-000-vid-cap) || return 1
	v4l2-ctl -d $v -c osd_text_mode=2 \
		--set-fmt-video=width=640,height=480,pixelformat=YM24 || return 1
	v4l2-ctl -d $v --stream-mmap --stream-count=1 --stream-to=/tmp/ppref.y444 || return 1
	[ "$(stat -c %s /tmp/ppref.y444)" = 921600 ] || return 1
	for m in mmap userptr dmabuf; do
		GST_DEBUG=vstream*:4 gst-launch-1.0 -q vstreamsrc device=$v io-mode=$m \
			num-buffers=4 ! video/x-raw,format=Y444,width=640,height=480 ! \
			filesink location=/tmp/pp-$m.y444 2>/tmp/pp-$m.log || return 1
		echo "io-mode=$m:"
		grep -q 'format YM24 640x480' /tmp/pp-$m.log || return 1
		python3 $S/tests/vm/picture.py same /tmp/pp-$m.y444 /tmp/ppref.y444 || return 1
	done
}
# vstreamsink into three memories: vivid loops its HDMI output to its
# HDMI input when both have the same format, so the second vivid's
# capture node must show exactly the frames the sink queued.  Upstream
# renders into the sink's own buffers (mmap, userptr: smpte75, every
# value in range, which the loop keeps as it is), or the sink lays a
# contiguous frame into the planes (drop-allocation: the copy path), or
# it queues the three dma-bufs vstreamsrc exports from the first vivid
# (dmabuf-import: zero copy per plane, no fallback to copying).
per_plane_sink_vivid() {
	v=$(node vivid-001-vid-cap) && o=$(node vivid-001-vid-out) &&
		a=$(node vivid-000-vid-cap) || return 1
	v4l2-ctl -d $v -i 3 && v4l2-ctl -d $o -o 1 || return 1
	# 720p24, not the default p60: vivid's capture thread, late under
	# emulation, once computed a negative wait (a stack dump in dmesg)
	t=$(v4l2-ctl -d $v --list-dv-timings | awk '/Index:/ { i = $2 }
		/Active width:/ { w = $3 } /Active height:/ { h = $3 }
		/24.00 frames per second/ && w == 1280 && h == 720 { print i; exit }')
	[ -n "$t" ] || return 1
	# the loop: a 'loop_video' switch up to Linux 6.10, since then a menu
	# per input naming the output it is wired to
	if v4l2-ctl -d $v -C loop_video >/dev/null 2>&1; then
		loop=loop_video=1
	else
		i=$(v4l2-ctl -d $v -L | sed -n 's/^[[:space:]]*\([0-9]*\): Output HDMI 001-0$/\1/p')
		[ -n "$i" ] || return 1
		loop=hdmi_001_0_is_connected_to=$i
	fi
	echo "loop: $loop"
	v4l2-ctl -d $v --set-dv-bt-timings index=$t -c $loop \
		-c osd_text_mode=2 --set-fmt-video=pixelformat=YM24 || return 1
	v4l2-ctl -d $o --set-dv-bt-timings index=$t \
		--set-fmt-video-out=pixelformat=YM24 || return 1
	v4l2-ctl -d $o --get-fmt-video-out | grep -q '1280/720' || return 1
	caps=video/x-raw,format=Y444,width=1280,height=720
	gst-launch-1.0 -q videotestsrc pattern=smpte75 num-buffers=1 ! $caps ! \
		filesink location=/tmp/ppwant.y444 || return 1
	v4l2-ctl -d $a -c osd_text_mode=2 \
		--set-fmt-video=width=1280,height=720,pixelformat=YM24 || return 1
	v4l2-ctl -d $a --stream-mmap --stream-count=1 --stream-to=/tmp/ppa.y444 || return 1
	# the loop's idle picture (vivid's own bars, no output streaming) must
	# not pass for either producer's
	v4l2-ctl -d $v --stream-mmap --stream-count=2 --stream-to=/tmp/pploop.y444 || return 1
	for want in /tmp/ppwant.y444 /tmp/ppa.y444; do
		python3 $S/tests/vm/picture.py same /tmp/pploop.y444 $want |
			grep "differs from the producer's" || return 1
	done
	for m in mmap userptr copy dmabuf-import; do
		# no num-buffers: the sink is stopped once judged
		up="videotestsrc pattern=smpte75 is-live=true ! $caps,framerate=24/1 !"
		want=/tmp/ppwant.y444 io=$m
		case $m in
		copy) up="$up identity drop-allocation=true !" io=mmap ;;
		dmabuf-import)
			up="vstreamsrc device=$a io-mode=dmabuf ! $caps !"
			want=/tmp/ppa.y444 ;;
		esac
		GST_DEBUG=vstream*:4 gst-launch-1.0 -q $up vstreamsink device=$o \
			io-mode=$io >/tmp/ppsink.log 2>&1 & sp=$!
		echo "sink io-mode=$m:"
		# until two looped frames are the producer's, for 240 s at most
		# (not a count of tries: a loaded host makes each one slower)
		centis
		end=$((cs + 24000)) i=0 ok=1
		while [ $cs -lt $end ] && kill -0 $sp 2>/dev/null; do
			i=$((i + 1))
			v4l2-ctl -d $v --stream-mmap --stream-count=2 --stream-to=/tmp/pploop.y444 &&
				python3 $S/tests/vm/picture.py same /tmp/pploop.y444 $want \
				>/tmp/ppsame.log 2>&1 && ok=0 && break
			centis
		done
		echo "try $i: $(cat /tmp/ppsame.log)"
		kill -0 $sp 2>/dev/null || echo "the sink's pipeline ended first"
		kill $sp; wait $sp
		grep -E 'ERROR|WARN|copying' /tmp/ppsink.log
		[ $ok = 0 ] || return 1
		! grep -q copying /tmp/ppsink.log || return 1
	done
}
modprobe -d "$K" vivid n_devs=2 node_types=0x1,0x101 multiplanar=2,2
run "multi-planar vivid: vstreamsrc mmap/userptr/dmabuf, every byte v4l2-ctl's" mplane_vivid
run "memory per plane (YUV444M): vstreamsrc mmap/userptr/dmabuf, every byte" per_plane_vivid
run "memory per plane: vstreamsink mmap/userptr/copy/dmabuf-import, looped back bit-exact" per_plane_sink_vivid
rmmod vivid
fanout_and_unload
runtime_pipes
finish

