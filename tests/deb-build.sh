#!/bin/sh
# The Debian packages as README builds them (dpkg-buildpackage in the
# source tree, on a copy so the tree stays clean): the version is the
# project's, each package holds exactly its files, lintian finds no error
# or warning.  Then CMD (the guest that installs them, tests/vm/deb.sh).
# Usage: deb-build.sh SRCDIR OUTDIR VERSION [CMD...]
# Needs dpkg-buildpackage, debhelper, dh_dkms and lintian: else SKIP (77).
set -eu
src=$1 out=$2 ver=$3
shift 3
say() { echo "deb: $*"; }
# the version, where the packages say it (no tools needed)
v=$(sed -n '1s/^vstream (\([^)]*\)).*/\1/p' "$src/debian/changelog")
[ "$v" = "$ver" ] || { say "debian/changelog says $v, meson $ver"; exit 1; }
grep -q '^dpkg-buildpackage -us -uc -b' "$src/README.md" ||
	{ say "README does not build the packages as this test does"; exit 1; }
grep -q "^sudo apt install \.\./vstream-dkms_${ver}_all\.deb" "$src/README.md" ||
	{ say "README's apt line does not name version $ver"; exit 1; }
for t in dpkg-buildpackage dh dh_dkms dkms lintian; do
	command -v $t >/dev/null || { echo "SKIP: $t is not installed"; exit 77; }
done

rm -rf "$out"
mkdir -p "$out/vstream-$ver"
# not the build dirs, nor OUTDIR if it is in the tree
case $out in "$src"/*) skip=./${out#"$src"/} ;; *) skip=./.vm ;; esac
tar -C "$src" --exclude-vcs --exclude='./build*' --exclude=./.vm --exclude="$skip" -cf - . |
	tar -C "$out/vstream-$ver" -xf -
# nocheck: the unit suite, which the package's build runs, ran already
(cd "$out/vstream-$ver" && DEB_BUILD_OPTIONS=nocheck dpkg-buildpackage -us -uc -b) \
	>"$out/build.log" 2>&1 || { tail -n 40 "$out/build.log"; exit 1; }
arch=$(dpkg --print-architecture)
multi=$(dpkg-architecture -qDEB_HOST_MULTIARCH)

# has DEB FILE...: DEB's files (not its docs) are exactly FILE...
has() {
	deb=$out/$1
	shift
	[ -e "$deb" ] || { say "no $deb"; return 1; }
	got=$(dpkg-deb -c "$deb" | awk '$1 !~ /^d/ { sub(/^\.\//, "", $6); print $6 }' |
		grep -v '^usr/share/doc/' | sort)
	want=$(printf '%s\n' "$@" | sort)
	[ "$got" = "$want" ] && return 0
	say "$(basename "$deb") holds:"
	echo "$got" | sed 's/^/    /'
	say "where it should hold:"
	echo "$want" | sed 's/^/    /'
	return 1
}
d=usr/src/vstream-$ver
has "vstream-dkms_${ver}_all.deb" $d/dkms.conf $d/Kbuild $d/Makefile \
	$(cd "$src/kmod" && ls *.c *.h | sed "s|^|$d/|")
has "gstreamer1.0-vstream_${ver}_$arch.deb" \
	"usr/lib/$multi/gstreamer-1.0/libgstvstream.so"
# udev's and systemd's directories are this release's (their .pc files)
udevdir=$(pkg-config --variable=udevdir udev)
unitdir=$(pkg-config --variable=systemdsystemunitdir systemd)
has "vstream-utils_${ver}_$arch.deb" usr/bin/vstream-ctl \
	"${udevdir#/}/rules.d/60-vstream.rules" \
	"${unitdir#/}/vstream-pipes.service" \
	usr/share/man/man1/vstream-ctl.1.gz
# the unit's maintainer scripts (daemon-reload; purge forgets an enabling)
dpkg-deb -I "$out/vstream-utils_${ver}_$arch.deb" postrm 2>/dev/null |
	grep -q deb-systemd-helper ||
	{ say "vstream-utils has no systemd maintainer scripts"; exit 1; }
dpkg-deb -f "$out/vstream-dkms_${ver}_all.deb" Depends | grep -q dkms ||
	{ say "vstream-dkms does not depend on dkms"; exit 1; }
# the plugin needs no dkms: only the module's package runs it
if dpkg-deb -f "$out/gstreamer1.0-vstream_${ver}_$arch.deb" Depends | grep -q dkms; then
	say "gstreamer1.0-vstream depends on dkms"
	exit 1
fi
lintian --fail-on error,warning "$out"/vstream_${ver}_$arch.changes ||
	{ say "lintian: errors or warnings above"; exit 1; }
say "built $(cd "$out" && ls vstream-dkms_*.deb gstreamer1.0-vstream_*.deb vstream-utils_*.deb | grep -v dbgsym | tr '\n' ' ')"
[ $# -eq 0 ] || exec "$@"
