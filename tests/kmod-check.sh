#!/bin/sh
# The module must build with W=1 and pass sparse (C=2) without a single
# warning, with kernel-doc on every vstream_*() function that is not
# static (defined with its return type on the same line, kernel style).
# Usage: kmod-check.sh KDIR SRCDIR
# Where sparse cannot check this kernel (no sparse; Debian's headers for
# 7.x ship no scripts/checker-valid.sh, and sparse 0.6.4 cannot parse
# their __typeof_unqual__), W=1 is still checked and the test says SKIP
# (exit 77) naming why, never a silent pass.
set -e
kdir=$1 src=$2
# kernel-doc on every function other files call (W=1 below checks its
# form): a definition that is not static must follow a /** comment
nodoc=$(awk 'FNR == 1 { doc = 0; end = 0 }
	/^\/\*\*$/ { doc = 1; next }
	/^\/\*/ { doc = 0 }
	/^ \*\/$/ { end = FNR; next }
	/^[a-z].*[ *]vstream_[a-z0-9_]*\(/ && !/^static/ && !/;$/ &&
		!(end == FNR - 1 && doc) { print FILENAME ":" FNR ": " $0 }' "$src"/*.c)
if [ -n "$nodoc" ]; then
	echo "no kernel-doc comment above:"
	echo "$nodoc"
	exit 1
fi
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
cp "$src"/*.c "$src"/*.h "$src"/Kbuild "$src"/dkms.conf "$t"/
skip=""
if ! command -v sparse >/dev/null; then
	skip="no sparse installed"
elif grep -qs checker-valid "$kdir/Makefile" $(sed -n 's/^include //p' "$kdir/Makefile") &&
	[ ! -e "$kdir/scripts/checker-valid.sh" ]; then
	skip="$kdir calls scripts/checker-valid.sh, which Debian does not ship"
fi
c=2
[ -z "$skip" ] || c=0
make -s -C "$kdir" M="$t" W=1 C=$c modules >"$t/log" 2>&1 || { cat "$t/log"; exit 1; }
if grep -v -e 'Skipping BTF generation' "$t/log" | grep -q .; then
	cat "$t/log"
	exit 1
fi
if [ -n "$skip" ]; then
	echo "vstream.ko: W=1 clean; sparse SKIPPED: $skip"
	exit 77
fi
echo "vstream.ko: W=1 and sparse clean"
