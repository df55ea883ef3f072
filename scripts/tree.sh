#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Derive the kernel build tree from Debian's pristine linux-source-6.12 (or,
# with RKPE_KVER=7.3, linux-source-7.3) and the project's patch series:
# scripts/series.sh writes the series
# (patches/series: the tree edits, the kernel-crate abstractions, the module,
# its documentation and selftests) and scripts/apply.sh applies it, as
# `make apply KDIR=...` does to a user's tree. So the tree built and tested
# is exactly what the series produces.
#
# The tree lives in the cache ($CACHE/tree, $CACHE/tree-7.3). It is rebuilt
# in a staging copy
# (hard links to the pristine files, so it costs little) and synced with
# rsync --checksum, so only files whose content changed get a new mtime and
# make rebuilds only what depends on them. Prints the tree's path.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
# A failure says where (set -e alone exits silently on a quiet command).
trap 'echo "tree.sh: failed (status $?) at line $LINENO: $BASH_COMMAND" >&2' ERR

k=$(kver)
pristine=$(pristine_dir "$k")
pkgver=${pristine##*/pristine-}
case "$k" in
6.12) tree=$CACHE/tree series_out=$CACHE/series ;;
*) tree=$CACHE/tree-$k series_out=$CACHE/series-$k ;;
esac

# Everything the tree is derived from, in one hash.
key=$( {
	echo "$pkgver"
	cd "$ROOT"
	# rust/ and patches/ may be absent in a clone (git keeps no empty dirs).
	dirs=()
	for d in Kconfig src rust include patches Documentation tools scripts/series.sh scripts/apply.sh; do
		[ -e "$d" ] && dirs+=("$d")
	done
	find "${dirs[@]}" -type f -print0 | sort -z | xargs -0 sha256sum
	# series.sh takes the files git knows: a file added to git changes the tree.
	git ls-files 2>/dev/null || true
} | sha256sum | cut -d' ' -f1)

if [ "$(cat "$tree/.key" 2>/dev/null)" != "$key" ]; then
	stage "derive the kernel tree"
	staging=$tree.staging
	rm -rf "$staging"
	cp -al "$pristine" "$staging"
	rm -f "$staging/.done"
	series=$(bash "$ROOT/scripts/series.sh" "$series_out")
	bash "$ROOT/scripts/apply.sh" "$staging" "$series" > /dev/null
	mkdir -p "$tree"
	rsync -rlc --delete --exclude=/.key "$staging/" "$tree/"
	rm -rf "$staging"
	echo "$key" > "$tree/.key"
	done_stage
fi
echo "$tree"
