#!/bin/sh
# Install vstream.ko the way the kernel installs an external module: its
# modules_install (compressing and signing as that kernel is configured)
# into <DESTDIR>/lib/modules/<ver>/updates, which depmod searches before
# the kernel's own tree; then depmod, so "modprobe vstream" pulls in
# videobuf2 and v4l2-tpg.  Usage: install.sh KDIR MODULE-BUILD-DIR
# (meson install and "make -C kmod install" both call it; DESTDIR or
# INSTALL_MOD_PATH stage it elsewhere), or install.sh --uninstall KDIR
# ("make -C kmod uninstall": the module goes from updates/, then depmod).
set -e
uninstall=
[ "$1" != --uninstall ] || { uninstall=1; shift; }
kdir=$1 out=$2
root=${DESTDIR:-${INSTALL_MOD_PATH:-}}
# the kernel's make runs in KDIR: a relative root would land in there
case $root in '' | /*) ;; *) root=$PWD/$root ;; esac
[ -n "$uninstall" ] || [ -e "$out/vstream.ko" ] || {
	echo "install.sh: no $out/vstream.ko: build it first" >&2
	exit 1
}
# the release the module is built for: Debian's headers say "6.1.192" in
# kernel.release but install, like the kernel, under "6.1.0-57-amd64"
kver=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"$/\1/p' "$kdir/include/generated/utsrelease.h")
[ -n "$kver" ] || {
	echo "install.sh: no UTS_RELEASE in $kdir/include/generated/utsrelease.h" >&2
	exit 1
}
if [ -n "$uninstall" ]; then
	# compressed as that kernel's modules_install did, or not
	rm -fv "$root/lib/modules/$kver/updates/vstream.ko" \
		"$root/lib/modules/$kver/updates/vstream.ko".*
	[ ! -e "$root/lib/modules/$kver/modules.order" ] ||
		depmod ${root:+-b "$root"} -a "$kver"
	exit 0
fi
# Without the kernel's signing key (a distribution kernel: its key stays
# with the distribution) modules_install would print sign-file's SSL
# errors and install unsigned anyway: say so once and skip signing.
key=$(sed -n 's/^CONFIG_MODULE_SIG_KEY="\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' \
	"$kdir/include/config/auto.conf" 2>/dev/null)
nosign=
if [ -n "$key" ] && [ ! -e "$key" ] && [ ! -e "$kdir/$key" ] &&
	[ "${key#pkcs11:}" = "$key" ]; then
	nosign=CONFIG_MODULE_SIG_ALL=
	echo "not signing vstream.ko: $kdir has no $key (with Secure Boot, sign it with your MOK key, as DKMS does)"
fi
log=$(make -s -C "$kdir" M="$out" INSTALL_MOD_DIR=updates $nosign \
	INSTALL_MOD_PATH="$root" modules_install 2>&1) || {
	echo "$log" >&2
	exit 1
}
# Debian's headers have no System.map: the kernel's own depmod step
# skips with a warning, and the depmod below does its work
echo "$log" | grep -v -e "Skipping depmod" -e "^$" >&2 || true
echo "vstream.ko installed in $root/lib/modules/$kver/updates"
if [ -e "$root/lib/modules/$kver/modules.order" ]; then
	depmod ${root:+-b "$root"} -a "$kver"
else
	# a staged root without that kernel's modules (a package being
	# built): depmod belongs to the target's install
	echo "no $kver modules in '$root': run depmod -a $kver where it is installed"
fi
