#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Applies the patch series (scripts/series.sh) to a Linux 6.12 or 7.3 tree
# (make apply KDIR=...): the series of the tree's release. A git work tree
# gets the commits with `git am`; any other tree gets `patch -p1`, after a
# dry run of the whole series, so that a series that does not apply changes
# nothing. make check derives its own
# kernel tree this way from the pristine source (scripts/tree.sh).
#   apply.sh KDIR [SERIES_DIR]
set -euo pipefail
. "$(dirname "$0")/lib.sh"
# A failure says where (set -e alone exits silently on a quiet command).
trap 'echo "apply.sh: failed (status $?) at line $LINENO: $BASH_COMMAND" >&2' ERR

kdir=${1:?usage: apply.sh KDIR [SERIES_DIR]}
[ -f "$kdir/Makefile" ] || die "$kdir: no kernel tree (no Makefile)"
version=$(sed -n 's/^VERSION = //p;s/^PATCHLEVEL = //p' "$kdir/Makefile" | paste -sd.)
case "$version" in
6.12 | 7.3) ;;
*) die "$kdir is Linux $version; the series is for 6.12 and 7.3" ;;
esac
[ -z "${RKPE_KVER:-}" ] || [ "$RKPE_KVER" = "$version" ] ||
	die "$kdir is Linux $version, and RKPE_KVER asks for the $RKPE_KVER series"
series=${2:-$(RKPE_KVER=$version bash "$ROOT/scripts/series.sh")}
mapfile -t patches < <(series_patches "$series")
[ ${#patches[@]} -gt 0 ] || die "$series: no patches"

if git -C "$kdir" rev-parse --is-inside-work-tree > /dev/null 2>&1 \
	&& [ "$(git -C "$kdir" rev-parse --show-toplevel)" = "$(cd "$kdir" && pwd -P)" ]; then
	[ -z "$(git -C "$kdir" status --porcelain --untracked-files=no)" ] \
		|| die "$kdir has uncommitted changes; commit or stash them first"
	git -C "$kdir" am --quiet "${patches[@]}" \
		|| die "git am stopped; see 'git -C $kdir am --show-current-patch', then --abort or resolve"
	echo "applied ${#patches[@]} patches to $kdir with git am"
else
	# The whole series is tried first: patch -p1 cannot dry-run a series whose
	# later patches depend on earlier ones, so it runs on a scratch copy of
	# the files the series touches.
	scratch=$(mktemp -d)
	trap 'rm -rf "$scratch"' EXIT
	patched_files "${patches[@]}" | copy_existing "$kdir" "$scratch"
	for p in "${patches[@]}"; do
		patch -s -p1 -F0 -d "$scratch" --no-backup-if-mismatch < "$p" > /dev/null \
			|| die "$(basename "$p") does not apply to $kdir; nothing changed"
	done
	# GNU patch writes a new file and renames it over the old one, so a tree
	# of hard links (make check's) is never written through.
	for p in "${patches[@]}"; do
		patch -s -p1 -F0 -d "$kdir" --no-backup-if-mismatch < "$p" \
			|| die "$(basename "$p") failed half-way: $kdir is partly patched"
	done
	echo "applied ${#patches[@]} patches to $kdir with patch -p1" >&2
fi
