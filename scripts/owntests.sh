#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The project's own ftracetest-format tests
# (tools/testing/selftests/ftrace/test.d/rust_kprobe_events/*.tc, which
# scripts/initramfs.sh lays over the kernel tree's ftrace selftests) through
# the kernel tree's ftracetest. On `test` (the default) and `debug`: all of them, with
# the module loaded. On `ref`: those tests/owntests-c-too.txt lists run
# against the C implementation, which shows that they describe C's
# behaviour. All must pass.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
variant=${1:-$(variants kind=test | head -1)}
res=$ROOT/build/results
mkdir -p "$res"
log=$res/owntests-$variant.log
dir=test.d/rust_kprobe_events
if module_variant "$variant"; then
	what=$dir
	load='modprobe rust_kprobe_events &&'
else
	what=
	while read -r t; do
		case "$t" in '' | '#'*) continue ;; esac
		[ -f "$ROOT/tools/testing/selftests/ftrace/$dir/$t" ] ||
			die "tests/owntests-c-too.txt: no test $t in $dir"
		what+="$dir/$t "
	done < "$ROOT/tests/owntests-c-too.txt"
	[ -n "$what" ] || die "tests/owntests-c-too.txt lists no test"
	load=
fi
# perf_bpf.tc's trigger: a static binary, put into the initramfs from build/bin.
bash "$ROOT/scripts/guest-bins.sh" --arch "$(variant_arch "$variant")" perf_bpf
stage "own .tc tests on $variant"
set +e
opts=(); [ "$(variant_kind "$variant")" = ref ] && opts=(--c-only) # C alone: replayed when unchanged (vm.sh)
# The module's runs patch kernel text while both vCPUs run it
# (concurrency.tc: probes on vfs_read and vfs_write defined and removed
# while readers call them): on QEMU 10 where the arch has it, as the race
# stages. Debian's QEMU 7.2 can run stale translations of patched text
# (NOTES.md, "The kretprobe oops"); it oopsed test-7.3's own tests once
# (`RIP: 0010:0x0` in a reader's vfs_read, 2026-12-07, a cold make check
# under load). C's runs stay on QEMU 7.2, which their replay keys name.
if [ ${#opts[@]} = 0 ] && arch_can "$variant" fixed-qemu; then opts=(--fixed-qemu); fi
c_runs_judged "$log"
bash "$ROOT/scripts/vm.sh" "${opts[@]}" --timeout 900 --log "$log" "$variant" -- \
	"$load cd /selftests/ftrace && ./ftracetest -l /tmp/ftlog $what >/tmp/ft.out 2>&1; rc=\$?; echo '=== ftracetest output'; cat /tmp/ft.out; exit \$rc" >/dev/null
rc=$?
set -e
done_stage
console_section "$log" '^=== ftracetest output$' | grep -E '^\[[0-9]+\]|^# of' || true
[ $rc = 0 ] || { echo "own tests: failed (status $rc); console in $log"; exit 1; }
grep -q '^# of passed:  *[1-9]' "$log" || { echo "own tests: none passed"; exit 1; }
grep -q '^# of failed:  *0' "$log" || { echo "own tests: some failed"; exit 1; }
# A test may be unsupported only for want of what its kernel lacks: the
# ones marked "(Linux 7.3)" on 6.12, "(BTF)" on a kernel without BTF (the
# arm64 ones). Anything else unsupported (the module's kprobe_misses file
# missing, perf_bpf not in the initramfs) fails.
unsup=$(console_section "$log" '^=== ftracetest output$' | grep -a '\[UNSUPPORTED\]' || true)
[ "$(variant_kver "$variant")" = 6.12 ] && unsup=$(printf '%s\n' "$unsup" | grep -v '(Linux 7\.3)' || true)
variant_btf "$variant" ||
	unsup=$(printf '%s\n' "$unsup" | grep -v '(BTF)' || true)
if [ -n "$unsup" ]; then
	echo "own tests: unsupported where they must run:"; echo "$unsup"; exit 1
fi
echo "own tests on $variant: all passed"
