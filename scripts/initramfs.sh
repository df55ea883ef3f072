#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the busybox initramfs for a variant: busybox, the variant's modules
# (modules_install output, so modprobe works), the module's own tests, the
# kernel tree's ftrace selftests and guest/init. Prints the image's path.
# Rebuilt only when one of its inputs is newer than the image.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

variant=${1:?usage: initramfs.sh VARIANT}
b=$ROOT/build/$variant
img=$b/initramfs.cpio.gz
tree=$(variant_tree "$variant")
arch=$(variant_arch "$variant")
bindir=$(guest_bin_dir "$arch")
read -ra cc <<< "$(guest_cc "$arch")"
case "$arch" in
arm64) busybox=$(bash "$ROOT/scripts/busybox-arm64.sh") ;;
*) busybox=/bin/busybox ;;
esac
# The guest programs of tests/vm/ (static, so busybox's root runs them).
mkdir -p "$bindir"
for c in "$ROOT"/tests/vm/*.c; do
	bin=$bindir/$(basename "$c" .c)
	[ "$bin" -nt "$c" ] || "${cc[@]}" -O2 -static -Wall -o "$bin" "$c" || die "cannot build $c"
done
# One build at a time per image: the two lanes of make check can ask for the
# same variant's image at once, and two writers of one temporary file made
# a corrupt image that looked up to date after (2026-12-07).
exec 7>"$b/initramfs.lock"
flock 7
inputs=("$b/modroot/" "$ROOT/guest/" "$ROOT/tools/testing/selftests/" "$ROOT/tests/" "$bindir/"
	"$tree/tools/testing/selftests/ftrace/" "$busybox" "$0")

if [ -f "$img" ] && [ -f "$img.c-key" ] && [ -z "$(find -L "${inputs[@]}" -newer "$img" -print -quit 2>/dev/null)" ]; then
	echo "$img"
	exit 0
fi

stage "initramfs for $variant"
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
mkdir -p "$d"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,root,etc,lib/modules,rkpe,host}
cp "$busybox" "$d/bin/busybox"
# /bin/sh as a hard link, not busybox's symlink: add_remove_uprobe.tc finds
# the shell's text mapping by a path ending in "sh".
ln "$d/bin/busybox" "$d/bin/sh"
cp -a "$b/modroot/lib/modules/." "$d/lib/modules/"
cp "$ROOT/guest/init" "$d/init"
chmod +x "$d/init"
mkdir -p "$d/selftests"
cp -a "$tree/tools/testing/selftests/ftrace" "$d/selftests/ftrace"
# The project's own tests (test.d/rust_kprobe_events/) as this repository
# has them, over the tree's copy from the series.
cp -a "$ROOT/tools/testing/selftests/ftrace/." "$d/selftests/ftrace/"
cp -a "$ROOT/tests/." "$d/rkpe/tests/" 2>/dev/null || true
cp -a "$ROOT/guest/." "$d/rkpe/guest/"
if [ -d "$bindir" ]; then
	mkdir -p "$d/rkpe/bin"
	cp -a "$bindir/." "$d/rkpe/bin/"
fi
echo "root:x:0:0:root:/root:/bin/sh" > "$d/etc/passwd"
echo "root:x:0:" > "$d/etc/group"
tmp=$(mktemp "$img.XXXXXX")
trap 'rm -rf "$d" "$tmp" "$tmp.c-key"' EXIT
(cd "$d" && find . | cpio -o -H newc --quiet | gzip -1) > "$tmp"
# What the image holds apart from the module, by content: scripts/vm.sh
# --c-only keys C's runs on it (file times and the module do not count).
(cd "$d" && find . \( -type f -o -type l \) ! -name rust_kprobe_events.ko -print0 | sort -z |
	xargs -0 sh -c 'for f; do if [ -L "$f" ]; then echo "$f -> $(readlink "$f")"; else sha256sum "$f"; fi; done' sh) |
	sha256sum | cut -c1-64 > "$tmp.c-key"
mv "$tmp.c-key" "$img.c-key"
chmod 644 "$tmp"
mv "$tmp" "$img"
done_stage
echo "$img"
