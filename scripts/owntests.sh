#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The project's own ftracetest-format tests
# (tools/testing/selftests/rust_kprobe_events/*.tc) through the kernel
# tree's ftracetest. On `test` (the default) and `debug`: all of them, with
# the module loaded. On `ref`: those marked "# c-too:" run against the C
# implementation, which shows that they describe C's behaviour. All must
# pass.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
variant=${1:-test}
res=$ROOT/build/results
mkdir -p "$res"
log=$res/owntests-$variant.log
dir=/rkpe/selftests/rust_kprobe_events
if module_variant "$variant"; then
	what=$dir
	load='modprobe rust_kprobe_events &&'
else
	what=$(cd "$ROOT/tools/testing/selftests/rust_kprobe_events" && grep -l '^# c-too:' ./*.tc | sed "s|^\./|$dir/|" | tr '\n' ' ')
	[ -n "$what" ] || die "no test is marked '# c-too:'"
	load=
fi
# perf_bpf.tc's trigger: a static binary, put into the initramfs from build/bin.
bash "$ROOT/scripts/guest-bins.sh" --arch "$(variant_arch "$variant")" perf_bpf
stage "own .tc tests on $variant"
set +e
c_only=(); [ "$(variant_kind "$variant")" = ref ] && c_only=(--c-only) # C alone: replayed when unchanged (vm.sh)
c_runs_judged "$log"
bash "$ROOT/scripts/vm.sh" "${c_only[@]}" --timeout 900 --log "$log" "$variant" -- \
	"$load cd /selftests/ftrace && ./ftracetest -l /tmp/ftlog $what >/tmp/ft.out 2>&1; rc=\$?; echo '=== ftracetest output'; cat /tmp/ft.out; exit \$rc" >/dev/null
rc=$?
set -e
done_stage
console_section "$log" '^=== ftracetest output$' | grep -E '^\[[0-9]+\]|^# of' || true
[ $rc = 0 ] || { echo "own tests: failed (status $rc); console in $log"; exit 1; }
grep -q '^# of passed:  *[1-9]' "$log" || { echo "own tests: none passed"; exit 1; }
grep -q '^# of failed:  *0' "$log" || { echo "own tests: some failed"; exit 1; }
echo "own tests on $variant: all passed"
