#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Writes the project as a git format-patch series against Debian's pristine
# linux-source-6.12 or, with RKPE_KVER=7.3, linux-source-7.3 (make series
# [KERNEL=7.3]): patches/series (patches/7.3/series) lists the commits in
# order; each names a patch (its header is the commit message, its diff
# edits the tree; for 7.3 the one in patches/7.3/ if there is one, else the
# shared one in patches/) and the files the commit adds. The commits are
# made in a scratch repository that holds only the pristine files the series touches
# (a blob's id depends on its content alone, so the index lines are those of
# a full 6.12 tree, and `git am` applies the series there).
#   series.sh [--sizes] [OUTDIR]   # default build/series (7.3: build/series-7.3);
#                                  # prints OUTDIR (--sizes: each patch's lines on stderr)
# The series is reproducible: fixed author, dates and no signature.
set -Eeuo pipefail
. "$(dirname "$0")/lib.sh"
# A failure says where (set -e alone exits silently on a quiet command).
trap 'echo "series.sh: failed (status $?) at line $LINENO: $BASH_COMMAND" >&2' ERR

sizes=0
[ "${1:-}" = --sizes ] && { sizes=1; shift; }
k=$(kver)
default_out=$ROOT/build/series
[ "$k" = 6.12 ] || default_out=$ROOT/build/series-$k
out=$(realpath -m "${1:-$default_out}")
pristine=$(pristine_dir "$k")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
list=$(series_list "$k")

# The commits' identity: a placeholder, which a poster replaces with their
# own (RKPE_SERIES_NAME, RKPE_SERIES_EMAIL: the author, the Signed-off-by
# and the MAINTAINERS entry). make check always uses the placeholder.
export GIT_AUTHOR_NAME=${RKPE_SERIES_NAME:-rust-kprobe-events developers}
export GIT_AUTHOR_EMAIL=${RKPE_SERIES_EMAIL:-rust-kprobe-events@users.noreply.example.org}
export GIT_COMMITTER_NAME=$GIT_AUTHOR_NAME GIT_COMMITTER_EMAIL=$GIT_AUTHOR_EMAIL
export GIT_AUTHOR_DATE="2026-11-30T00:00:00+0000" GIT_COMMITTER_DATE="2026-11-30T00:00:00+0000"
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
git_() { git -C "$work" -c core.autocrlf=false -c init.defaultBranch=base "$@"; }

entries() { grep -v '^#' "$list" | grep -v '^[[:space:]]*$'; }

# The pristine files the patches edit.
git_ init -q
{
	entries | while read -r patch _; do patched_files "$(series_patch "$patch" "$k")"; done
	echo MAINTAINERS
} | copy_existing "$pristine" "$work"
git_ add -A
git_ commit -q --allow-empty -m "linux-source-$k (the files the series edits)"
git_ tag pristine

n=0
entries | while read -r patch adds; do
	p=$(series_patch "$patch" "$k")
	[ -f "$p" ] || die "${list#"$ROOT"/} names $patch, which is not there"
	# The diff after the header's `---` line, if any.
	# (grep reads all of it: `grep -q` would stop early, and with pipefail
	# sed's SIGPIPE would make the test false now and then.)
	if sed '1,/^---$/d' "$p" | grep '^+++ ' > /dev/null; then
		sed '1,/^---$/d' "$p" | patch -s -p1 -d "$work" --no-backup-if-mismatch \
			|| die "$patch does not apply"
	fi
	for a in $adds; do
		src=${a%%:*}
		dst=${a#*:}
		[ "$a" = "$src" ] && dst=$src
		mkdir -p "$work/$(dirname "$dst")"
		if [ -d "$ROOT/$src" ]; then
			mkdir -p "$work/$dst"
			# The files git knows (a clean clone's), else all; a file an
			# earlier commit added is replaced. One cp a file: coreutils
			# 9.1's `cp --parents` with many files opens with O_EXCL once
			# it has made a parent directory, and then fails ("File
			# exists") on a file an earlier commit added.
			(
				cd "$ROOT/$src"
				if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
					git ls-files -z
				else
					find . -type f -print0
				fi | while IFS= read -r -d '' f; do
					# The host tests of the probe language (cargo test: std,
					# a fake kernel, the project's test vectors) stay in the
					# repository: files only a #[cfg(test)] declaration
					# names, which the kernel's build never reads.
					case "${src%/}/$f" in src/*/tests.rs | src/probe/vectors.rs) continue ;; esac
					mkdir -p "$work/$dst/$(dirname "$f")"
					cp "$f" "$work/$dst/$f"
				done
			)
		else
			cp "$ROOT/$src" "$work/$dst"
		fi
	done
	# A commit that adds files names them in MAINTAINERS.
	paths=()
	for a in $adds; do paths+=("${a#*:}"); done
	[ ${#paths[@]} = 0 ] || RKPE_MAINTAINER="$GIT_AUTHOR_NAME <$GIT_AUTHOR_EMAIL>" python3 "$ROOT/scripts/maintainers.py" "$work/MAINTAINERS" "${paths[@]}"
	subject=$(sed -n 's/^Subject: \(\[PATCH\] \)\{0,1\}//p' "$p" | sed -n 1p)
	# The message: the header's lines after the subject up to a `---` line
	# (or the end of a patch that only adds files); a closing block of
	# tags (Fixes:, Cc:) takes the sign-off below it, without a blank line.
	{
		echo "$subject"
		echo
		sed -n '/^Subject:/,/^---$/p' "$p" | sed '1d;${/^---$/d}' | sed '1{/^$/d}' |
			sed -e :a -e '/^\n*$/{$d;N;ba' -e '}'
	} | cat -s > "$work/.msg"
	if tail -n 1 "$work/.msg" | grep -Eq '^(Fixes|Cc|Link|Reported-by|Closes): '; then
		echo "Signed-off-by: $GIT_AUTHOR_NAME <$GIT_AUTHOR_EMAIL>" >> "$work/.msg"
	else
		printf '\nSigned-off-by: %s <%s>\n' "$GIT_AUTHOR_NAME" "$GIT_AUTHOR_EMAIL" >> "$work/.msg"
	fi
	git_ add -A -- . ':!.msg'
	git_ commit -q -F .msg
	n=$((n + 1))
done
rm -f "$work/.msg"
[ -z "$(git_ status --porcelain)" ] || die "series: files left out of the commits: $(git_ status --porcelain | head -3)"

rm -rf "$out" && mkdir -p "$out"
n_patches=$(git_ rev-list --count pristine..HEAD)
git_ format-patch -q --no-signature --cover-letter -o "$out" pristine..HEAD
ls "$out"/*.patch > /dev/null 2>&1 || die "series: no patch written"
# The cover letter (patches/cover-letter.txt): its first line the subject,
# the rest the text; # lines left out, @KVER@ and @N@ filled in.
cover=$out/0000-cover-letter.patch
[ -f "$cover" ] || die "series: git format-patch wrote no cover letter"
python3 - "$cover" "$ROOT/patches/cover-letter.txt" "$k" "$n_patches" <<'PY'
import sys
cover, text, kver, n = sys.argv[1:]
lines = [l for l in open(text).read().split("\n") if not l.startswith("#")]
subject, blurb = lines[0], "\n".join(lines[1:]).strip("\n")
blurb = blurb.replace("@KVER@", kver).replace("@N@", n)
c = open(cover).read()
assert "*** SUBJECT HERE ***" in c and "*** BLURB HERE ***" in c
c = c.replace("*** SUBJECT HERE ***", subject).replace("*** BLURB HERE ***", blurb)
open(cover, "w").write(c)
PY
if [ $sizes = 1 ]; then
	# Each patch's size in lines (make series): a reviewer's first measure.
	for p in "$out"/*.patch; do
		printf '%6d  %s\n' "$(wc -l < "$p")" "${p##*/}"
	done >&2
	largest=$(for p in $(series_patches "$out"); do wc -l < "$p"; done | sort -n | tail -1)
	echo "series: $(series_patches "$out" | wc -l) patches and a cover letter; the largest patch has $largest lines" >&2
fi
echo "$out"
