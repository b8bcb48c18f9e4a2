#!/bin/sh
# The module must build with W=1 and pass sparse (C=2) without a single
# warning.  Usage: kmod-check.sh KDIR SRCDIR
set -e
kdir=$1 src=$2
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
cp "$src"/*.c "$src"/*.h "$src"/Kbuild "$t"/
make -s -C "$kdir" M="$t" W=1 C=2 modules >"$t/log" 2>&1 || { cat "$t/log"; exit 1; }
if grep -v -e 'Skipping BTF generation' "$t/log" | grep -q .; then
	cat "$t/log"
	exit 1
fi
echo "vstream.ko: W=1 and sparse clean"
