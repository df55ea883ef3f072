#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The project's own ftracetest-format tests
# (tools/testing/selftests/rust_kprobe_events/*.tc) on the test kernel with
# the module loaded, through the kernel tree's ftracetest. All must pass.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
res=$ROOT/build/results
mkdir -p "$res"
log=$res/owntests-test.log
stage "own .tc tests on test"
set +e
bash "$ROOT/scripts/vm.sh" --timeout 900 --log "$log" test -- \
	"modprobe rust_kprobe_events && cd /selftests/ftrace && ./ftracetest -l /tmp/ftlog /rkpe/selftests/rust_kprobe_events >/tmp/ft.out 2>&1; rc=\$?; echo '=== ftracetest output'; cat /tmp/ft.out; exit \$rc" >/dev/null
rc=$?
set -e
done_stage
sed -n '/^=== ftracetest output$/,$p' "$log" | grep -E '^\[[0-9]+\]|^# of' || true
[ $rc = 0 ] || { echo "own tests: failed (status $rc); console in $log"; exit 1; }
grep -q '^# of passed:  *[1-9]' "$log" || { echo "own tests: none passed"; exit 1; }
echo "own tests: all passed"
