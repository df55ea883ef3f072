#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# A failed make check stage keeps its evidence (scripts/stage.sh): a stage
# that writes a console log under build/results/ and fails is reported
# with the directory its logs are kept in, which holds its output and that
# log, under a name a rerun does not reuse; a log older than the stage is
# not taken, and a stage that passes keeps nothing. Runs in a scratch
# ROOT.
set -euo pipefail
ROOT=$(mktemp -d)
trap 'rm -rf "$ROOT"' EXIT
R=$ROOT/build/results/check
mkdir -p "$R"
n_stage=0
. "$(dirname "$0")/stage.sh"
fail() { # a VM stage whose kernel oopsed
	echo "console: BUG: unable to handle page fault" > "$ROOT/build/results/fake-vm.log"
	echo "vm: the kernel reported a problem"
	return 125
}
echo "an earlier run's console" > "$ROOT/build/results/old.log"
touch -d '1 hour ago' "$ROOT/build/results/old.log"
bad=0
no() { echo "stage-test: $*" >&2; bad=1; }
# step's status is the stage's: check.sh announces a kernel only when its
# build stage passed.
step "vm fake: a stage that fails" fail > /dev/null && no "a failed stage returned 0"
step "vm fake: a stage that fails" fail > /dev/null && no "a failed stage returned 0" # its rerun
step "host: a stage that passes" true > /dev/null || no "a stage that passed returned non-zero"
mapfile -t kept < <(sed -n 's/^logs kept in //p' "$R/reasons")
[ ${#kept[@]} = 2 ] || no "expected 2 'logs kept in' lines, got ${#kept[@]}"
[ "${kept[0]:-}" != "${kept[1]:-}" ] || no "the rerun reused ${kept[0]:-}"
for d in "${kept[@]}"; do
	case "$d" in build/results/failed/*) ;; *) no "$d is not under build/results/failed/" ;; esac
	grep -q 'BUG: unable to handle' "$ROOT/$d/fake-vm.log" 2>/dev/null || no "$d has no console log"
	grep -q 'the kernel reported a problem' "$ROOT/$d/stage.out" 2>/dev/null || no "$d has no stage output"
	[ ! -e "$ROOT/$d/old.log" ] || no "$d took a log older than the stage"
done
[ "$(find "$ROOT/build/results/failed" -mindepth 1 -maxdepth 1 | wc -l)" = 2 ] || no "a passing stage kept logs"
grep -q '^ok host: a stage that passes$' "$R/outcomes" || no "the passing stage is not ok"
[ $bad = 0 ] && echo "stage-test: a failed stage's logs are kept, each run under its own name"
exit $bad
