#!/bin/sh
# Everything vstream needs to build, test and demo, from Debian's packages.
set -e
[ "$(id -u)" = 0 ] || { echo "install-deps: run as root (apt-get)" >&2; exit 1; }
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends \
	build-essential meson ninja-build pkg-config kmod cpio sparse debootstrap dkms \
	linux-headers-amd64 qemu-system-x86 busybox-static v4l-utils \
	libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev libgudev-1.0-dev \
	gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good \
	gstreamer1.0-plugins-base-apps \
	ca-certificates
# The module built for other architectures (tests/kmod-cross.sh), and run
# in an arm64 guest with static test programs (tests/vm/arm64.sh)
apt-get install -y --no-install-recommends \
	gcc-aarch64-linux-gnu gcc-powerpc64le-linux-gnu file \
	libc6-dev-arm64-cross qemu-system-arm
# The Debian packages, built and checked (tests/deb-build.sh)
apt-get install -y --no-install-recommends debhelper dh-dkms lintian systemd udev
# The applications the real-clients vm group points at a virtual camera
# (tests/vm/clients.sh): run in the guest from this root.
apt-get install -y --no-install-recommends \
	ffmpeg chromium firefox-esr python3-opencv \
	pipewire pipewire-bin wireplumber gstreamer1.0-pipewire udev dbus
# Cameras across machines (pipelines/srt-*.sh, rtp-*.sh CODEC=h264; the
# network group, tests/vm/net.sh): SRT, x264 and libav's H.264 decoder,
# gst-rtsp-server for Python (pipelines/rtsp-serve.py), and iproute2 for
# its network namespaces and netem
apt-get install -y --no-install-recommends \
	gstreamer1.0-plugins-bad gstreamer1.0-plugins-ugly gstreamer1.0-libav \
	gir1.2-gst-rtsp-server-1.0 python3-gi iproute2
# The debug-kernel lane (tests/vm/debug-kernel): Debian 12's kernel source
# and what building it takes.
apt-get install -y --no-install-recommends \
	linux-source-6.1 flex bison bc libelf-dev libssl-dev xz-utils
