#!/bin/sh
# vstream in the kernel's own tree, as drivers/media/test-drivers/vstream/:
# kmod/ (its Kbuild and Kconfig) copied in, test-drivers' Kconfig and
# Makefile told of it, CONFIG_VIDEO_VSTREAM=m accepted by Kconfig and the
# module built by the kernel's own make, without a warning.  KDIR must be
# a built kernel tree with its source (the debug lane's, O= build); the
# tree is left as it was: both sit under overlays in a mount namespace of
# this test's own.  Usage: kmod-intree.sh KDIR SRCDIR
# Needs root (mount) and a full tree: else SKIP (77), saying so.
set -eu
kdir=$(readlink -f "$1") src=$2
ksrc=$(readlink -f "$kdir/source" 2>/dev/null || true)
[ -n "$ksrc" ] && [ -e "$ksrc/drivers/media/test-drivers/Kconfig" ] || {
	echo "SKIP: $kdir is not a kernel build with its source (headers only)"
	exit 77
}
[ "$(id -u)" = 0 ] || { echo "SKIP: the overlays need root"; exit 77; }
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
cp "$0" "$t/intree.sh"
mkdir -p "$t/s.u" "$t/s.w" "$t/o.u" "$t/o.w"
exec unshare -m sh -eu -c '
	t=$1 kdir=$2 ksrc=$3 src=$4
	mount --make-rprivate /
	mount -t overlay overlay -o "lowerdir=$ksrc,upperdir=$t/s.u,workdir=$t/s.w" "$ksrc"
	mount -t overlay overlay -o "lowerdir=$kdir,upperdir=$t/o.u,workdir=$t/o.w" "$kdir"
	d=$ksrc/drivers/media/test-drivers
	mkdir "$d/vstream"
	cp "$src"/kmod/*.c "$src"/kmod/*.h "$src"/kmod/Kbuild "$src"/kmod/Kconfig "$d/vstream/"
	sed -i "s|^endif #V4L_TEST_DRIVERS|source \"drivers/media/test-drivers/vstream/Kconfig\"\n\n&|" "$d/Kconfig"
	grep -q vstream/Kconfig "$d/Kconfig" || { echo "test-drivers/Kconfig: no place for vstream"; exit 1; }
	echo "obj-\$(CONFIG_VIDEO_VSTREAM) += vstream/" >>"$d/Makefile"
	"$ksrc/scripts/config" --file "$kdir/.config" --module VIDEO_VSTREAM
	make -s -C "$kdir" olddefconfig
	grep -q "^CONFIG_VIDEO_VSTREAM=m" "$kdir/.config" || {
		echo "Kconfig refused CONFIG_VIDEO_VSTREAM=m:"
		grep VSTREAM "$kdir/.config"
		exit 1
	}
	make -C "$kdir" -j"$(nproc)" modules >"$t/make.log" 2>&1 ||
		{ tail -n 40 "$t/make.log"; exit 1; }
	if grep -E "warning:|error:" "$t/make.log"; then
		echo "the in-tree build warns"
		exit 1
	fi
	ko=$kdir/drivers/media/test-drivers/vstream/vstream.ko
	[ -e "$ko" ] || { echo "no $ko"; exit 1; }
	modinfo -F vermagic "$ko"
	modinfo -F depends "$ko"
	echo "kmod-intree: drivers/media/test-drivers/vstream/vstream.ko built by the kernel tree ($(grep -c "CC \[M\]  drivers/media/test-drivers/vstream" "$t/make.log") objects; $(grep -c "^  CC" "$t/make.log") compiled in all)"
' sh "$t" "$kdir" "$ksrc" "$(readlink -f "$src")"
