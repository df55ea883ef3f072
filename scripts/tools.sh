#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The client tools people use on kprobe events — perf (stat, record, script,
# --filter, probe), bpftrace, bcc, trace-cmd — run in the VM against the
# kernel's kprobe_events: the host's own binaries (scripts/deps.sh installs
# them), its root shared read-only into the guest (vm.sh --hostroot) and
# entered with chroot (guest/hostroot.sh). On `test` the module is loaded
# and is the provider; on `ref` the C implementation is. Each
# tests/tools/NAME.sh prints normalized output that must equal
# tests/tools/NAME.expect, recorded from C: the same expectation on both
# variants.
#   tools.sh VARIANT [NAME...]           run (all tests by default)
#   tools.sh --record ref [NAME...]      write NAME.expect from the C implementation
# On Linux 7.3 (test-7.3, ref-7.3) a test's expectation is
# tests/tools/7.3/NAME.expect if there is one (recorded from C 7.3 with
# `--record ref-7.3 NAME`), else the shared one.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
record=0
[ "${1:-}" = --record ] && { record=1; shift; }
variant=${1:-$(variants kind=test | head -1)}
shift || true
dir=$ROOT/tests/tools
if [ $# -gt 0 ]; then
	names=("$@")
else
	names=()
	for f in "$dir"/*.sh; do
		n=$(basename "$f" .sh)
		[ "$n" = lib ] || names+=("$n")
	done
fi
[ $record = 0 ] || [ "$(variant_kind "$variant")" = ref ] || die "expectations are recorded from C (ref, ref-7.3) only"
kv=$(variant_kver "$variant")
# Where the release's own expectations are.
edir=$dir; [ "$kv" = 6.12 ] || edir=$dir/$kv
expect_of() { # NAME
	if [ -f "$edir/$1.expect" ]; then echo "$edir/$1.expect"; else echo "$dir/$1.expect"; fi
}
res=$ROOT/build/results
mkdir -p "$res" "$ROOT/build/bin"
log=$res/tools-$variant.log
out=$(readlink -f "$ROOT/build/$variant/out") || die "build/$variant/out missing: run scripts/kernel.sh $variant"
tree=$(variant_tree "$variant")

bash "$ROOT/scripts/guest-bins.sh" rkpe-trigger

load=
module_variant "$variant" && load='modprobe rust_kprobe_events || exit 1;'
cmd="$load sh /rkpe/guest/tools.sh $out $tree ${names[*]}"

stage "client tools on $variant: ${names[*]}"
set +e
c_only=(); [ "$(variant_kind "$variant")" = ref ] && c_only=(--c-only) # C alone: replayed when unchanged (vm.sh)
c_runs_judged "$log"
bash "$ROOT/scripts/vm.sh" "${c_only[@]}" --hostroot --timeout 2400 --log "$log" "$variant" -- "$cmd" >/dev/null
rc=$?
set -e
done_stage
grep -a '^=== [a-z_]*: status' "$log" || true
[ $rc = 0 ] || { echo "tools: the VM failed (status $rc); console in $log"; exit 1; }

failed=0
for t in "${names[@]}"; do
	got=$res/tools-$variant-$t.out
	console_section "$log" "^=== BEGIN $t\$" "^=== END $t\$" | drop_kmsg > "$got"
	if [ $record = 1 ]; then
		mkdir -p "$edir"
		cp "$got" "$edir/$t.expect"
		echo "recorded $edir/$t.expect ($(wc -l < "$got") lines)"
	elif diff -u "$(expect_of "$t")" "$got" > "$got.diff"; then
		echo "tools $variant: $t ok"
	else
		echo "tools $variant: $t differs from C's output:"
		cat "$got.diff"
		failed=$((failed + 1))
	fi
done
[ $failed = 0 ] || { echo "tools on $variant: $failed of ${#names[@]} failed"; exit 1; }
echo "tools on $variant: ${#names[@]} passed"
