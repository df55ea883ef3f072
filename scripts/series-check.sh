#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The patch series as a maintainer and a user meet it (make check; with
# RKPE_KVER=7.3 the 7.3 series, checked with 7.3's checkpatch.pl):
# - scripts/checkpatch.pl --strict of the pristine tree reports nothing on
#   any patch;
# - `make apply` into a git tree (git am, one commit a patch, authors and
#   messages kept) gives the same files as the tree make check builds,
#   which scripts/tree.sh made with the other path (patch -p1 on a copy of
#   the pristine source).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
# A failure says where (set -e alone exits silently on a quiet command).
trap 'echo "series-check.sh: failed (status $?) at line $LINENO: $BASH_COMMAND" >&2' ERR

pristine=$(pristine_dir)
tree=$(bash "$ROOT/scripts/tree.sh")
series=$(bash "$ROOT/scripts/series.sh")
mapfile -t patches < <(series_patches "$series")
fail=0

# The pristine tree is a source package, not a git repository: checkpatch
# cannot look up the commits the C fixes' Fixes: tags name (it checks them
# in a git tree), so it is not asked to (UNKNOWN_COMMIT_ID). The tag's form
# is still checked (GIT_COMMIT_ID).
# A 6.12-only patch that adds later kernels' files as upstream has them
# carries upstream's own findings: patches/upstream-checkpatch.txt names the
# patch by its subject and the types ignored for it alone.
upstream_types() { # PATCH
	local subject
	subject=$(sed -n 's/^Subject: \[PATCH[^]]*\] //p' "$1" | sed -n 1p)
	awk -F '\t' -v s="$subject" '!/^#/ && $1 == s { print "," $2 }' "$ROOT/patches/upstream-checkpatch.txt"
}
for p in "${patches[@]}"; do
	out=$(cd "$pristine" && ./scripts/checkpatch.pl --strict --quiet --no-summary --terse \
		--ignore "UNKNOWN_COMMIT_ID$(upstream_types "$p")" "$p" 2>&1) || true
	if [ -n "$out" ]; then
		echo "$out" | sed "s|^$series/||"
		fail=1
	fi
done
[ $fail = 0 ] && echo "series: checkpatch --strict reports nothing on ${#patches[@]} patches"

# A git tree holding the pristine files the series touches, and the Makefile
# (apply.sh checks the version).
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git -C "$work" init -q
{ echo Makefile; patched_files "${patches[@]}"; } | copy_existing "$pristine" "$work"
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
git -C "$work" -c user.name=user -c user.email=user@example.org add -A
git -C "$work" -c user.name=user -c user.email=user@example.org commit -q -m "$(kver)"
git -C "$work" config user.name user && git -C "$work" config user.email user@example.org
bash "$ROOT/scripts/apply.sh" "$work" "$series"
n=$(git -C "$work" rev-list --count HEAD)
if [ "$n" != $((${#patches[@]} + 1)) ]; then
	echo "series: git am made $((n - 1)) commits of ${#patches[@]} patches"; fail=1
fi
# Every file git am produced is the tree's.
diffs=0
while read -r f; do
	cmp -s "$work/$f" "$tree/$f" || { echo "series: $f differs from the built tree's"; diffs=$((diffs + 1)); }
done < <(git -C "$work" ls-files)
[ $diffs = 0 ] && echo "series: git am gives the built tree's $(git -C "$work" ls-files | wc -l) files"
[ $diffs = 0 ] || fail=1
exit $fail
