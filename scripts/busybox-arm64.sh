#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The arm64 guests' busybox: Debian 12's busybox-static for arm64, fetched
# with a private apt configuration (the host's dpkg gains no architecture)
# and unpacked into the cache, never installed (it would replace the host's
# /bin/busybox). Prints the binary's path.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

mirror=${RKPE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
dir=$CACHE/busybox-arm64
key=$(sha256sum < "$0" | cut -c1-40)
unpack() { # DIR DEB
	dpkg-deb -x "$2" "$1/root"
	file -L "$1/root/bin/busybox" 2>/dev/null | grep -q 'ARM aarch64' ||
		[ "$(od -An -tx1 -j18 -N2 "$1/root/bin/busybox" | tr -d ' ')" = b700 ] ||
		die "the unpacked busybox is not an arm64 program"
}
cached_debs busybox-arm64 "$dir" "$key" "fetch busybox-static for arm64" unpack \
	"deb [arch=arm64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror bookworm main" \
	-o APT::Architecture=arm64 -o APT::Architectures::=arm64 -- busybox-static
echo "$dir/root/bin/busybox"
