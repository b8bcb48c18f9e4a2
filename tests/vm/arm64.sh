#!/bin/sh
# The arm64 guest: vstream.ko built for arm64 against Debian's headers of
# KDIR's kernel, loaded in that kernel's arm64 image under
# qemu-system-aarch64 (TCG, "virt" machine), and the memory groups
# (groups.sh: loopback in every memory type, field and format, the hostile
# and isolation groups) run there by static arm64 builds of vs-loopback,
# vs-hostile and vs-isolate, then the guest's dmesg checked.  The kernel
# image, its modules and busybox come from Debian's archive through the
# apt state of tests/cross-apt.sh; the guest is a busybox initramfs
# (arm64-init.sh), since the host's root is amd64.  Prints TAP.
# Usage: arm64.sh KDIR SRCDIR BUILDDIR
set -eu
kdir=$1 S=$(readlink -f "$2") B=$(readlink -f "$3")
PATH=$PATH:/usr/sbin:/sbin	# modinfo, for a user without them on PATH
skip() { echo "1..0 # SKIP $*"; exit 0; }
. "$S/tests/cross-apt.sh"
cross_abi "$kdir" || skip "$rel is not a Debian amd64 kernel"
for t in aarch64-linux-gnu-gcc qemu-system-aarch64 modinfo cpio; do
	command -v $t >/dev/null || skip "no $t"
done
[ -e /usr/aarch64-linux-gnu/lib/libc.a ] || skip "no libc6-dev-arm64-cross"
img=$cache/arm64
mdir=$img/lib/modules/$abi-arm64
{
	[ -e "$img/boot/vmlinuz-$abi-arm64" ] || cross_get "linux-image-$abi-arm64:arm64" "$img"
	[ -e "$img/bin/busybox" ] || cross_get busybox-static:arm64 "$img"
} >&2

W=$B/arm64
R=$W/root
rm -rf "$W"
mkdir -p "$R/b/kmod" "$R/b/tests/vm" "$R/s/tests/vm" "$R/bin" "$R/lib"
cross_kmod arm64 arm64 arm64 aarch64-linux-gnu- "$S" "$W/kmod" >&2 ||
	{ sed 's/^/# /' "$W/kmod.log"; echo "Bail out! vstream.ko did not build for arm64"; exit 1; }
cp "$W/kmod/vstream.ko" "$R/b/kmod/"
for p in vs-loopback vs-hostile vs-isolate; do
	aarch64-linux-gnu-gcc -static -O2 -Wall -pthread -o "$R/b/tests/vm/$p" \
		"$S/tests/vm/$p.c"
done
cp "$S/tests/vm/lib.sh" "$S/tests/vm/groups.sh" "$R/s/tests/vm/"
cp "$img/bin/busybox" "$R/bin/"
cp "$S/tests/vm/arm64-init.sh" "$R/init"
chmod +x "$R/init"

# the modules vstream.ko needs, dependencies first, as insmod loads them
order=
need() {
	local f d	# recursion below: dash and busybox sh have local
	case " $order " in *" $1 "*) return 0 ;; esac
	f=$(find "$mdir/kernel" -name "$1.ko" -o -name "$1.ko.xz" | head -n1)
	[ -n "$f" ] || { echo "no module $1 in $mdir" >&2; return 1; }
	for d in $(modinfo -F depends "$f" | tr ',' ' '); do need "$d"; done
	case $f in
	*.xz) xz -dc "$f" >"$R/lib/$1.ko" ;;
	*) cp "$f" "$R/lib/" ;;
	esac
	order="$order $1"
}
for d in $(modinfo -F depends "$R/b/kmod/vstream.ko" | tr ',' ' '); do need "$d"; done
echo $order >"$R/modules"
(cd "$R" && find . | cpio -o -H newc --quiet | gzip -1) >"$W/initrd.gz"

# the guest prints TAP on its console; its last line says how it went.
# pauth-impdef: QEMU's own pointer-authentication hash, far cheaper
# under TCG than the architected one, and no less a test of the driver
timeout 3000 qemu-system-aarch64 -M virt -cpu max,pauth-impdef=on -accel tcg,thread=multi \
	-smp 2 -m 2048 -nodefaults -nographic -no-reboot -serial stdio \
	-kernel "$img/boot/vmlinuz-$abi-arm64" -initrd "$W/initrd.gz" \
	-append "console=ttyAMA0 panic=-1 loglevel=1" </dev/null >"$W/console.log" 2>&1 || true
# (loglevel 1: no kernel message splits a TAP line; the guest's own test
# reads dmesg for warnings)
tr -d '\r' <"$W/console.log" | grep -E '^(ok |not ok |# |1\.\.)' || true
tr -d '\r' <"$W/console.log" | grep -q '^# arm64 guest: [0-9]* passed, 0 failed$' || {
	echo "# the guest did not finish with 0 failed; its console's tail:"
	tr -d '\r' <"$W/console.log" | tail -n 40 | sed 's/^/#   /'
	exit 1
}
