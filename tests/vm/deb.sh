#!/bin/sh
# The Debian packages installed as README says, in a fresh guest (test
# vm-deb, after tests/deb-build.sh built them): apt installs them into a
# writable layer over the guest's root, vstream-dkms's postinst has DKMS
# build and sign the module for the running kernel, modprobe finds it, the
# installed udev rule names the nodes, the installed vstream-ctl adds a
# pipe, the installed plugin (found by GStreamer's own search path) feeds
# it and reads it back, judged by picture; purging the packages takes the
# module away again.
# Usage: deb.sh DEBDIR BUILDDIR SRCDIR VERSION (tests/deb-build.sh has
# checked that debian/changelog says VERSION)
set -eu
D=$1 B=$2 S=$3 ver=$4
kver=$(uname -r)
say() { echo "deb: $*"; }
arch=$(dpkg --print-architecture)
. "$S/tests/vm/lib.sh"

# a root apt may change: tmpfs over the host's read-only root
R=/tmp/root
p=
cleanup() {
	[ -z "$p" ] || kill "$p" 2>/dev/null || true
	chroot $R udevadm control --exit 2>/dev/null || true
	umount -R $R 2>/dev/null || umount -l $R
}
mkdir -p /tmp/ov/u /tmp/ov/w $R
modprobe -d "$K" overlay
mount -t overlay overlay -o lowerdir=/,upperdir=/tmp/ov/u,workdir=/tmp/ov/w $R
trap cleanup EXIT
for m in proc sys dev dev/pts run; do mount --bind /$m $R/$m; done
mount -t tmpfs tmpfs $R/tmp
# /dev/fd, which udev would make: dkms's bash needs it for <(...)
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
# nothing of the host's: no module a meson install put in updates/, no
# DKMS state of vstream; this kernel's modules that vstream needs, and
# its tree where DKMS builds (/lib/modules/<kernel>/build)
kdir=$(guest_kdir)
rm -rf $R/lib/modules/$kver $R/var/lib/dkms/vstream
stage_modules $R "$B/kmod/vstream.ko"
ln -s "$kdir" $R/lib/modules/$kver/build
cp "$D"/vstream-dkms_${ver}_all.deb "$D"/gstreamer1.0-vstream_${ver}_$arch.deb \
	"$D"/vstream-utils_${ver}_$arch.deb $R/tmp/
in_root() { chroot $R /bin/sh -c "cd /tmp && $*"; }
# man-db's trigger would index every manual page (minutes under emulation)
rm -f $R/var/lib/man-db/auto-update

# README's line, from the directory the packages were built in (apt
# fetches nothing: every dependency is installed already)
line=$(grep "^sudo apt install \.\./vstream-dkms_" "$S/README.md")
line=$(echo "$line" | sed 's/^sudo apt install/apt-get install -y/; s|\.\./|./|g')
say "$line"
start=$(date +%s)
in_root "DEBIAN_FRONTEND=noninteractive $line" >/tmp/apt.log 2>&1 || {
	cat /tmp/apt.log
	cat $R/var/lib/dkms/vstream/*/build/make.log 2>/dev/null || true
	exit 1
}
say "installed in $(($(date +%s) - start)) s (DKMS built the module in the guest)"
grep -i -e dkms -e sign /tmp/apt.log | head -n 20
ko=$(in_root "modinfo -n vstream") || { say "modinfo finds no vstream"; exit 1; }
say "modinfo: $ko"
case $ko in
/lib/modules/$kver/updates/dkms/vstream.ko*) ;;
*) say "not DKMS's module"; exit 1 ;;
esac
v=$(in_root "modinfo -F version vstream")
[ "$v" = "$ver" ] || { say "the module says version $v, the packages $ver"; exit 1; }
signer=$(in_root "modinfo -F signer vstream")
[ -n "$signer" ] || { say "DKMS left the module unsigned"; exit 1; }
say "signed by \"$signer\""

# the installed rule and tools, modprobe as a user runs it
export SYSTEMD_IGNORE_CHROOT=1
in_root "/lib/systemd/systemd-udevd --daemon"
in_root "modprobe vstream pipes=0"
in_root "udevadm settle -t 60"
# the root's /sys is a bind of the guest's: configfs is mounted in it
grep -q " $R/sys/kernel/config " /proc/mounts ||
	mount -t configfs configfs $R/sys/kernel/config
in_root "vstream-ctl add cam --readers 1"
in_root "udevadm settle -t 60"
ls -l $R/dev/v4l/by-vstream/
out=/dev/v4l/by-vstream/cam-output cap=/dev/v4l/by-vstream/cam-capture
[ -e $R$out ] && [ -e $R$cap ] || { say "no by-vstream names from the installed rule"; exit 1; }

# the installed plugin, from GStreamer's system path only
unset GST_PLUGIN_PATH GST_PLUGIN_PATH_1_0 GST_PLUGIN_SYSTEM_PATH GST_PLUGIN_SYSTEM_PATH_1_0
export GST_REGISTRY=/tmp/deb-registry.bin
where=$(in_root "gst-inspect-1.0 vstreamsink" | sed -n 's/^ *Filename *//p')
say "vstreamsink from $where"
# /lib is /usr/lib on a merged root: GStreamer may say either
case $where in
/usr/lib/*/gstreamer-1.0/libgstvstream.so | /lib/*/gstreamer-1.0/libgstvstream.so) ;;
*) say "vstreamsink is not the installed plugin"; exit 1 ;;
esac
chroot $R /bin/sh -c "cd /tmp && exec gst-launch-1.0 -q videotestsrc is-live=true \
	pattern=solid-color foreground-color=0xffff8000 ! \
	video/x-raw,format=YUY2,width=320,height=240,framerate=30/1 ! \
	vstreamsink device=$out" >/tmp/prod.log 2>&1 &
p=$!
wait_frames "$(readlink -f $out)" 5 120 || { cat /tmp/prod.log; exit 1; }
in_root "gst-launch-1.0 -q vstreamsrc device=$cap num-buffers=5 ! \
	video/x-raw,format=YUY2,width=320,height=240 ! filesink location=/tmp/deb.yuyv"
kill $p
wait $p || true
p=
python3 "$S/tests/vm/picture.py" flat $R/tmp/deb.yuyv 320 240

# purge: the pipe and module go, the packages take DKMS's module with them
in_root "vstream-ctl del cam"
in_root "modprobe -r vstream"
line=$(grep "^sudo apt purge vstream-dkms" "$S/README.md" | sed 's/ *#.*//')
line=$(echo "$line" | sed 's/^sudo apt purge/apt-get purge -y/')
say "$line"
in_root "DEBIAN_FRONTEND=noninteractive $line" >/tmp/purge.log 2>&1 ||
	{ cat /tmp/purge.log; exit 1; }
if in_root "modinfo -n vstream" 2>/dev/null; then
	say "the module is still found after purge"
	exit 1
fi
[ ! -e $R/usr/src/vstream-$ver ] && [ ! -e $R/usr/bin/vstream-ctl ] ||
	{ say "purge left files"; exit 1; }
say "apt install: DKMS built and signed vstream $ver for $kver, named nodes, orange through the installed plugin; purge removed it"
