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
mkdir -p "$CACHE"
exec 8>"$CACHE/busybox-arm64.lock"
flock 8 # one fetch at a time, whichever lane or clone asks
if [ "$(cat "$dir/.done" 2>/dev/null)" != "$key" ]; then
	stage "fetch busybox-static for arm64"
	rm -rf "$dir" && mkdir -p "$dir/debs"
	arm64=(-o APT::Architecture=arm64 -o APT::Architectures::=arm64)
	private_apt_init "$dir" "deb [arch=arm64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror bookworm main" "${arm64[@]}"
	(cd "$dir/debs" && private_apt "$dir" "${arm64[@]}" download -qq busybox-static)
	dpkg-deb -x "$dir"/debs/busybox-static_*_arm64.deb "$dir/root"
	file -L "$dir/root/bin/busybox" 2>/dev/null | grep -q 'ARM aarch64' ||
		[ "$(od -An -tx1 -j18 -N2 "$dir/root/bin/busybox" | tr -d ' ')" = b700 ] ||
		die "the unpacked busybox is not an arm64 program"
	(cd "$dir/debs" && ls) > "$dir/version"
	rm -rf "$dir/apt" "$dir/debs"
	echo "$key" > "$dir/.done"
	done_stage
fi
echo "$dir/root/bin/busybox"
