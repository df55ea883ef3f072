#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the kernel's ftracetest over test.d/kprobe and test.d/dynevent in a VM of
# the given variant (module loaded first on `test`), keep the raw results in
# build/results/ftracetest-<variant>.txt and compare them with
# tests/ftracetest-<variant>.expect (arm64-test and arm64-ref have their own).
# --core: test.d/event, test.d/filter and test.d/trigger instead, what the
# series' core patches touch (the record path every event takes), against
# tests/ftracetest-core-<release>.expect: the pristine kernel's results
# (`pristine`, `pristine-7.3`), which the `ref` kernels must give too.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# --single-thread: QEMU runs both vCPUs on one host thread; --fixed-qemu:
# on QEMU 10, both in parallel (vm.sh).
single=()
core=0
[ "${1:-}" = --core ] && { core=1; shift; }
case "${1:-}" in --single-thread|--fixed-qemu) single=("$1"); shift ;; esac
variant=${1:?usage: ftracetest.sh [--single-thread|--fixed-qemu] VARIANT [K/N]}
# K/N: only the K-th of N interleaved shares of the tests (make check runs
# the slow `debug` run as two shares in its two lanes).
part=${2:-}
dirs=(test.d/kprobe test.d/dynevent)
res=$ROOT/build/results
mkdir -p "$res"
name=$variant${part:+-part${part%/*}of${part#*/}}
[ $core = 0 ] || { dirs=(test.d/event test.d/filter test.d/trigger) name=core-$name; }
log=$res/ftracetest-$name.log
load=
# A debug kernel is its test partner with the debug machinery: the same
# results are expected.
expect=$variant
[ "$(variant_kind "$variant")" != debug ] || expect=$(variant_partner "$variant" test)
[ $core = 0 ] || expect=core-$(variant_kver "$variant")
module_variant "$variant" && load='modprobe rust_kprobe_events &&'

tree=$(variant_tree "$variant")
tests=("${dirs[@]}")
if [ -n "$part" ]; then
	k=${part%/*} n=${part#*/} i=0 tests=()
	for t in $(cd "$tree/tools/testing/selftests/ftrace" && for d in "${dirs[@]}"; do ls "$d"/*.tc; done); do
		[ $((i % n + 1)) = "$k" ] && tests+=("$t")
		i=$((i + 1))
	done
fi

stage "ftracetest ${dirs[*]} on $variant${part:+ (share $part)}"
set +e
c_only=(); [ "$(variant_kind "$variant")" = ref ] && c_only=(--c-only) # C alone: replayed when unchanged (vm.sh)
c_runs_judged "$log"
# ftracetest's output goes to a file, printed whole at the end; meanwhile
# the test it is in is named on the console whenever it changes, so that a
# run that hangs says where.
bash "$ROOT/scripts/vm.sh" "${c_only[@]}" "${single[@]}" --timeout 1500 --log "$log" "$variant" -- \
	"$load cd /selftests/ftrace || exit 1; { ./ftracetest -l /tmp/ftlog ${tests[*]} >/tmp/ft.out 2>&1; touch /tmp/ft.done; } &
	while [ ! -e /tmp/ft.done ]; do sleep 2; c=\$(grep -o '^\[[0-9]*\][^	]*' /tmp/ft.out | tail -n 1)
	[ \"\$c\" = \"\$l\" ] || echo \"ftracetest: now in \$c\"; l=\$c; done; wait
	echo '=== ftracetest output'; cat /tmp/ft.out" >/dev/null
vrc=$?
set -e
done_stage
[ $vrc = 0 ] || { tail -30 "$log" >&2; die "the $variant VM failed (status $vrc); console in $log"; }
# ftracetest's own output, printed after the run so that kernel messages on
# the console do not cut its lines.
console_section "$log" '^=== ftracetest output$' > "$res/ftracetest-$name.out"
python3 "$ROOT/scripts/ftresults.py" --ftrace-dir "$tree/tools/testing/selftests/ftrace" \
	--log "$res/ftracetest-$name.out" --expect "$ROOT/tests/ftracetest-$expect.expect" \
	--out "$res/ftracetest-$name.txt" ${part:+--only "${tests[*]}"} "${dirs[@]}"
