#!/bin/sh
# The real-clients group, run inside the guest by tests/vm/vm-run: the
# programs people point at a virtual camera (ffmpeg, Chromium, OpenCV,
# PipeWire, stock GStreamer, v4l2-ctl), each judged by the picture that
# arrived: a static picture compared bit-exact, or colours sampled where
# the producer's picture differs from the idle pattern.  Every wait is on
# a real signal (a node's frame counter, a line in a log), never a sleep
# standing in for one.  Usage: clients.sh BUILDDIR SRCDIR
B=$(readlink -f "$1")
S=$(readlink -f "$2")
. $S/tests/vm/lib.sh
group_init clients
PAGE=$S/tests/vm/camera.html
T=/tmp/clients
mkdir -p $T

# stop PID: end a background client and everything it started
stop() {
	kill -TERM -- -$1 2>/dev/null || kill -TERM $1 2>/dev/null
	wait $1 2>/dev/null
	return 0
}

# ffmpeg_producer FILE PIXFMT WxH [ffmpeg output args]: FILE looped as a
# camera at 30 fps, the way v4l2loopback's guides and OBS feed a device
ffmpeg_producer() {
	f=$1 pf=$2 sz=$3
	shift 3
	setsid ffmpeg -nostdin -hide_banner -loglevel error -re -stream_loop -1 \
		-f rawvideo -pix_fmt $pf -video_size $sz -framerate 30 -i $f \
		"$@" -f v4l2 $OUT >$LOG/ffmpeg.$n.log 2>&1 &
	PROD=$!
}

# gst_producer FILE FORMAT W H: FILE frozen into a 30 fps stream by stock
# GStreamer into vstreamsink
gst_producer() {
	setsid gst-launch-1.0 -q filesrc location=$1 ! \
		rawvideoparse format=$2 width=$3 height=$4 framerate=30/1 ! \
		imagefreeze is-live=true ! vstreamsink device=$OUT \
		>$LOG/gst.$n.log 2>&1 &
	PROD=$!
}

# fed COUNT: until the producer has put COUNT frames through the pipe
fed() {
	wait_frames $OUT $(($(frames $OUT) + $1)) 120
}

# browser_open NAME LOG LABEL: a headless browser on the camera page,
# asked for the camera named LABEL
browser_open() {
	url="file://$PAGE#$(echo "$3" | sed 's/ /%20/g')"
	case $1 in
	chromium)
		# one process: under emulation trixie's Chromium children miss
		# their 15 s connection deadline and the page never runs
		setsid chromium --headless=new --no-sandbox --disable-gpu \
			--single-process --no-zygote \
			--use-fake-ui-for-media-stream --no-first-run \
			--user-data-dir=$T/chromium.$n --enable-logging=stderr \
			"$url" >$2 2>&1 &
		;;
	firefox)
		# file:// pages may use a camera; no prompt; console to stdout
		mkdir -p $T/firefox.$n
		cat >$T/firefox.$n/user.js <<-EOT
		user_pref("media.navigator.permission.disabled", true);
		user_pref("media.navigator.streams.fake", false);
		user_pref("media.webrtc.camera.allow-pipewire", false);
		user_pref("devtools.console.stdout.content", true);
		EOT
		setsid firefox-esr --headless --no-remote --profile $T/firefox.$n \
			"$url" >$2 2>&1 &
		;;
	esac
	BROWSER=$!
}

# browser_sees LOG quad|bars SECS: until the newest colours the page
# logged are the producer's quadrants (quad) or the idle colour bars
browser_sees() {
	t0=$(date +%s)
	while [ $(($(date +%s) - t0)) -lt $3 ]; do
		l=$(tail -n 20 $1 | sed -n 's/.*VSTREAM size [0-9x]* quad \(.*\) bars \(.*\) end.*/\1|\2/p' |
			tail -n 1)
		if [ -n "$l" ]; then
			[ $2 = quad ] && c=${l%|*} || c=${l#*|}
			if $PIC rgb "$c" $2 >$T/pic.out; then
				cat $T/pic.out
				echo "seen after $(($(date +%s) - t0)) s"
				return 0
			fi
		fi
		grep -q 'VSTREAM error' $1 && break
		sleep 1
	done
	echo "not seen in $3 s"
	grep 'VSTREAM' $1 | tail -n 3
	cat $T/pic.out 2>/dev/null
	return 1
}

# reads ctl|src CAP FILE same|jpegs REF: ten frames read by v4l2-ctl or
# vstreamsrc into FILE are, every byte, copies of REF
reads() {
	case $1 in
	ctl) v4l2-ctl -d $2 --stream-mmap --stream-count=10 --stream-to=$3 ;;
	src) gst-launch-1.0 -q vstreamsrc device=$2 num-buffers=10 ! filesink location=$3 ;;
	esac && $PIC $4 $3 $5
}

# took: after a browser test, how long the browser took to show it
took() {
	sed -n 's/^seen after \(.*\)/# (seen after \1)/p' $LOG/$n.log
}

echo "# vstream real-clients group on $(uname -r)"
run "load videobuf2 and v4l2-tpg" load_deps
# named as in README's "A browser video call"
run "insmod vstream.ko readers=2 card_label='\"Meeting cam\"'" load pipes=1 readers=2 \
	max_width=1920 max_height=1088 card_label='"Meeting cam"'

OUT=$(node vstream-0-output); CAP0=$(node vstream-0-capture-0); CAP1=$(node vstream-0-capture-1)
echo "# nodes: $OUT $CAP0 $CAP1"
$PIC make yuyv422 640 480 $T/q.yuyv
$PIC make yuyv422 1280 720 $T/q720.yuyv
# the same pictures as media files (FFV1 is lossless: bit-exact back)
for q in q:640x480 q720:1280x720; do
	ffmpeg -nostdin -hide_banner -loglevel error -stream_loop 29 -f rawvideo \
		-pix_fmt yuyv422 -video_size ${q#*:} -framerate 30 -i $T/${q%:*}.yuyv \
		-c:v ffv1 -pix_fmt yuv422p $T/${q%:*}.mkv
done
ffmpeg -nostdin -hide_banner -loglevel error -f rawvideo -pix_fmt yuyv422 \
	-video_size 640x480 -i $T/q.yuyv -c:v mjpeg -pix_fmt yuvj422p -q:v 5 \
	-f mjpeg $T/q.jpg

run "names: a card name per reader, unique bus_info" sh -c "
	v4l2-ctl -d $CAP0 -D | grep -q 'Card type *: Meeting cam (reader 0)\$' &&
	v4l2-ctl -d $CAP1 -D | grep -q 'Card type *: Meeting cam (reader 1)\$' &&
	v4l2-ctl -d $OUT -D | grep -q 'Bus info *: platform:vstream-00-out\$' &&
	v4l2-ctl -d $CAP1 -D | grep -q 'Bus info *: platform:vstream-00-cap1\$'"
run "an idle reader offers discrete sizes and intervals" sh -c "
	v4l2-ctl -d $CAP0 --list-formats-ext | tee /dev/stderr | grep -q 'Size: Discrete 640x480' &&
	v4l2-ctl -d $CAP0 --list-formats-ext | grep -q 'Interval: Discrete 0.033s'"

# ffmpeg writes the camera; a reader opened before it (YU12 320x240, as
# a browser might have picked) gets the producer's picture converted.
setsid v4l2-ctl -d $CAP1 --set-fmt-video=width=320,height=240,pixelformat=YU12 \
	--stream-mmap --stream-count=100000 --stream-to=$T/conv.yuv >/dev/null 2>&1 &
READER=$!
wait_frames $CAP1 3 60 >/dev/null
ffmpeg_producer $T/q.yuyv yuyv422 640x480
run "ffmpeg raw producer (write()) feeds the pipe" fed 10
# converted_check: the reader that opened first now shows the quadrants
converted_check() {
	wait_frames $CAP1 $(($(frames $CAP1) + 5)) 60 || return 1
	stop $READER
	$PIC yuv $T/conv.yuv yuv420p 320 240
}
run "a reader opened before the producer gets its picture converted (YU12 320x240)" \
	converted_check
stop $READER
run "ffmpeg raw producer read bit-exact by v4l2-ctl" reads ctl $CAP0 $T/ctl.yuv same $T/q.yuyv
run "ffmpeg raw producer read bit-exact by vstreamsrc" reads src $CAP1 $T/src.yuv same $T/q.yuyv
stop $PROD

# The README's recipe: a media file as the camera, through ffmpeg.
base=$(frames $OUT)
WIDTH=640 HEIGHT=480 setsid $S/pipelines/ffmpeg-camera.sh $OUT $T/q.mkv >$LOG/recipe.log 2>&1 &
PROD=$!
run "recipe ffmpeg-camera.sh: a media file as the camera, read bit-exact" eval \
	"wait_frames $OUT $((base + 10)) 120 && reads ctl $CAP0 $T/recipe.yuv same $T/q.yuyv"
stop $PROD

# A compressed producer: each write() is one frame of its own length.
ffmpeg_producer $T/q.yuyv yuyv422 640x480 -c:v mjpeg -pix_fmt yuvj422p -q:v 5
run "ffmpeg MJPEG producer feeds the pipe" fed 10
run "ffmpeg MJPEG frames arrive whole and exact (v4l2-ctl)" reads ctl $CAP0 $T/ctl.mjpg jpegs $T/q.jpg
run "ffmpeg MJPEG frames arrive whole and exact (vstreamsrc)" reads src $CAP1 $T/src.mjpg jpegs $T/q.jpg
stop $PROD

# Stock GStreamer produces; ffmpeg, OpenCV and Chromium read at once.
gst_producer $T/q.yuyv yuy2 640 480
run "GStreamer producer feeds the pipe" fed 10
run "ffmpeg reads a GStreamer producer bit-exact" sh -c "
	ffmpeg -nostdin -hide_banner -loglevel error -f v4l2 -i $CAP0 -frames:v 10 \
		-c:v rawvideo -f rawvideo -y $T/ff.yuv &&
	$PIC same $T/ff.yuv $T/q.yuyv"
run "OpenCV reads reader 1 while ffmpeg reads reader 0" sh -c "
	ffmpeg -nostdin -hide_banner -loglevel error -f v4l2 -i $CAP0 -frames:v 60 \
		-f null - & f=\$!
	$PIC opencv $CAP1 && wait \$f"
browser_open chromium $LOG/chromium1.log "Meeting cam (reader 0)"
run "Chromium: getUserMedia shows the producer's picture" browser_sees $LOG/chromium1.log quad 180
took
stop $BROWSER
stop $PROD

# browser_call NAME TITLE CAP PRODUCER...: README's "a browser video
# call": the page opened first lists the idle camera (reader CAP) and shows
# the colour bars; PRODUCER starts after and the page must show its
# picture, converted to whatever the browser picked
browser_call() {
	b=$1 title=$2 cap=$3
	shift 3
	browser_open $b $LOG/$b-call.log "$(v4l2-ctl -d $cap -D | sed -n 's/.*Card type *: //p')"
	run "$title: a page opened before the producer lists the idle camera" \
		browser_sees $LOG/$b-call.log bars 240
	took
	"$@"
	run "$title: ... then shows the producer started after it" \
		browser_sees $LOG/$b-call.log quad 120
	took
	v4l2-ctl -d $cap --get-fmt-video |
		sed -n "s/^\t*\(Width.*\|Pixel Format.*\)/# $title opened: \1/p"
	stop $BROWSER
}
# the ffmpeg recipe at 720p (scaled down to what Chromium picked)
recipe_720() {
	setsid $S/pipelines/ffmpeg-camera.sh $OUT $T/q720.mkv >$LOG/recipe720.log 2>&1 &
	PROD=$!
}
# a variable-rate producer: the network camera recipe, uncompressed RTP on
# loopback, whose depayloader says framerate=0/1 (as screen capture and
# appsrc do)
rtp_producer() {
	WIDTH=640 HEIGHT=480 setsid $S/pipelines/rtp-camera.sh $OUT 5004 \
		>$LOG/rtp-camera.log 2>&1 &
	PROD=$!
	RAW=$T/q.yuyv WIDTH=640 HEIGHT=480 RATE=10 setsid $S/pipelines/rtp-send.sh \
		127.0.0.1 5004 >$LOG/rtp-send.log 2>&1 &
	SENDER=$!
}
browser_call chromium Chromium $CAP1 rtp_producer
stop $SENDER
stop $PROD
browser_call firefox Firefox $CAP0 recipe_720
stop $PROD

# PipeWire: its udev-driven V4L2 monitor makes each reader a Video/Source
# named after the card; pipewiresrc reads the producer's bytes through it.
pipewire_up() {
	export SYSTEMD_IGNORE_CHROOT=1	# the guest runs chrooted
	/lib/systemd/systemd-udevd --daemon >$LOG/udevd.log 2>&1 || return 1
	udevadm trigger --subsystem-match=video4linux --action=add && udevadm settle -t 60
	# wireplumber's logind watch needs these; the guest has no systemd
	mkdir -p /run/systemd/seats /run/systemd/sessions /run/systemd/users /run/systemd/machines
	export XDG_RUNTIME_DIR=$T/xdg
	mkdir -p -m 700 $XDG_RUNTIME_DIR
	DBUS=$(dbus-daemon --session --address=unix:path=$XDG_RUNTIME_DIR/bus --fork \
		--nopidfile --print-pid)
	export DBUS_SESSION_BUS_ADDRESS=unix:path=$XDG_RUNTIME_DIR/bus
	setsid pipewire >$LOG/pipewire.log 2>&1 &
	PW=$!
	setsid wireplumber >$LOG/wireplumber.log 2>&1 &
	WP=$!
}
# pw_node DESCRIPTION: the name of the PipeWire node so described
pw_node() {
	pw-dump 2>/dev/null | python3 -c '
import json, sys
for o in json.load(sys.stdin):
    p = o.get("info", {}).get("props", {})
    if p.get("media.class") == "Video/Source" and p.get("node.description") == sys.argv[1]:
        print(p["node.name"])' "$1"
}
pw_check() {
	for i in $(seq 1 60); do
		pwn=$(pw_node "Meeting cam (reader 1) (V4L2)")
		[ -n "$pwn" ] && break
		sleep 1
	done
	pw-cli ls Node | grep -E 'node.description|media.class'
	[ -n "$pwn" ] || { echo "no PipeWire Video/Source for reader 1"; return 1; }
	timeout 120 gst-launch-1.0 -q pipewiresrc target-object=$pwn num-buffers=10 ! \
		video/x-raw,format=YUY2 ! filesink location=$T/pw.yuv &&
	$PIC same $T/pw.yuv $T/q.yuyv
}
ffmpeg_producer $T/q.yuyv yuyv422 640x480
pipewire_up
run "PipeWire lists each reader and pipewiresrc reads the producer bit-exact" pw_check
stop $WP
stop $PW
kill $DBUS
udevadm control --exit
stop $PROD

run "rmmod vstream" rmmod vstream
run "dmesg has no WARNING/BUG/Oops" \
	sh -c "! dmesg | $S/tests/vm/dmesg-filter | grep -E 'WARNING:|BUG:|Oops|Call Trace'"
echo "1..$n"
echo "# real-clients group: $((n - failed)) passed, $failed failed"
[ $failed -eq 0 ]
