#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Record what the C implementation answers to tests/vectors/specs.txt, on the
# ref kernel. `oracle.sh record` rewrites tests/vectors/c-ref.txt and the BTF
# fixture the host tests answer the specs with, tests/vectors/btf.raw (the
# ref kernel's BTF cut down to the specs' functions, scripts/btf-fixture.py;
# commit both); `oracle.sh verify` checks that the committed files are
# still what C says and what the kernel's BTF is.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
# Specs and answers are bytes (Latin-1 names): no locale in sed and grep.
export LC_ALL=C

mode=${1:-verify}
out=$ROOT/build/results/oracle-ref.txt
mkdir -p "$(dirname "$out")"
stage "C oracle over tests/vectors/specs.txt (ref)"
c_runs_judged "$out.log"
bash "$ROOT/scripts/vm.sh" --c-only --timeout 600 --log "$out.log" ref -- \
	'echo "=== ORACLE"; sh /rkpe/guest/oracle.sh /rkpe/tests/vectors/specs.txt; rc=$?; echo "=== DONE"; exit $rc' >/dev/null
# The guest's output, without the kernel's console messages.
console_section "$out.log" '^=== ORACLE$' '^=== DONE$' | drop_kmsg > "$out"
done_stage
grep -q '^=== end$' "$out" || die "oracle output incomplete: $out.log"
vmlinux=$(readlink -f "$ROOT/build/ref/out")/vmlinux
btf=$ROOT/build/results/btf.raw
llvm-objcopy --dump-section .BTF="$btf.full" "$vmlinux" "$btf.elf"
# The module the specs name, with its BTF (guest/oracle.sh loads it).
ko=$(find "$(readlink -f "$ROOT/build/ref/modroot")" -name trace-events-sample.ko)
llvm-objcopy --dump-section .BTF="$btf.mod" "$ko" "$btf.elf"
python3 "$ROOT/scripts/btf-fixture.py" "$btf.full" --module "$btf.mod" "$ROOT/tests/vectors/specs.txt" > "$btf"
rm -f "$btf.full" "$btf.mod" "$btf.elf"
case "$mode" in
record)
	cp "$out" "$ROOT/tests/vectors/c-ref.txt"
	cp "$btf" "$ROOT/tests/vectors/btf.raw"
	echo "recorded $(grep -c '^=== ' "$out") entries into tests/vectors/c-ref.txt, and tests/vectors/btf.raw"
	;;
verify)
	cmp -s "$ROOT/tests/vectors/btf.raw" "$btf" ||
		die "oracle: tests/vectors/btf.raw is not the ref kernel's BTF for the specs (make vectors)"
	if diff -u "$ROOT/tests/vectors/c-ref.txt" "$out"; then
		echo "oracle: tests/vectors/c-ref.txt matches the C implementation ($(grep -c '^=== ' "$out") entries)"
	else
		echo "oracle: the C implementation answers differently from tests/vectors/c-ref.txt (diff above)"
		exit 1
	fi
	;;
*) die "usage: oracle.sh record|verify" ;;
esac
