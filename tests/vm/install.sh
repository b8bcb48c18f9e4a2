#!/bin/sh
# Installed like a driver, proven in a fresh guest (tests/vm/vm-run, test
# vm-install): kmod/install.sh (what "meson install" and "make -C kmod
# install" run) puts vstream.ko under updates/ of a module root that holds
# this kernel's modules, depmod indexes it, "modprobe vstream" pulls in
# videobuf2 and v4l2-tpg by itself, the installed rule gives the nodes
# stable names, and frames go through bit-exact.
# Usage: install.sh BUILDDIR SRCDIR
set -e
B=$1 S=$2
kver=$(uname -r)
M=/tmp/mroot
say() { echo "install: $*"; }

# nothing of the media stack loaded: modprobe must find it all
if grep -E '^(vstream|videobuf2_common|v4l2_tpg|videodev) ' /proc/modules; then
	say "already loaded: modprobe could not be proved to load them"
	exit 1
fi

# a module root with what vstream needs of this kernel's modules
. "$S/tests/vm/lib.sh"
kdir=$(guest_kdir)
rm -rf $M
stage_modules $M "$B/kmod/vstream.ko"
DESTDIR=$M sh "$S/kmod/install.sh" "$kdir" "$B/kmod"
where=$(modinfo -b $M -n vstream)
say "modinfo: $where"
case $where in $M/lib/modules/$kver/updates/vstream.ko*) ;; *) exit 1 ;; esac

# the installed udev rule names the nodes; modprobe from the installed tree
mkdir -p /run/udev/rules.d
cp "$S/data/60-vstream.rules" /run/udev/rules.d/
export SYSTEMD_IGNORE_CHROOT=1	# the guest runs chrooted
/lib/systemd/systemd-udevd --daemon
trap 'udevadm control --exit' EXIT
modprobe -d $M vstream pipes=1 readers=1
udevadm settle -t 60
for m in videobuf2_v4l2 videobuf2_vmalloc v4l2_tpg configfs vstream; do
	# built into the kernel (configfs on the debug kernel) is loaded too
	grep -qs "/$m\.ko" $M/lib/modules/$kver/modules.builtin && continue
	grep -q "^$m " /proc/modules || { say "modprobe did not load $m"; exit 1; }
done
out=/dev/v4l/by-vstream/vstream-0-output cap=/dev/v4l/by-vstream/vstream-0-capture
ls -l /dev/v4l/by-vstream/
[ "$(cat /sys/class/video4linux/$(basename $(readlink -f $out))/name)" = vstream-0-output ]
[ "$(cat /sys/class/video4linux/$(basename $(readlink -f $cap))/name)" = vstream-0-capture ]
"$B/tests/vm/vs-loopback" -o $(readlink -f $out) -c $(readlink -f $cap) \
	-f YUYV -s 320x240 -n 10 -Z zero
# a pipe added at runtime is named by the same rule, and unnamed on del
grep -q ' /sys/kernel/config ' /proc/mounts || mount -t configfs configfs /sys/kernel/config
"$B/tools/vstream-ctl" add cam
udevadm settle -t 60
"$B/tests/vm/vs-loopback" -o $(readlink -f /dev/v4l/by-vstream/cam-output) \
	-c $(readlink -f /dev/v4l/by-vstream/cam-capture) -f YUYV -s 320x240 -n 10 -Z zero
"$B/tools/vstream-ctl" list
"$B/tools/vstream-ctl" del cam
udevadm settle -t 60
[ ! -e /dev/v4l/by-vstream/cam-output ]
modprobe -d $M -r vstream
if grep -q '^vstream ' /proc/modules; then
	say "modprobe -r left vstream loaded"
	exit 1
fi
# README's "Load at boot": the options line in a modprobe.d file
mkdir -p /tmp/modprobe.d
echo 'options vstream pipes=1 readers=2 card_label="Meeting cam"' >/tmp/modprobe.d/vstream.conf
modprobe -d $M -C /tmp/modprobe.d vstream
udevadm settle -t 60
v4l2-ctl -d /dev/v4l/by-vstream/vstream-0-capture-1 -D | grep -q 'Card type *: Meeting cam' || {
	say "modprobe.d options not applied"
	exit 1
}
modprobe -d $M -r vstream
# README's uninstall ("make -C kmod uninstall" runs it): the module goes
# from updates/ and depmod forgets it
DESTDIR=$M sh "$S/kmod/install.sh" --uninstall "$kdir"
if modinfo -b $M -n vstream 2>/dev/null; then
	say "uninstall left vstream where modprobe finds it"
	exit 1
fi
say "modprobe vstream from $where: deps loaded, named nodes (also a runtime pipe), frames bit-exact; uninstalled"
