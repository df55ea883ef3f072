#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Record what the C implementation answers to the spec vectors
# (tests/vectors/specs.txt, then specs-7.3.txt), on a ref kernel: `ref`
# (C 6.12, the default) or `ref-7.3` (C 7.3); the files end with the
# variant's suffix (scripts/variants.tsv). `oracle.sh record [VARIANT]`
# rewrites the answers, tests/vectors/c-ref.txt (ref) or c-ref-7.3.txt
# (ref-7.3), and the BTF fixture the host tests answer the specs with,
# tests/vectors/btf.raw or btf-7.3.raw (the kernel's BTF cut down to the specs' functions and the
# structs they name, scripts/btf-fixture.py; commit both); `oracle.sh verify
# [VARIANT]` checks that the committed files are still what C says and what
# the kernel's BTF is.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
# Specs and answers are bytes (Latin-1 names): no locale in sed and grep.
export LC_ALL=C

mode=${1:-verify}
variant=${2:-$(variants kind=ref | head -1)}
[ "$(variant_kind "$variant")" = ref ] || die "usage: oracle.sh record|verify [REF] (a ref variant: $(variants kind=ref | tr '\n' ' '))"
suffix=$(variant_suffix "$variant")
answers=$ROOT/tests/vectors/c-ref$suffix.txt
fixture=$ROOT/tests/vectors/btf$suffix.raw
specs=("$ROOT/tests/vectors/specs.txt" "$ROOT/tests/vectors/specs-7.3.txt")
out=$ROOT/build/results/oracle-$variant.txt
mkdir -p "$(dirname "$out")"
stage "C oracle over the spec vectors ($variant)"
c_runs_judged "$out.log"
bash "$ROOT/scripts/vm.sh" --c-only --timeout 600 --log "$out.log" "$variant" -- \
	'echo "=== ORACLE"; rc=0; for f in specs.txt specs-7.3.txt; do sh /rkpe/guest/oracle.sh /rkpe/tests/vectors/$f || rc=1; done; echo "=== DONE"; exit $rc' >/dev/null
# The guest's output, without the kernel's console messages.
console_section "$out.log" '^=== ORACLE$' '^=== DONE$' | drop_kmsg > "$out"
done_stage
grep -q '^=== end$' "$out" || die "oracle output incomplete: $out.log"
vmlinux=$(readlink -f "$ROOT/build/$variant/out")/vmlinux
btf=$ROOT/build/results/btf-$variant.raw
llvm-objcopy --dump-section .BTF="$btf.full" "$vmlinux" "$btf.elf"
# The module the specs name, with its BTF (guest/oracle.sh loads it).
ko=$(find "$(readlink -f "$ROOT/build/$variant/modroot")" -name trace-events-sample.ko)
llvm-objcopy --dump-section .BTF="$btf.mod" "$ko" "$btf.elf"
python3 "$ROOT/scripts/btf-fixture.py" "$btf.full" --module "$btf.mod" "${specs[@]}" > "$btf"
rm -f "$btf.full" "$btf.mod" "$btf.elf"
rel=${answers#"$ROOT"/}
case "$mode" in
record)
	cp "$out" "$answers"
	cp "$btf" "$fixture"
	echo "recorded $(grep -c '^=== ' "$out") entries into $rel, and ${fixture#"$ROOT"/}"
	;;
verify)
	cmp -s "$fixture" "$btf" ||
		die "oracle: ${fixture#"$ROOT"/} is not the $variant kernel's BTF for the specs (make vectors)"
	if diff -u "$answers" "$out"; then
		echo "oracle: $rel matches C on $variant ($(grep -c '^=== ' "$out") entries)"
	else
		echo "oracle: C on $variant answers differently from $rel (diff above)"
		exit 1
	fi
	;;
*) die "usage: oracle.sh record|verify [REF]" ;;
esac
