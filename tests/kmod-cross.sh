#!/bin/sh
# vstream.ko builds for arm64 and ppc64el, with -Werror and W=1, against
# Debian's headers for KDIR's kernel, and modpost finds every symbol it
# uses exported there: the driver reaches memory through APIs every
# architecture exports (its old page-table code could not link on
# powerpc).  The headers come from Debian's archive through an apt state
# of their own, cached (the system's apt state and architectures are left
# alone); the compilers are gcc-aarch64-linux-gnu and
# gcc-powerpc64le-linux-gnu (tools/install-deps.sh).
# Usage: kmod-cross.sh KDIR SRCDIR.  SKIP (77) without a compiler, or on a
# KDIR that is not Debian's amd64 headers.
set -eu
kdir=$1 src=$2
rel=$(sed -n 's/.*UTS_RELEASE "\(.*\)"/\1/p' "$kdir/include/generated/utsrelease.h")
case $rel in
*-amd64) abi=${rel%-amd64} ;;
*) echo "SKIP: $rel is not a Debian amd64 kernel"; exit 77 ;;
esac
for cc in aarch64-linux-gnu-gcc powerpc64le-linux-gnu-gcc; do
	command -v $cc >/dev/null || { echo "SKIP: no $cc"; exit 77; }
done
suite=$(. /etc/os-release && echo "$VERSION_CODENAME")
cache=${XDG_CACHE_HOME:-$HOME/.cache}/vstream-vm/cross-$abi
apt_opts() {
	echo "-o Dir::Etc::SourceList=$cache/sources.list -o Dir::Etc::SourceParts=/dev/null" \
		"-o Dir::State::Lists=$cache/lists -o Dir::Cache=$cache/apt" \
		"-o Dir::State::status=/dev/null -o APT::Architectures::=arm64" \
		"-o APT::Architectures::=ppc64el -o Debug::NoLocking=1"
}
# fetch DEBARCH FLAVOUR: Debian's headers of this kernel for DEBARCH,
# unpacked under $cache/root; their Makefile includes the common headers
# and their scripts link the kbuild tools, both of which KDIR's packages
# installed on this machine
fetch() {
	h=$cache/root/usr/src/linux-headers-$abi-$2
	[ -e "$h/Makefile" ] && return 0
	mkdir -p "$cache/lists/partial" "$cache/apt/archives/partial" "$cache/dl"
	if [ ! -e "$cache/sources.list" ]; then
		k=/usr/share/keyrings/debian-archive-keyring.gpg
		for s in "debian $suite" "debian $suite-updates" "debian-security $suite-security"; do
			echo "deb [arch=arm64,ppc64el signed-by=$k] http://deb.debian.org/${s% *} ${s#* } main"
		done >"$cache/sources.list"
		# shellcheck disable=SC2046
		apt-get $(apt_opts) update >"$cache/update.log" 2>&1 ||
			{ cat "$cache/update.log"; rm "$cache/sources.list"; return 1; }
	fi
	# shellcheck disable=SC2046
	(cd "$cache/dl" && apt-get $(apt_opts) download "linux-headers-$abi-$2:$1") \
		>"$cache/download.log" 2>&1 || { cat "$cache/download.log"; return 1; }
	dpkg-deb -x "$cache/dl/linux-headers-$abi-$2_"*"_$1.deb" "$cache/root"
	kb=$(readlink "$h/scripts")	# ../../lib/linux-kbuild-X/scripts
	kb=${kb%/scripts}
	mkdir -p "$cache/root/usr/lib"
	ln -sfn "/usr/lib/${kb##*/}" "$cache/root/usr/lib/${kb##*/}"
}
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
bad=0
for target in "arm64 arm64 arm64 aarch64-linux-gnu- aarch64" \
	"ppc64el powerpc64le powerpc powerpc64le-linux-gnu- PowerPC"; do
	# shellcheck disable=SC2086
	set -- $target
	fetch "$1" "$2"
	mkdir "$t/$1"
	cp "$src"/kmod/*.c "$src"/kmod/*.h "$src"/kmod/Kbuild "$src"/kmod/dkms.conf "$t/$1/"
	if ! make -s -C "$cache/root/usr/src/linux-headers-$abi-$2" M="$t/$1" ARCH=$3 \
		CROSS_COMPILE=$4 VSTREAM_WERROR=y W=1 modules >"$t/$1.log" 2>&1 ||
		grep -v -e 'Skipping BTF generation' "$t/$1.log" | grep -q .; then
		echo "vstream.ko for $1 ($abi-$2):"
		cat "$t/$1.log"
		bad=$((bad + 1))
	elif ! file "$t/$1/vstream.ko" | grep -q "$5"; then
		echo "vstream.ko for $1 is not a $5 object: $(file "$t/$1/vstream.ko")"
		bad=$((bad + 1))
	else
		echo "vstream.ko builds and links for $1 against $abi-$2"
	fi
done
exit $bad
