#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Record what the C implementation answers to tests/vectors/specs.txt, on the
# ref kernel. `oracle.sh record` rewrites tests/vectors/c-ref.txt (commit it);
# `oracle.sh verify` checks that the committed file is still what C says.
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
case "$mode" in
record)
	cp "$out" "$ROOT/tests/vectors/c-ref.txt"
	echo "recorded $(grep -c '^=== ' "$out") entries into tests/vectors/c-ref.txt"
	;;
verify)
	if diff -u "$ROOT/tests/vectors/c-ref.txt" "$out"; then
		echo "oracle: tests/vectors/c-ref.txt matches the C implementation ($(grep -c '^=== ' "$out") entries)"
	else
		echo "oracle: the C implementation answers differently from tests/vectors/c-ref.txt (diff above)"
		exit 1
	fi
	;;
*) die "usage: oracle.sh record|verify" ;;
esac
