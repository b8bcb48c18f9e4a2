#!/bin/sh
# vstream-ctl's argument handling and its use of configfs and sysfs,
# against a fake sysfs tree (VSTREAM_SYSFS): usage errors exit 2 with a
# message naming the problem and touch nothing; add writes every
# attribute it was given; list reads nodes and stats of vstream's nodes.
# The real operations are tested in the guest (tests/vm/runtime.sh).
# Its man page names every command and option the usage names, and
# renders without a warning; vstream-pipes.service (calling VSTREAM-CTL)
# passes systemd-analyze verify without a word.
# Usage: test-vstream-ctl.sh VSTREAM-CTL MANPAGE UNIT
set -u
ctl=$1 manpage=$2 unit=$3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export VSTREAM_SYSFS=$T/sys
fails=0

# expect STATUS PATTERN CMD...: exit status and a line of output matching
# PATTERN (an empty PATTERN checks the status only)
expect() {
	want=$1 pat=$2
	shift 2
	"$ctl" "$@" >"$T/out" 2>&1
	got=$?
	if [ $got -ne "$want" ] || { [ -n "$pat" ] && ! grep -q -e "$pat" "$T/out"; }; then
		echo "FAIL: vstream-ctl $*: exit $got (want $want), output:"
		sed 's/^/    /' "$T/out"
		echo "    (wanted a line matching: $pat)"
		fails=$((fails + 1))
	else
		echo "ok: vstream-ctl $* -> $got"
	fi
}

mkdir -p "$T/sys"
expect 2 usage
expect 2 "unknown command" frobnicate
expect 0 "vstream-ctl add NAME" --help
expect 2 usage add
expect 2 usage add a b
expect 2 "a pipe name is" add "a/b"
expect 2 "a pipe name is" add -- "-cam"
expect 2 "a pipe name is" add "_cam"
expect 2 "a pipe name is" add "cam.1"
expect 2 "a pipe name is" add "abcdefghijklmnopqrstu"
expect 2 "belong to the module" add vstream-3
expect 2 "readers: a number from 1 to 4" add cam --readers 0
expect 2 "readers: a number from 1 to 4" add cam --readers 5
expect 2 "readers: a number from 1 to 4" add cam --readers 2x
expect 2 "max: WIDTHxHEIGHT" add cam --max 640
expect 2 "max: WIDTHxHEIGHT" add cam --max 8x8
expect 2 "max: WIDTHxHEIGHT" add cam --max 640x-480
expect 2 "at most 31" add cam --label "0123456789012345678901234567890123"
expect 2 usage add cam --bogus
# nothing was made by any of these
[ -z "$(ls -A "$T/sys")" ] || { echo "FAIL: a usage error touched sysfs"; fails=$((fails + 1)); }

expect 1 "module is not loaded" add cam
expect 1 "module is not loaded" list
mkdir -p "$T/sys/module/vstream"
expect 1 "is configfs mounted" add cam

cfg=$T/sys/kernel/config/vstream
mkdir -p "$cfg"
expect 0 "" add cam --readers 2 --max 1280x720 --format YUYV:640x480@25 --label "Meeting cam" \
	--mplane
for kv in readers=2 max_width=1280 max_height=720 format=YUYV:640x480@25 \
	"label=Meeting cam" mplane=1 enabled=1; do
	k=${kv%%=*} v=${kv#*=}
	[ "$(cat "$cfg/cam/$k" 2>/dev/null)" = "$v" ] ||
		{ echo "FAIL: $k is '$(cat "$cfg/cam/$k" 2>/dev/null)', want '$v'"; fails=$((fails + 1)); }
done
expect 1 "pipe \"cam\" exists" add cam

# load: the whole file is checked before anything is made
cat >"$T/bad.conf" <<'EOF'
# pipes at boot
desk --label "Desk cam"
tv --readers 9
EOF
expect 2 "bad.conf:3: not a pipe" load "$T/bad.conf"
printf 'desk --label "Desk cam\n' >"$T/bad.conf"
expect 2 "bad.conf:1: an unclosed quote" load "$T/bad.conf"
[ ! -e "$cfg/desk" ] || { echo "FAIL: a bad file made a pipe"; fails=$((fails + 1)); }
expect 1 "No such file" load "$T/none.conf"
printf 'desk\ndesk --readers 2\n' >"$T/bad.conf"
expect 2 "bad.conf:2: pipe \"desk\" listed twice (line 1)" load "$T/bad.conf"
# 64 pipes (the module's most) with a comment after them parse; a 65th
# is refused, naming its line
for i in $(seq 1 64); do echo "p$i"; done >"$T/many.conf"
echo "# the end" >>"$T/many.conf"
cp "$T/many.conf" "$T/more.conf"
echo "p65" >>"$T/more.conf"
expect 2 "more.conf:66: over 64 pipes" load "$T/more.conf"
[ ! -e "$cfg/p1" ] || { echo "FAIL: a bad file made a pipe"; fails=$((fails + 1)); }
expect 0 "" load "$T/many.conf"
[ -d "$cfg/p64" ] && [ "$(cat "$cfg/p64/enabled")" = 1 ] ||
	{ echo "FAIL: load made no p64"; fails=$((fails + 1)); }
rm -r "$cfg"/p[0-9]*
cat >"$T/pipes.conf" <<'EOF'
# pipes at boot: add's words, a line each

desk --label "Desk cam"   # a comment after a pipe
cam --readers 4
	tv --readers 3 --max 1920x1080 --format NV12:1280x720@50 --mplane
EOF
expect 0 "cam: exists, left as it is" load "$T/pipes.conf"
for kv in "desk/label=Desk cam" desk/enabled=1 tv/readers=3 tv/max_width=1920 \
	tv/max_height=1080 tv/format=NV12:1280x720@50 tv/mplane=1 tv/enabled=1 cam/readers=2; do
	k=${kv%%=*} v=${kv#*=}
	[ "$(cat "$cfg/$k" 2>/dev/null)" = "$v" ] ||
		{ echo "FAIL: load: $k is '$(cat "$cfg/$k" 2>/dev/null)', want '$v'"; fails=$((fails + 1)); }
done
# loaded again (a restarted unit): nothing changes
expect 0 "desk: exists, left as it is" load "$T/pipes.conf"
rm -r "$cfg/desk" "$cfg/tv"
expect 1 "no pipe \"nope\"" del nope
expect 1 "goes with the module" del vstream-0

# list: a module pipe and the runtime one, as sysfs shows them
drv=$T/sys/bus/platform/drivers/vstream
mkdir -p "$drv" "$T/sys/devices/platform/vstream"
ln -s "$drv" "$T/sys/devices/platform/vstream/driver"
n=0
for name in vstream-0-output vstream-0-capture cam-output cam-capture-0 cam-capture-1 \
	tv-output-output tv-output-capture; do
	d=$T/sys/class/video4linux/video$n
	mkdir -p "$d"
	ln -s "$T/sys/devices/platform/vstream" "$d/device"
	echo "$name" >"$d/name"
	s=0
	case $name in cam-output|cam-capture-1) s=1 ;; esac
	printf 'frames %d\ndrops 1\nzerocopy 2\ncopies 3\ncow 0\nstreaming %d\ninterval 1/25\n' \
		$((n * 10)) $s >"$d/stats"
	n=$((n + 1))
done
# a node of another driver is not listed, whatever its name
mkdir -p "$T/sys/class/video4linux/video9" "$T/sys/bus/platform/drivers/vivid" \
	"$T/sys/devices/platform/vivid.0"
ln -s "$T/sys/bus/platform/drivers/vivid" "$T/sys/devices/platform/vivid.0/driver"
ln -s "$T/sys/devices/platform/vivid.0" "$T/sys/class/video4linux/video9/device"
echo "vstream-9-output" >"$T/sys/class/video4linux/video9/name"
expect 0 "^cam (runtime, label \"Meeting cam\"): producer streaming at 25.00 fps" list
expect 0 "^vstream-0 (module parameters): no producer" list
expect 0 "cam-capture-1 *\/dev\/video4 *streaming frames 40 drops 1 zerocopy 2 copies 3" list
if grep -q video9 "$T/out"; then echo "FAIL: listed another driver's node"; fails=$((fails + 1)); fi
# a pipe whose name ends in -output keeps its output node
expect 0 "tv-output-output *\/dev\/video5" list
if grep -q "^tv-output.*no output node" "$T/out"; then echo "FAIL: tv-output lost its output"; fails=$((fails + 1)); fi
echo 0 >"$cfg/cam/enabled"
mkdir "$cfg/spare" && echo 0 >"$cfg/spare/enabled"
expect 0 "^spare (runtime): disabled" list

# the man page: each command and long option of the usage, as a man
# page writes it (\- for -), and clean under groff's warnings
for w in $("$ctl" --help | grep -oE -- '--[a-z]+' | sort -u) --help; do
	pat=$(printf '%s' "$w" | sed 's/-/\\\\-/g')
	grep -q -- "$pat" "$manpage" ||
		{ echo "FAIL: the man page does not document $w"; fails=$((fails + 1)); }
done
for c in $("$ctl" --help | sed -n 's/^ *\(usage: \)\{0,1\}vstream-ctl \([a-z]*\).*/\2/p'); do
	grep -q "^\.B vstream-ctl $c\$" "$manpage" && grep -q "^\.BI\{0,1\} \"\{0,1\}$c\b" "$manpage" ||
		{ echo "FAIL: the man page's synopsis or commands lack $c"; fails=$((fails + 1)); }
done
if command -v groff >/dev/null; then
	warn=$(groff -man -ww -z "$manpage" 2>&1)
	[ -z "$warn" ] || { echo "FAIL: groff: $warn"; fails=$((fails + 1)); }
fi
if command -v systemd-analyze >/dev/null; then
	warn=$(systemd-analyze verify --man=no "$unit" 2>&1)
	[ -z "$warn" ] || { echo "FAIL: systemd-analyze: $warn"; fails=$((fails + 1)); }
	grep -q "^ExecStart=.*vstream-ctl load /etc/vstream/pipes.conf$" "$unit" ||
		{ echo "FAIL: $unit does not load /etc/vstream/pipes.conf"; fails=$((fails + 1)); }
fi
# the README's "systemctl enable", on a root of its own: the unit is
# wanted by multi-user.target
if command -v systemctl >/dev/null; then
	mkdir -p "$T/root/usr/lib/systemd/system"
	cp "$unit" "$T/root/usr/lib/systemd/system/vstream-pipes.service"
	systemctl --root="$T/root" enable vstream-pipes.service >/dev/null 2>&1
	[ -L "$T/root/etc/systemd/system/multi-user.target.wants/vstream-pipes.service" ] ||
		{ echo "FAIL: systemctl enable vstream-pipes.service made no link"; fails=$((fails + 1)); }
fi

[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "vstream-ctl: all argument and sysfs checks passed"
