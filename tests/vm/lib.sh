# Helpers shared by the guest-side suites (suite.sh, clients.sh, net.sh,
# runtime.sh, install.sh, deb.sh); the caller sets B (build dir) and S
# (source dir) before sourcing it.
n=0
failed=0
K=$VSTREAM_KROOT
PIC="python3 $S/tests/vm/picture.py"

# group_init NAME: a TAP group's fresh log dir $LOG ($B/vm-logs-NAME, or
# $B/vm-logs for the main suite) and the GStreamer environment its
# pipelines run in: this build's plugins, a registry in the guest's tmpfs
group_init() {
	LOG=$B/vm-logs${1:+-$1}
	rm -rf $LOG
	mkdir -p $LOG
	export GST_PLUGIN_PATH=$B/gst-plugin GST_REGISTRY=/tmp/gst-registry.bin
	export GST_DEBUG_NO_COLOR=1 TMPDIR=/tmp TEMP=/tmp
}

# run NAME CMD...: one TAP test; its output goes to the log, the tail to TAP
run() {
	name=$1
	shift
	n=$((n + 1))
	centis
	run_t0=$cs
	if "$@" >$LOG/$n.log 2>&1; then
		echo "ok $n - $name"
	else
		failed=$((failed + 1))
		echo "not ok $n - $name"
		tail -n 25 $LOG/$n.log | sed 's/^/# /'
	fi
	# how long it took: what CI's time budget is spent on (docs/testing.md)
	centis
	run_t0=$((cs - run_t0))
	echo "# took $((run_t0 / 100)).$((run_t0 / 10 % 10)) s"
}

# centis: cs = the guest's uptime in hundredths of a second (no fork)
centis() {
	read -r cs rest </proc/uptime
	cs=${cs%.*}${cs#*.}
}

# node NAME: the /dev path of the video node with that sysfs name.  Shell
# builtins only: on the debug kernel every exec costs about half a second
# under emulation, and the suites call this often
node() {
	for f in /sys/class/video4linux/video*/name; do
		read -r nm <$f 2>/dev/null || continue
		if [ "$nm" = "$1" ]; then
			f=${f%/name}
			echo /dev/${f##*/}
			return 0
		fi
	done
	return 1
}

# load_deps: what vstream.ko needs before insmod, from its own modinfo (a
# kernel may build some in, or as modules: the debug kernel has font)
load_deps() {
	for m in $(modinfo -F depends $B/kmod/vstream.ko | tr ',-' ' _'); do
		# loaded already (after an rmmod vstream): no modprobe to exec
		[ -d /sys/module/$m ] || modprobe -d "$K" $m || return 1
	done
}

load() {
	insmod $B/kmod/vstream.ko "$@" && udevadm settle 2>/dev/null
	for i in 1 2 3 4 5; do node vstream-0-output >/dev/null && return 0; sleep 1; done
	return 1
}


# node_stat NODE KEY: one of the node's counters (its sysfs stats),
# builtins only
node_stat() {
	while read -r k v; do
		[ "$k" = "$2" ] && { echo $v; return 0; }
	done </sys/class/video4linux/${1#/dev/}/stats
	return 1
}

# frames NODE: the node's frame counter
frames() {
	node_stat $1 frames
}

# wait_frames NODE COUNT SECS: until NODE's counter reaches COUNT, a real
# signal that frames flow (under emulation clients take seconds to start)
wait_frames() {
	i=0
	while c=$(frames $1) && [ "$c" -lt "$2" ]; do
		i=$((i + 1))
		if [ $i -gt $(($3 * 5)) ]; then
			echo "$1: $c frames after $3 s, waited for $2"
			return 1
		fi
		sleep 0.2
	done
	[ -n "$c" ] || { echo "$1: no frame counter"; return 1; }
}

# guest_kdir: the running kernel's build tree: Debian's headers package,
# else /lib/modules/<kernel>/build, else (a kernel built here: the debug
# lane) the tree linked from its modules
guest_kdir() {
	gk=/usr/src/linux-headers-$(uname -r)
	[ -e "$gk/Makefile" ] || gk=$(readlink -f /lib/modules/$(uname -r)/build || true)
	[ -n "$gk" ] && [ -e "$gk/Makefile" ] || gk=$K/lib/modules/$(uname -r)/build
	echo "$gk"
}

# stage_modules ROOT KO: a module root at ROOT/lib/modules/<this kernel>
# holding what KO needs (modinfo -F depends, and what modprobe says those
# need) from the guest kernel's modules ($K), so depmod there reads a
# handful of modules, not the thousands of the whole kernel (minutes under
# emulation); no list of ours to keep up to date
stage_modules() {
	sm_dir=$1/lib/modules/$(uname -r)
	mkdir -p "$sm_dir"
	cp "$K"/lib/modules/$(uname -r)/modules.order \
		"$K"/lib/modules/$(uname -r)/modules.builtin* "$sm_dir"/
	for sm_m in $(modinfo -F depends "$2" | tr , ' '); do
		modprobe -d "$K" -S "$(uname -r)" --show-depends "$sm_m" || return 1
	done | awk '$1 == "insmod" { print $2 }' | sort -u >/tmp/stage.list
	[ -s /tmp/stage.list ] || { echo "stage_modules: nothing for $2"; return 1; }
	while read -r sm_f; do
		sm_rel=${sm_f#"$K"/lib/modules/$(uname -r)/}
		mkdir -p "$sm_dir/$(dirname "$sm_rel")"
		ln -sf "$sm_f" "$sm_dir/$sm_rel"
	done </tmp/stage.list
}
