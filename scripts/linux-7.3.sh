#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Debian's pristine linux-source-7.3 (trixie-backports), fetched with
# `apt-get download` through a private apt configuration (nothing added to
# the host's sources, nothing installed) and unpacked once into the cache,
# as scripts/qemu-fixed.sh fetches QEMU 10. Prints the tree's path
# ($CACHE/pristine-7.3-VERSION).
# The version is kept here only. When the archive's backport has moved past
# it, the newer 7.3.y is taken (never another major version), and the
# version fetched is in the tree's `.version` and the stage's output; once
# trixie-backports no longer has linux-source-7.3, the fetch fails.
# RKPE_DEBIAN_MIRROR replaces http://deb.debian.org/debian.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

VERSION=7.3.4-1~bpo13+1
PKG=linux-source-7.3
mirror=${RKPE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
mkdir -p "$CACHE"
exec 7>"$CACHE/linux-7.3.lock"
flock 7 # one fetch at a time, whichever lane or clone asks

# The tree already unpacked for this version, or for the newer 7.3.y taken
# when this one had left the archive.
for d in "$CACHE/pristine-7.3-${VERSION//[:~]/_}" "$CACHE"/pristine-7.3-*; do
	if [ -f "$d/.done" ] && [ "$(cat "$d/.wanted" 2>/dev/null)" = "$VERSION" ]; then
		echo "$d"
		exit 0
	fi
done

# The unpacked tree is named after the version fetched.
unpack() { # FETCH_DIR DEB
	local fetch=$1 deb=$2 got tarball
	got=$(dpkg-deb -f "$deb" Version)
	case "$got" in 7.3.*) ;; *) die "$PKG from trixie-backports is $got, not a 7.3.y" ;; esac
	dir=$CACHE/pristine-7.3-${got//[:~]/_}
	rm -rf "$dir" && mkdir -p "$dir"
	dpkg-deb --fsys-tarfile "$deb" | tar -C "$fetch" -x ./usr/src
	tarball=$(ls "$fetch"/usr/src/linux-source-7.3.tar.*)
	tar -C "$dir" --strip-components=1 -xf "$tarball"
	[ -f "$dir/Makefile" ] && grep -q '^PATCHLEVEL = 3$' "$dir/Makefile" || die "$tarball is not a 7.3 tree"
	rm -rf "$fetch/usr"
	echo "$PKG $got" > "$dir/.version"
	echo "$VERSION" > "$dir/.wanted"
	touch "$dir/.done"
}
fetch=$CACHE/linux-7.3.fetch
rm -rf "$fetch"
cached_debs linux-7.3-fetch "$fetch" "$VERSION" "fetch and unpack $PKG $VERSION from trixie-backports" unpack \
	"deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror trixie-backports main" \
	-- "$PKG=$VERSION"
rm -rf "$fetch"
sed 's/^/linux-7.3: /' "$dir/.version" >&2
echo "$dir"
