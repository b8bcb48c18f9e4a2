#!/bin/busybox sh
# /init of the arm64 guest (tests/vm/arm64.sh builds its initramfs):
# busybox, vstream.ko and the modules it needs, static arm64 builds of the
# vs-* programs under /b, lib.sh and groups.sh under /s.  Prints TAP.
/bin/busybox mkdir -p /proc /sys /dev /tmp /sbin /usr/bin /usr/sbin
/bin/busybox --install -s
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
B=/b S=/s
. $S/tests/vm/lib.sh
group_init

load_mods() {
	for m in $(cat /modules); do
		[ -d /sys/module/$(echo $m | tr - _) ] || insmod /lib/$m.ko ||
			{ dmesg | tail -n 5; return 1; }
	done
}
echo "# vstream arm64 guest on $(uname -r) $(uname -m), $(nproc) CPUs"
run "load videobuf2 and v4l2-tpg ($(cat /modules))" load_mods
run "insmod vstream.ko pipes=2 readers=2" load pipes=2 readers=2 max_width=1920 max_height=1088
OUT0=$(node vstream-0-output); CAP00=$(node vstream-0-capture-0); CAP01=$(node vstream-0-capture-1)
OUT1=$(node vstream-1-output); CAP10=$(node vstream-1-capture-0)
echo "# nodes: $OUT0 $CAP00 $CAP01 / $OUT1 $CAP10"
. $S/tests/vm/groups.sh
memory_groups
run "rmmod vstream" rmmod vstream
run "dmesg has no WARNING/BUG/Oops" sh -c "! dmesg | grep -E 'WARNING:|BUG:|Oops|Call Trace'"
echo "1..$n"
echo "# arm64 guest: $((n - failed)) passed, $failed failed"
poweroff -f
