#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Differential test in one boot of the ref kernel: the C kprobe_events and
# the module's rkprobe_events answer the same specs (tests/vectors/specs.txt,
# and tests/vectors/specs-7.3.txt in the syntax and limits 7.3 changed,
# which each kernel's C answers in its own way), each written alone into an
# empty file; the write's errno, error_log entry
# (message, command, caret), read-back, format fields and print fmt must be
# identical once the module's default group (rkprobes) reads as kprobes.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
# Specs and answers are bytes (Latin-1 names): no locale in sed and grep.
export LC_ALL=C
res=$ROOT/build/results
mkdir -p "$res"
variant=${1:-$(variants kind=ref | head -1)} # or arm64-ref, ref-7.3
[ "$(variant_kind "$variant")" = ref ] || die "differential.sh: C and the module side by side need a ref variant"
out=differential$(variant_suffix "$variant")
log=$res/$out-ref.log
# The trace specs, and on a kernel with BTF the BTF ones (of the kernel's
# release: its types differ).
trace_specs=(tests/vectors/trace-specs.txt)
if variant_btf "$variant"; then
	case "$(variant_kver "$variant")" in
	6.12) trace_specs+=(tests/vectors/trace-specs-btf.txt) ;;
	*) trace_specs+=("tests/vectors/trace-specs-btf-$(variant_kver "$variant").txt") ;;
	esac
fi
(cd "$ROOT" && cat "${trace_specs[@]}") > "$res/$out-trace-specs.txt"
stage "differential: C kprobe_events vs rkprobe_events ($variant)"
bash "$ROOT/scripts/vm.sh" --timeout 1200 --log "$log" "$variant" -- \
	"sh /rkpe/guest/differential.sh /rkpe/tests/vectors/specs.txt,/rkpe/tests/vectors/specs-7.3.txt ${trace_specs[*]/#//rkpe/}" >/dev/null
done_stage
console_section "$log" '^=== C$' '^=== RUST$' | drop_kmsg > "$res/$out-c.txt"
console_section "$log" '^=== RUST$' '^=== DONE$' | drop_kmsg | sed 's/rkprobes/kprobes/g' > "$res/$out-rust.txt"
n=$(grep -c '^=== ' "$res/$out-c.txt" || true)
[ "$n" -gt 100 ] || die "differential: only $n answers from C; see $log"
rc=0
# Spec by spec; on a kernel whose C has syntax the module lacks yet
# (tests/differential-VARIANT.known, none now), those specs must differ, the
# rest not.
known=$ROOT/tests/differential-$variant.known
[ -f "$known" ] || known=
if ! python3 "$ROOT/scripts/diffknown.py" "$res/$out-c.txt" "$res/$out-rust.txt" "$res/$out.diff" $known; then
	head -80 "$res/$out.diff"
	echo "differential: the module differs from C (full diff: $res/$out.diff)"
	rc=1
fi
console_section "$log" '^=== TRACE$' > "$res/$out-trace.txt"
python3 "$ROOT/scripts/tracediff.py" "$res/$out-trace-specs.txt" "$res/$out-trace.txt" || rc=1
exit $rc
