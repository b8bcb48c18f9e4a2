#!/bin/sh
# vstream.ko builds for arm64 and ppc64el, with -Werror and W=1, against
# Debian's headers for KDIR's kernel, and modpost finds every symbol it
# uses exported there: the driver reaches memory through APIs every
# architecture exports (its old page-table code could not link on
# powerpc).  The headers come from Debian's archive through an apt state
# of their own, cached (tests/cross-apt.sh); the compilers are
# gcc-aarch64-linux-gnu and gcc-powerpc64le-linux-gnu
# (tools/install-deps.sh).
# Usage: kmod-cross.sh KDIR SRCDIR.  SKIP (77) without a compiler, or on a
# KDIR that is not Debian's amd64 headers.
set -eu
kdir=$1 src=$2
. "$src/tests/cross-apt.sh"
cross_abi "$kdir" || { echo "SKIP: $rel is not a Debian amd64 kernel"; exit 77; }
for cc in aarch64-linux-gnu-gcc powerpc64le-linux-gnu-gcc; do
	command -v $cc >/dev/null || { echo "SKIP: no $cc"; exit 77; }
done
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
bad=0
for target in "arm64 arm64 arm64 aarch64-linux-gnu- aarch64" \
	"ppc64el powerpc64le powerpc powerpc64le-linux-gnu- PowerPC"; do
	# shellcheck disable=SC2086
	set -- $target
	if ! cross_kmod "$1" "$2" "$3" "$4" "$src" "$t/$1" W=1 ||
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
