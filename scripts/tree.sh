#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Derive the kernel build tree from Debian's pristine linux-source-6.12 plus
# this repository: patches/*.patch applied in order, Kconfig and src/ copied to
# kernel/trace/rust_kprobe_events/, rust/ overlaid onto the tree's rust/.
#
# The tree lives in the cache ($CACHE/tree). It is rebuilt in a staging copy
# (hard links to the pristine files, so it costs little) and synced with
# rsync --checksum, so only files whose content changed get a new mtime and
# make rebuilds only what depends on them. Prints the tree's path.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

pkgver=$(dpkg-query -W -f='${Version}' linux-source-6.12)
pristine=$CACHE/pristine-$pkgver
tree=$CACHE/tree

if [ ! -e "$pristine/.done" ]; then
	stage "unpack linux-source-6.12 $pkgver"
	rm -rf "$pristine" && mkdir -p "$pristine"
	tar -C "$pristine" --strip-components=1 -xf /usr/src/linux-source-6.12.tar.xz
	touch "$pristine/.done"
	done_stage
fi

# Everything the tree is derived from, in one hash.
key=$( {
	echo "$pkgver"
	cd "$ROOT"
	# rust/ and patches/ may be absent in a clone (git keeps no empty dirs).
	dirs=()
	for d in Kconfig src rust patches; do [ -e "$d" ] && dirs+=("$d"); done
	find "${dirs[@]}" -type f -print0 | sort -z | xargs -0 sha256sum
} | sha256sum | cut -d' ' -f1)

if [ "$(cat "$tree/.key" 2>/dev/null)" != "$key" ]; then
	stage "derive the kernel tree"
	staging=$CACHE/tree.staging
	rm -rf "$staging"
	cp -al "$pristine" "$staging"
	rm -f "$staging/.done"
	for p in "$ROOT"/patches/*.patch; do
		[ -e "$p" ] || continue
		# GNU patch writes a new file and renames it over the old one, so the
		# hard link to the pristine file is broken, never written through.
		patch -s -p1 -d "$staging" --no-backup-if-mismatch < "$p" \
			|| die "patch $(basename "$p") does not apply"
	done
	dst=$staging/kernel/trace/rust_kprobe_events
	mkdir -p "$dst"
	cp --remove-destination "$ROOT/Kconfig" "$dst/Kconfig"
	cp -r --remove-destination "$ROOT/src/." "$dst/"
	if [ -d "$ROOT/rust" ]; then
		cp -r --remove-destination "$ROOT/rust/." "$staging/rust/"
	fi
	mkdir -p "$tree"
	rsync -rlc --delete --exclude=/.key "$staging/" "$tree/"
	rm -rf "$staging"
	echo "$key" > "$tree/.key"
	done_stage
fi
echo "$tree"
