#!/bin/sh
# DKMS builds vstream as it would on a user's machine after a kernel
# upgrade: dkms add and build of kmod/ against KDIR, in private trees (the
# system's DKMS state is left alone), and its make line (dkms.conf) gives
# the compiler no -Werror.  The version is written once for the module
# (dkms.conf, which Kbuild reads) and once for meson: they and the
# README's DKMS lines must agree.  Usage: dkms-check.sh KDIR SRCDIR VERSION
# Needs dkms and root (dkms refuses otherwise): else SKIP (77), saying so.
set -e
kdir=$1 src=$2 ver=$3
# the version, wherever it is written (no root or dkms needed)
grep -q "^PACKAGE_VERSION=\"$ver\"$" "$src/kmod/dkms.conf" ||
	{ echo "kmod/dkms.conf's PACKAGE_VERSION is not the project's $ver"; exit 1; }
# the README's DKMS lines name the same version
grep -q "^sudo cp -r kmod /usr/src/vstream-$ver$" "$src/README.md" &&
	grep -q "^sudo dkms add vstream/$ver && sudo dkms install vstream/$ver$" \
		"$src/README.md" ||
	{ echo "README's DKMS lines do not name version $ver"; exit 1; }
command -v dkms >/dev/null || { echo "SKIP: dkms is not installed"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: dkms needs root"; exit 77; }
kver=$(sed -n 's/.*UTS_RELEASE "\(.*\)"/\1/p' "$kdir/include/generated/utsrelease.h")
[ -n "$kver" ] || { echo "no UTS_RELEASE in $kdir"; exit 1; }
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/src/vstream-$ver" "$t/tree"
cp "$src"/kmod/*.c "$src"/kmod/*.h "$src"/kmod/Kbuild "$src"/kmod/Makefile \
	"$src"/kmod/dkms.conf "$t/src/vstream-$ver/"
trees="--sourcetree $t/src --dkmstree $t/tree"
# dkms signs every build, making a MOK key pair under /var/lib/dkms if
# there is none: keep that in the private tree too
export mok_signing_key=$t/mok.key mok_certificate=$t/mok.pub
dkms add -m vstream -v "$ver" $trees
dkms build -m vstream -v "$ver" -k "$kver" --kernelsourcedir "$kdir" $trees ||
	{ cat "$t/tree/vstream/$ver/build/make.log"; exit 1; }
ko=$t/tree/vstream/$ver/$kver/$(uname -m)/module/vstream.ko
[ -e "$ko" ] || ko=$(ls "$ko".* 2>/dev/null | head -n1)
[ -n "$ko" ] && [ -e "$ko" ] || { echo "dkms build left no vstream.ko"; exit 1; }
[ "$(modinfo -F vermagic "$ko" | cut -d' ' -f1)" = "$kver" ] ||
	{ echo "$ko is not built for $kver"; exit 1; }
[ "$(modinfo -F version "$ko")" = "$ver" ] ||
	{ echo "$ko says version $(modinfo -F version "$ko"), not $ver"; exit 1; }
# signed with DKMS's MOK key, the one Secure Boot users enrol (README)
signer=$(modinfo -F signer "$ko")
[ -n "$signer" ] || { echo "$ko is not signed: Secure Boot would refuse it"; exit 1; }
echo "dkms: signed by \"$signer\" (the key in $mok_certificate)"
dkms status -m vstream $trees

# dkms.conf's own make line, run where its objects stay: no plain -Werror
# (the kernel's own -Werror=<warning> flags stay)
kernel_source_dir=$kdir dkms_tree=$t/flags PACKAGE_NAME=vstream PACKAGE_VERSION=$ver
b=$dkms_tree/$PACKAGE_NAME/$PACKAGE_VERSION/build
mkdir -p "$b"
cp "$t/src/vstream-$ver"/* "$b/"
eval "$(sed -n 's/^MAKE\[0\]=/mk=/p' "$src/kmod/dkms.conf")"
# shellcheck disable=SC2154
$mk >/dev/null
grep -q -- -Wall "$b/.vstream-core.o.cmd" || { echo "no compile line found"; exit 1; }
if grep -qE -- "-Werror( |$)" "$b/.vstream-core.o.cmd"; then
	echo "DKMS builds with -Werror: a user's newer compiler would break their install"
	exit 1
fi
echo "dkms: vstream $ver builds for $kver, without -Werror"
