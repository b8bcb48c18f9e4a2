#!/bin/sh
# The benchmark inside the guest (started by tests/bench/run):
#   guest.sh BUILDDIR SRCDIR V4L2LOOPBACK_DIR SECONDS [SECTIONS [SIZES]]
# SECTIONS: any of throughput (with the peer and fan-out tables), latency,
# idle, gst (default: all); SIZES: the throughput table's sizes.
# Every case runs in this one guest so the ratios compare like with like;
# under emulation only the ratios mean something.
B=$1
S=$2
LB=$3
SECS=$4
SECTIONS=${5:-throughput latency idle gst}
SIZES=${6:-640x480 1920x1080 3840x2160}
want() { case " $SECTIONS " in *" $1 "*) return 0 ;; esac; return 1; }
K=$VSTREAM_KROOT
export GST_PLUGIN_PATH=$B/gst-plugin GST_REGISTRY=/tmp/gst-registry.bin TMPDIR=/tmp

node() {
	for f in /sys/class/video4linux/video*/name; do
		[ "$(cat $f)" = "$1" ] && echo /dev/$(basename $(dirname $f)) && return 0
	done
	return 1
}
kv() {	# kv KEY LINE: the value of KEY=... in LINE
	echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"
}
median() {	# median LINES: the line with the median fps (of those with one)
	echo "$1" | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^fps=/) print substr($i, 5), $0 }' |
		sort -n | awk '{ l[NR] = $0 } END { if (NR) print l[int((NR + 1) / 2)] }' |
		cut -d' ' -f2-
}
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0 && a != "") printf "%.2f", a / b; else print "-" }'
}

for m in $(modinfo -F depends $B/kmod/vstream.ko | tr ',' ' '); do
	modprobe -d "$K" $m || exit 1
done
# readers=4 for the fan-out rows; the other rows use capture-0 of each pipe
# (readers that never open cost the pipe nothing)
insmod $B/kmod/vstream.ko pipes=2 readers=4 max_width=3840 max_height=2160 pace_output=0 || exit 1
# exclusive_caps=1: the setting v4l2loopback documents for GStreamer and
# browsers (OUTPUT only until a writer streams, then CAPTURE only)
insmod $LB/v4l2loopback.ko devices=1 max_buffers=4 exclusive_caps=1 card_label=loopback ||
	exit 1
sleep 1
OUT0=$(node vstream-0-output); CAP0=$(node vstream-0-capture-0)
CAP01=$(node vstream-0-capture-1); CAP02=$(node vstream-0-capture-2)
CAP03=$(node vstream-0-capture-3)
OUT1=$(node vstream-1-output); CAP1=$(node vstream-1-capture-0)
FANOUT_SIZES="640x480 1920x1080"	# add 3840x2160: 12 more runs
LBN=$(node loopback)
VB=$B/tests/bench/vs-bench
GB=$B/tests/bench/gst-bench

echo "# vstream benchmark, $(uname -r), $(nproc) vCPUs (TCG), ${SECS}s per case"
echo "# peer: $(cat $LB/VERSION 2>/dev/null || echo v4l2loopback)"
if want throughput; then
echo "# fps: frames the reader got per second (the producer's own when alone)"
echo "# x alone: fps / the producer alone on the same driver; cpu: us per frame"
echo "# (process + the pipe's kernel thread); copies: per frame, from sysfs;"
echo "# torn: share of received frames overwritten while the reader had them"
echo "# (repeated frames are not counted in fps); alone and mmap: median of 3"
printf '%-10s %-5s %-26s %9s %8s %8s %7s %6s\n' size format case fps "x alone" cpu copies torn
summary=""
fanout=""
for size in $SIZES; do
	for fmt in YUYV NV12; do
		row() {	# row CASE LINE [BASE_FPS]
			f=$(kv fps "$2")
			if [ -z "$f" ]; then
				case "$2" in
				*"REQBUFS"*"Invalid argument"*) why="not supported (REQBUFS: EINVAL)" ;;
				*) why="failed: $(echo "$2" | tail -n1)" ;;
				esac
				printf '%-10s %-5s %-26s %s\n' $size $fmt "$1" "$why"
				return
			fi
			c=$(kv copies "$2")
			[ "$c" = "-1" ] && c="?"
			t=$(kv torn "$2")
			printf '%-10s %-5s %-26s %9s %8s %8s %7s %6s\n' $size $fmt "$1" "$f" \
				"$(ratio "$f" "${3:-}")" "$(kv cpu_us "$2")" "$c" "${t:--}"
		}
		fanrow() {	# fanrow READERS LINE BASE_FPS
			f=$(kv fps "$2")
			if [ -z "$f" ]; then
				printf '%-10s %-5s %7s  failed: %s\n' $size $fmt $1 \
					"$(echo "$2" | tail -n1)"
				return
			fi
			printf '%-10s %-5s %7s %9s %8s %8s %8s %6s\n' $size $fmt $1 "$f" \
				"$(ratio "$f" "$3")" "$(kv cpu_us "$2")" "$(kv copies "$2")" \
				"$(kv torn "$2")"
		}
		fanmed() {	# fanmed READERS RUNS: fanrow of the median run
			fm=$(median "$2")
			fanrow $1 "${fm:-$(echo "$2" | tail -n1)}" "$alone"
		}
		a="-f $fmt -s $size -t $SECS"
		r=$($VB -M $a 2>&1); row "memcpy of one frame" "$r"
		# the pair the target compares: three interleaved runs each,
		# medians, so host noise under TCG hits both alike; the fan-out
		# runs (2 and 4 readers) interleave with them for the same reason
		fan=""
		case " $FANOUT_SIZES " in *" $size "*) fan=1 ;; esac
		pa=""; pm=""; p2=""; p4=""
		for i in 1 2 3; do
			pa="$pa
$($VB -o $OUT0 -k vstream-0 $a 2>&1)"
			pm="$pm
$($VB -o $OUT0 -c $CAP0 -m mmap -k vstream-0 $a 2>&1)"
			[ -n "$fan" ] || continue
			p2="$p2
$($VB -o $OUT0 -c $CAP0 -c $CAP01 -m mmap -k vstream-0 $a 2>&1)"
			p4="$p4
$($VB -o $OUT0 -c $CAP0 -c $CAP01 -c $CAP02 -c $CAP03 -m mmap -k vstream-0 $a 2>&1)"
		done
		r=$(median "$pa"); alone=$(kv fps "$r")
		row "vstream producer alone" "$r" "$alone"
		r=$(median "$pm"); mm=$(kv fps "$r")
		row "vstream mmap" "$r" "$alone"
		if [ -n "$fan" ]; then
			# 1 reader is the vstream mmap run; fps is the slowest reader's
			fanout="$fanout$(fanmed 1 "$pm")
$(fanmed 2 "$p2")
$(fanmed 4 "$p4")
"
		fi
		r=$($VB -o $OUT0 -c $CAP0 -m userptr -k vstream-0 $a 2>&1)
		row "vstream userptr" "$r" "$alone"
		r=$($VB -o $OUT0 -c $CAP0 -m dmabuf -y $OUT1 -x $CAP1 -k vstream-0 $a 2>&1)
		row "vstream dmabuf" "$r" "$alone"
		r=$($VB -o $LBN $a 2>&1); lalone=$(kv fps "$r")
		row "v4l2loopback alone" "$r" "$lalone"
		r=$($VB -o $LBN -c $LBN -m mmap $a 2>&1); lm=$(kv fps "$r"); lall=$(kv all_fps "$r")
		row "v4l2loopback mmap" "$r" "$lalone"
		for m in userptr dmabuf; do
			r=$($VB -o $LBN -c $LBN -m $m -y $OUT1 -x $CAP1 $a 2>&1)
			row "v4l2loopback $m" "$r" "$lalone"
		done
		if [ $size = 640x480 ]; then
			# at a camera's rate both drivers should hand over every frame
			for d in vstream v4l2loopback; do
				if [ $d = vstream ]; then r=$($VB -o $OUT0 -c $CAP0 -r 30 $a 2>&1)
				else r=$($VB -o $LBN -c $LBN -r 30 $a 2>&1); fi
				row "$d mmap, 30 fps" "$r"
			done
		fi
		summary="$summary$(printf '%-10s %-5s %8s %8s %8s %9s %9s' $size $fmt "$mm" "$lm" \
			"$lall" "$(ratio "$mm" "$lm")" "$(ratio "$mm" "$lall")")
"
	done
done
echo
echo "# against the peer, MMAP both sides, producer flat out: intact frames/s of"
echo "# vstream and v4l2loopback, and every frame v4l2loopback handed over (torn too)"
printf '%-10s %-5s %8s %8s %8s %9s %9s\n' size format vstream v4l2lb "v4l2lb*" "x intact" "x v4l2lb*"
printf '%s' "$summary"

echo
echo "# fan-out: one producer, N MMAP readers on pipe 0's capture nodes, flat out"
echo "# fps: intact frames/s of the slowest reader; x alone: that / vstream"
echo "# producer alone above; cpu: us per frame of the slowest reader; copies:"
echo "# per frame, summed over the readers (their sysfs); torn: over all readers;"
echo "# median of 3 (1 reader: the vstream mmap row)"
printf '%-10s %-5s %7s %9s %8s %8s %8s %6s\n' size format readers fps "x alone" cpu copies torn
printf '%s' "$fanout"

fi
if want latency; then
echo
echo "# latency: the producer's QBUF to the reader's DQBUF (CLOCK_MONOTONIC stamped"
echo "# in the frame), intact new frames only, in ms; torn: every byte of every"
echo "# frame checked (vs-bench -C); fps: intact frames/s; one reader, YUYV"
printf '%-10s %-7s %-6s %-13s %8s %8s %8s %6s %8s\n' size memory rate driver p50 p99 max torn fps
ms() { awk -v u="$1" 'BEGIN { if (u != "") printf "%.2f", u / 1000; else print "-" }'; }
latrow() {	# latrow SIZE MEM RATE DRIVER LINE
	if [ -z "$(kv lat_p50_us "$5")" ]; then
		case "$5" in
		*"REQBUFS"*"Invalid argument"*) why="not supported (REQBUFS: EINVAL)" ;;
		*) why="failed: $(echo "$5" | tail -n1)" ;;
		esac
		printf '%-10s %-7s %-6s %-13s %s\n' $1 $2 $3 $4 "$why"
		return
	fi
	printf '%-10s %-7s %-6s %-13s %8s %8s %8s %6s %8s\n' $1 $2 $3 $4 \
		"$(ms "$(kv lat_p50_us "$5")")" "$(ms "$(kv lat_p99_us "$5")")" \
		"$(ms "$(kv lat_max_us "$5")")" "$(kv torn "$5")" "$(kv fps "$5")"
}
for size in 640x480 1920x1080; do
	for mem in mmap userptr; do
		for rate in 30 flat; do
			ra=""; [ $rate = flat ] || ra="-r $rate"
			a="-f YUYV -s $size -t $SECS -m $mem -C $ra"
			latrow $size $mem $rate vstream "$($VB -o $OUT0 -c $CAP0 $a 2>&1)"
			latrow $size $mem $rate v4l2loopback "$($VB -o $LBN -c $LBN $a 2>&1)"
		done
	done
done

fi
if want idle; then
echo
echo "# idle cost: CPU of the pipe's kernel thread (vstream-0), % of one CPU over"
echo "# ${SECS}s x 3, 640x480 YUYV"
kt_ticks() {	# kt_ticks COMM: utime+stime ticks of the kernel thread COMM
	for f in /proc/[0-9]*/stat; do
		read -r l <$f 2>/dev/null || continue
		case "$l" in *"($1)"*) echo "$l" | awk '{ print $14 + $15 }'; return ;; esac
	done
	echo 0
}
idle_case() {	# idle_case NAME CMD...: the thread's share while CMD runs
	name=$1; shift
	"$@" >/dev/null 2>&1 &
	pid=$!
	t=$((SECS * 3))
	k0=$(kt_ticks vstream-0)
	s0=$(cut -d' ' -f1 /proc/uptime)
	sleep $t	# a measuring window, not a wait for a result
	k1=$(kt_ticks vstream-0)
	s1=$(cut -d' ' -f1 /proc/uptime)
	kill $pid 2>/dev/null; wait $pid 2>/dev/null
	awk -v n="$name" -v k=$((k1 - k0)) -v hz=$(getconf CLK_TCK) -v a=$s0 -v b=$s1 \
		'BEGIN { printf "%-44s %6.2f %%\n", n, 100 * k / hz / (b - a) }'
}
v4l2-ctl -d $OUT0 -v width=640,height=480,pixelformat=YUYV >/dev/null 2>&1
v4l2-ctl -d $CAP0 -v width=640,height=480,pixelformat=YUYV >/dev/null 2>&1
idle_case "nobody attached" true
idle_case "a reader only (idle frames: test pattern)" \
	v4l2-ctl -d $CAP0 --stream-mmap --stream-count=100000
v4l2-ctl -d $CAP0 -c frames_without_producer=1 >/dev/null 2>&1
idle_case "a reader only (idle frames: Last Frame)" \
	v4l2-ctl -d $CAP0 --stream-mmap --stream-count=100000
v4l2-ctl -d $CAP0 -c frames_without_producer=0 >/dev/null 2>&1
idle_case "a producer only, 30 fps" $VB -o $OUT0 -f YUYV -s 640x480 -r 30 -t $((SECS * 3 + 5))
idle_case "a producer and a reader, 30 fps" \
	$VB -o $OUT0 -c $CAP0 -f YUYV -s 640x480 -r 30 -t $((SECS * 3 + 5))

fi
if want gst; then
echo
echo "# GStreamer, 1920x1080 YUY2, unsynced; x base: fps / videotestsrc ! fakesink"
echo "# (the producer's frames only: each is stamped as it enters the sink element"
echo "# and counted at the reader's fakesink if new); latency: stamp to fakesink,"
echo "# p50/p99 in ms, the producer live at 30 fps"
CAPS="video/x-raw,format=YUY2,width=1920,height=1080,framerate=30/1"
printf '%-48s %9s %8s %9s %9s\n' pipeline fps "x base" "p50 ms" "p99 ms"
gb() {	# gb PRODUCER CONSUMER
	if [ -n "$1" ]; then
		timeout 150 $GB -t $SECS -p "$1" -c "$2" 2>&1
	else
		timeout 150 $GB -t $SECS -c "$2" 2>&1
	fi
}
gcase() {	# gcase NAME PRODUCER CONSUMER: unsynced for fps, live for latency
	r=$(gb "$2" "$3")
	f=$(kv fps "$r")
	if [ -z "$f" ]; then
		why=$(echo "$r" | grep -m1 error= | cut -c7-100)
		printf '%-48s %s\n' "$1" "failed: ${why:-hung (killed after 150 s)}"
		return
	fi
	l=$(gb "$(echo "$2" | sed 's/videotestsrc/videotestsrc is-live=true/')" \
		"$(echo "$3" | sed 's/videotestsrc/videotestsrc is-live=true/')")
	printf '%-48s %9s %8s %9s %9s\n' "$1" "$f" "$(ratio "$f" "$base")" \
		"$(kv lat_p50_ms "$l")" "$(kv lat_p99_ms "$l")"
	[ -z "$base" ] && base=$f
}
base=""
ST="identity name=stamp"
gcase "videotestsrc ! fakesink" "" "videotestsrc ! $CAPS ! $ST ! fakesink name=sink sync=false"
gcase "vstreamsink -> vstream -> vstreamsrc" \
	"videotestsrc ! $CAPS ! $ST ! vstreamsink device=$OUT0 sync=false" \
	"vstreamsrc device=$CAP0 ! fakesink name=sink sync=false"
gcase "v4l2sink -> vstream -> v4l2src (stock)" \
	"videotestsrc ! $CAPS ! $ST ! v4l2sink device=$OUT0 sync=false" \
	"v4l2src device=$CAP0 ! fakesink name=sink sync=false"
gcase "v4l2sink -> v4l2loopback -> v4l2src (stock)" \
	"videotestsrc ! $CAPS ! $ST ! v4l2sink device=$LBN sync=false" \
	"v4l2src device=$LBN ! fakesink name=sink sync=false"
echo
fi
echo "# vstream pipe 0 after the run: $(tr '\n' ' ' </sys/class/video4linux/${OUT0#/dev/}/stats)"
