#!/bin/sh
# Runtime pipes (configfs, vstream-ctl), in the guest.  Each step is one
# TAP test of suite.sh; the pipes they make carry over from step to step.
# Usage: runtime.sh BUILDDIR SRCDIR STEP
B=$1 S=$2 step=$3
. $S/tests/vm/lib.sh
CTL=$B/tools/vstream-ctl
CFG=/sys/kernel/config/vstream
set -e

# until CMD succeeds, at most SECS seconds: a real signal, not a sleep
until_ok() {
	secs=$1
	shift
	i=0
	until "$@"; do
		i=$((i + 1))
		[ $i -le $((secs * 5)) ] || { echo "not after $secs s: $*"; return 1; }
		sleep 0.2
	done
}

# loop PIPE [READER]: frames through PIPE bit-exact, without a copy
loop() {
	cap=$1-capture
	[ -z "${2:-}" ] || cap=$1-capture-$2
	$B/tests/vm/vs-loopback -o $(node $1-output) -c $(node $cap) -f YUYV -s 320x240 \
		-n ${N:-20} -Z zero
}

# attr FILE VALUE: "ok", or the error the kernel gave writing VALUE
attr() {
	# coreutils echo: dash's says "I/O error" whatever the errno
	if /bin/echo "$2" 2>$LOG_ERR >$CFG/$1; then echo ok; else
		sed -n 's/.*: \([^:]*\)$/\1/p' $LOG_ERR; fi
}
LOG_ERR=$(mktemp)

# never CMD...: CMD must fail ("! CMD" does not stop a set -e script)
never() {
	if "$@"; then echo "succeeded, must not: $*"; exit 1; fi
}

case $step in
load)
	load_deps
	insmod $B/kmod/vstream.ko pipes=0
	grep -q ' /sys/kernel/config ' /proc/mounts ||
		mount -t configfs configfs /sys/kernel/config
	[ -d $CFG ]
	[ -z "$(ls $CFG)" ]
	;;
add3)
	# three pipes, each with its own readers, limits, format and label
	$CTL add cam
	# meet as vstream-pipes.service makes it at boot, from a file; loaded
	# again, the file changes nothing
	printf '# pipes at boot\nmeet --readers 2 --max 1280x720 --label "Meeting cam"\n' \
		>/tmp/pipes.conf
	$CTL load /tmp/pipes.conf
	$CTL load /tmp/pipes.conf | grep -q "^meet: exists, left as it is$"
	$CTL add fix --format YUYV:320x240@25
	$CTL list
	node meet-capture-1 >/dev/null
	[ "$(cat $CFG/meet/devices | wc -l)" = 3 ]
	v4l2-ctl -d $(node meet-capture-0) -D | grep -q 'Card type *: Meeting cam (reader 0)'
	v4l2-ctl -d $(node cam-output) -D | grep -q 'Card type *: cam$'
	# the fixed pipe offers one format, one size, one interval
	v4l2-ctl -d $(node fix-capture) --list-formats-ext >/tmp/fix.txt
	cat /tmp/fix.txt
	[ "$(grep -c "'" /tmp/fix.txt)" = 1 ]
	grep -q "Size: Discrete 320x240" /tmp/fix.txt
	[ "$(grep -c Size: /tmp/fix.txt)" = 1 ]
	grep -q "0.040s (25.000 fps)" /tmp/fix.txt
	v4l2-ctl -d $(node fix-output) -x width=640,height=480 --get-fmt-video-out |
		grep -q "Width/Height *: 320/240"
	# the limit holds: 1920 is out of meet's reach
	v4l2-ctl -d $(node meet-output) -x width=1920,height=1080 --get-fmt-video-out |
		grep -q "Width/Height *: 1280/720"
	;;
stream3)
	loop cam
	loop meet 0
	loop meet 1
	loop fix
	;;
del-other)
	# delete one pipe while another streams: the other goes on unharmed
	N=300 loop meet 1 >/tmp/meet.log 2>&1 &
	p=$!
	wait_frames $(node meet-capture-1) 11 60
	$CTL del cam
	never node cam-output
	wait $p || { cat /tmp/meet.log; exit 1; }
	cat /tmp/meet.log
	;;
del-open)
	# delete a pipe that is open and streaming: its nodes go at once,
	# as an unplugged camera; open handles get ENODEV until closed
	v4l2-ctl -d $(node fix-capture) --stream-mmap --stream-count=100000 >/tmp/r.log 2>&1 &
	r=$!
	v4l2-ctl -d $(node fix-output) --stream-out-mmap --stream-count=100000 >/tmp/w.log 2>&1 &
	w=$!
	wait_frames $(node fix-capture) 11 60
	python3 - $(node fix-output) "$CTL" <<'PY'
import errno, fcntl, os, subprocess, sys
fd = os.open(sys.argv[1], os.O_RDWR)
cap = bytearray(104)
fcntl.ioctl(fd, 0x80685600, cap)          # VIDIOC_QUERYCAP works
subprocess.check_call([sys.argv[2], "del", "fix"])
try:
    fcntl.ioctl(fd, 0x80685600, cap)
    sys.exit("QUERYCAP still works on a removed node")
except OSError as e:
    assert e.errno == errno.ENODEV, e
os.close(fd)
print("open handle: ENODEV after del, closed cleanly")
PY
	# the streaming clients end with an error instead of hanging
	until_ok 60 sh -c "! kill -0 $r 2>/dev/null && ! kill -0 $w 2>/dev/null"
	tail -n 3 /tmp/r.log /tmp/w.log
	[ ! -e $CFG/fix ]
	;;
readd)
	# the names are free again; the new pipe streams
	$CTL add cam
	$CTL add fix --format YUYV:320x240
	loop cam
	loop fix
	;;
uri)
	# vstream://PIPE names the nodes for GStreamer (gst-launch takes a URI
	# for an element): an orange producer, a reader that saves 5 frames
	gst-launch-1.0 -q videotestsrc pattern=solid-color foreground-color=0xffff8000 ! \
		video/x-raw,format=YUY2,width=320,height=240,framerate=30/1 ! \
		vstream://fix >/tmp/uprod.log 2>&1 &
	p=$!
	out=$(node fix-output)
	wait_frames $out $(($(frames $out) + 5)) 120
	gst-launch-1.0 -q vstream://fix ! identity eos-after=5 ! \
		filesink location=/tmp/uri.yuyv
	kill $p
	wait $p || true
	python3 $S/tests/vm/picture.py flat /tmp/uri.yuyv 320 240
	;;
hotplug)
	# a device monitor that is watching (udev running, as on a desktop)
	# sees the nodes of a pipe vstream-ctl adds come as vstream devices,
	# and go when it deletes it; only this plugin is loaded, so that
	# v4l2src's provider, which lists the same nodes under the same
	# names, does not answer for it (a rank does not set it aside
	# before GStreamer 1.29)
	export SYSTEMD_IGNORE_CHROOT=1	# the guest runs chrooted
	/lib/systemd/systemd-udevd --daemon
	m=
	trap '[ -z "$m" ] || kill $m 2>/dev/null; udevadm control --exit' EXIT
	GST_PLUGIN_SYSTEM_PATH_1_0=/nonexistent GST_REGISTRY=/tmp/hp-registry.bin \
		gst-device-monitor-1.0 -f Video/Source Video/Sink >/tmp/hp.out 2>&1 &
	m=$!
	until_ok 120 grep -q "^Monitoring devices" /tmp/hp.out
	$CTL add hot --label "Hot cam"
	cap=$(node hot-capture) out=$(node hot-output)
	# found LINE: a "Device found:" block has LINE (whole words)
	found() {
		awk -v line="$1" '
			/^Device [a-z]*:/ { inb = ($0 == "Device found:") }
			inb && index($0 " ", line " ") { ok = 1 }
			END { exit !ok }' /tmp/hp.out
	}
	until_ok 60 found "vstreamsrc device=$cap"
	until_ok 60 found "vstreamsink device=$out"
	never grep -q "^Device removed:" /tmp/hp.out
	$CTL del hot
	# gst-device-monitor names a removed device only: both of the pipe's
	removed() {
		[ "$(grep -A1 "^Device removed:" /tmp/hp.out | grep -c -e "name  : Hot cam$" \
			-e "name  : Hot cam (output)$")" -eq 2 ]
	}
	until_ok 60 removed
	cat /tmp/hp.out
	;;
cycles)
	# 200 add/delete cycles through configfs
	i=0
	while [ $i -lt 200 ]; do
		mkdir $CFG/cyc
		echo 1 >$CFG/cyc/enabled
		echo 0 >$CFG/cyc/enabled
		rmdir $CFG/cyc
		i=$((i + 1))
	done
	# and the same with enabled pipes removed directly
	i=0
	while [ $i -lt 20 ]; do
		$CTL add cyc >/dev/null
		rmdir $CFG/cyc
		i=$((i + 1))
	done
	never node cyc-output
	;;
concurrent)
	# 4 processes: their own pipes, and all racing for one name
	pids=""
	for p in 1 2 3 4; do
		(
			i=0
			while [ $i -lt 10 ]; do
				$CTL add par$p >/dev/null && $CTL del par$p || exit 1
				i=$((i + 1))
			done
			$CTL add same >/dev/null 2>&1 && echo won >/tmp/won.$p
			exit 0
		) &
		pids="$pids $!"
	done
	for p in $pids; do wait $p; done
	ls /tmp/won.* | wc -l | grep -qx 1
	rm -f /tmp/won.*
	loop same
	$CTL del same
	ls $CFG
	[ "$(ls $CFG | sort | tr '\n' ' ')" = "cam fix meet " ]
	;;
hostile)
	mkdir $CFG/h
	for kv in "h/readers 0" "h/readers 5" "h/readers -1" "h/readers x" \
		"h/max_width 99999" "h/max_width 8" "h/max_height 4294967297" \
		"h/format XXXX:640x480" "h/format YUYV:641x480" "h/format YUYV:640x480@0" \
		"h/format YUYV:640x480@30junk" "h/format YUYV:99999x480" "h/format YUYV" \
		"h/format YUYV:4294967936x480" "h/format YUYV:640x-480" \
		"h/enabled maybe"; do
		set -- $kv
		e=$(attr $1 "$2")
		echo "$1 <- $2: $e"
		[ "$e" = "Invalid argument" ] || [ "$e" = "Numerical result out of range" ]
	done
	[ "$(attr h/label "$(printf 'a\tb')")" = "Invalid argument" ]
	[ "$(attr h/label "0123456789012345678901234567890123")" = "Invalid argument" ]
	[ "$(attr h/label "$(printf 'caf\303\251')")" = "Invalid argument" ]
	# a fixed size beyond a later, smaller limit: refused at enable
	echo YUYV:1280x720 >$CFG/h/format
	echo 640 >$CFG/h/max_width
	[ "$(attr h/enabled 1)" = "Invalid argument" ]
	echo "" >$CFG/h/format
	echo 1 >$CFG/h/enabled
	[ "$(attr h/readers 2)" = "Device or resource busy" ]
	[ "$(attr h/format YUYV:320x240)" = "Device or resource busy" ]
	rmdir $CFG/h
	# names: reserved, too long, bad characters, via the tool too
	never mkdir $CFG/vstream-0
	never mkdir $CFG/abcdefghijklmnopqrstu
	never mkdir "$CFG/a b"
	never mkdir $CFG/.x
	never mkdir "$CFG/$(printf 'a\351')"
	[ -z "$(ls -A $CFG | grep -v -x -e cam -e fix -e meet)" ]
	set +e
	$CTL add "a/b"; [ $? = 2 ] || exit 1
	$CTL add cam; [ $? = 1 ] || exit 1
	$CTL del nope; [ $? = 1 ] || exit 1
	set -e
	[ "$(ls $CFG | sort | tr '\n' ' ')" = "cam fix meet " ]
	;;
mplane)
	# a multi-planar pipe: its nodes have only the _MPLANE types; the
	# elements carry a static picture through it bit-exact, producer
	# mmap/userptr x reader mmap/userptr/dmabuf, and mmap to mmap shares
	# the frame's memory (0 copies)
	$CTL add mp --mplane
	[ "$(cat $CFG/mp/mplane)" = 1 ]
	cap=$(node mp-capture) out=$(node mp-output)
	v4l2-ctl -d $cap -D | grep -q 'Video Capture Multiplanar'
	v4l2-ctl -d $out -D | grep -q 'Video Output Multiplanar'
	v4l2-ctl -d $cap --get-fmt-video | grep -q 'Number of planes *: 1'
	caps=video/x-raw,format=YUY2,width=320,height=240,framerate=30/1,colorimetry=bt601
	gst-launch-1.0 -q videotestsrc pattern=colors num-buffers=1 ! $caps ! \
		filesink location=/tmp/mpref.yuyv
	st=/sys/class/video4linux/${cap#/dev/}/stats
	for pm in mmap userptr; do
		gst-launch-1.0 -q videotestsrc pattern=colors ! $caps ! \
			vstreamsink device=$out io-mode=$pm >/tmp/mprod.log 2>&1 &
		p=$!
		wait_frames $out $(($(frames $out) + 5)) 120 || { kill $p; cat /tmp/mprod.log; exit 1; }
		for rm in mmap userptr dmabuf; do
			zc=$(sed -n 's/^zerocopy //p' $st) cp=$(sed -n 's/^copies //p' $st)
			gst-launch-1.0 -q vstreamsrc device=$cap io-mode=$rm \
				num-buffers=4 ! filesink location=/tmp/mp.yuyv
			echo "producer $pm, reader $rm:"
			python3 $S/tests/vm/picture.py same /tmp/mp.yuyv /tmp/mpref.yuyv
			if [ $pm$rm = mmapmmap ]; then
				cat $st
				[ "$(sed -n 's/^zerocopy //p' $st)" -ge $((zc + 4)) ]
				[ "$(sed -n 's/^copies //p' $st)" = $cp ]
			fi
		done
		kill $p
		wait $p || true
	done
	;;
rmmod)
	# configured pipes pin the module; once removed it unloads
	never rmmod vstream
	grep -q '^vstream ' /proc/modules
	for p in $(ls $CFG); do $CTL del $p; done
	rmmod vstream
	;;
*)
	echo "unknown step $step"
	exit 2
	;;
esac
