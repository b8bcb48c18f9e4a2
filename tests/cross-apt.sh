# Debian's packages for arm64 and ppc64el of this machine's suite, through
# an apt state of their own under $cache (set by cross_abi): the system's
# sources, lists and architectures are left alone; and vstream.ko built
# for those architectures.  Sourced by tests/kmod-cross.sh and
# tests/vm/arm64.sh.

# cross_abi KDIR: abi (Debian's kernel ABI, "6.1.0-57") and the cache of
# KDIR's kernel; false with rel set when KDIR is not Debian's amd64 headers
cross_abi() {
	rel=$(sed -n 's/.*UTS_RELEASE "\(.*\)"/\1/p' "$1/include/generated/utsrelease.h")
	case $rel in *-amd64) ;; *) return 1 ;; esac
	abi=${rel%-amd64}
	cache=${XDG_CACHE_HOME:-$HOME/.cache}/vstream-vm/cross-$abi
}

cross_apt() {
	apt-get -o Dir::Etc::SourceList="$cache/sources.list" \
		-o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists="$cache/lists" \
		-o Dir::Cache="$cache/apt" -o Dir::State::status=/dev/null \
		-o APT::Architectures::=arm64 -o APT::Architectures::=ppc64el \
		-o Debug::NoLocking=1 "$@"
}

# cross_get PKG:ARCH DIR: the package downloaded into $cache/dl and
# unpacked into DIR
cross_get() {
	mkdir -p "$cache/lists/partial" "$cache/apt/archives/partial" "$cache/dl"
	if [ ! -e "$cache/sources.list" ]; then
		k=/usr/share/keyrings/debian-archive-keyring.gpg
		suite=$(. /etc/os-release && echo "$VERSION_CODENAME")
		for s in "debian $suite" "debian $suite-updates" "debian-security $suite-security"; do
			echo "deb [arch=arm64,ppc64el signed-by=$k] http://deb.debian.org/${s% *} ${s#* } main"
		done >"$cache/sources.list"
		cross_apt update >"$cache/update.log" 2>&1 ||
			{ cat "$cache/update.log"; rm "$cache/sources.list"; return 1; }
	fi
	# lists older than the archive name superseded versions: update once
	(cd "$cache/dl" && cross_apt download "$1") >"$cache/download.log" 2>&1 ||
		{ cross_apt update >"$cache/update.log" 2>&1 &&
			(cd "$cache/dl" && cross_apt download "$1") >"$cache/download.log" 2>&1; } ||
		{ cat "$cache/download.log"; return 1; }
	dpkg-deb -x "$cache/dl/${1%:*}_"*"_${1#*:}.deb" "$2"
}

# cross_headers DEBARCH FLAVOUR: Debian's headers of kernel $abi for
# DEBARCH, unpacked under $cache/root; their Makefile includes the common
# headers and their scripts link the kbuild tools, both of which the amd64
# headers' packages installed on this machine
cross_headers() {
	h=$cache/root/usr/src/linux-headers-$abi-$2
	[ -e "$h/Makefile" ] && return 0
	cross_get "linux-headers-$abi-$2:$1" "$cache/root" || return 1
	kb=$(readlink "$h/scripts")	# ../../lib/linux-kbuild-X/scripts
	kb=${kb%/scripts}
	mkdir -p "$cache/root/usr/lib"
	ln -sfn "/usr/lib/${kb##*/}" "$cache/root/usr/lib/${kb##*/}"
}

# cross_kmod DEBARCH FLAVOUR KARCH CROSS_COMPILE SRCDIR DIR [MAKE ARG...]:
# kmod/ of SRCDIR copied into DIR and built there with -Werror against
# Debian's DEBARCH headers; the output goes to DIR.log
cross_kmod() {
	cross_headers "$1" "$2" || return 1
	mkdir -p "$6"
	cp "$5"/kmod/*.c "$5"/kmod/*.h "$5"/kmod/Kbuild "$5"/kmod/dkms.conf "$6/"
	h=$cache/root/usr/src/linux-headers-$abi-$2 a=$3 c=$4 d=$6
	shift 6
	make -s -C "$h" M="$d" ARCH=$a CROSS_COMPILE=$c VSTREAM_WERROR=y "$@" modules \
		>"$d.log" 2>&1
}
