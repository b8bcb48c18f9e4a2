#!/bin/sh
# Build vstream.ko out of tree in meson's build dir: kbuild writes next to
# its sources, so copy them there (keeping mtimes so make stays incremental).
set -e
kdir=$1 out=$2 werror=$3	# y: -Werror (meson's werror option)
shift 3
mkdir -p "$out"
for f in "$@"; do
	cmp -s "$f" "$out/$(basename "$f")" || cp -p "$f" "$out/"
done
exec make -s -C "$kdir" M="$out" VSTREAM_WERROR="$werror" modules
