#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Hostile input in the kernel, C as the oracle (issue #12): the same lines
# (scripts/hostile-lines.py: the fuzz corpus and deterministic mutations of
# it) and special cases (megabyte writes, no newline, NUL bytes, a line
# split over write() calls, lines around the 4096-byte write buffer) are
# written, one write() each, to kprobe_events and dynamic_events by
# tests/hostile/hostile.c on a ref kernel (C, no module) and its test
# partner (the module loaded: the test variant of the same arch and release
# in scripts/variants.tsv). Every answer (errno, error_log entry,
# listing, cleanup) must be the same on both, a sentinel probe must survive
# every line, the kernel must report no problem, and at least 10,000 lines
# must be answered.
#   hostile.sh [REF]      # both kernels, then compare (REF: ref, the
#                         # default, arm64-ref, ref-7.3; or the old pair
#                         # names x86, arm64, 7.3)
# HOSTILE_COUNT (lines generated, default 20000) and HOSTILE_LIMIT (lines
# written, for a quick try) change the size; HOSTILE_WATCHDOG (s, default
# 600) is how long the guest waits for the program before showing where it
# is stuck.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
export LC_ALL=C
t0=$(date +%s)
res=$ROOT/build/results
hb=$ROOT/build/hostile
mkdir -p "$res" "$hb" "$ROOT/build/bin"
count=${HOSTILE_COUNT:-20000}
limit=${HOSTILE_LIMIT:-}
watchdog=${HOSTILE_WATCHDOG:-600}

ref=${1:-$(variants kind=ref | head -1)}
# The pairs' old names: an architecture, or a release on the first one.
if ! table_has variant "$ref"; then
	if table_has arch "$ref"; then
		ref=$(variants arch="$ref" release="$(releases | head -1)" kind=ref | head -1)
	elif table_has release "$ref"; then
		ref=$(variants arch="$(arches | head -1)" release="$ref" kind=ref | head -1)
	fi
fi
[ "$(variant_kind "$ref")" = ref ] || die "hostile.sh: $ref is not a ref variant ($(variants kind=ref | tr '\n' ' '))"
test=$(variant_partner "$ref" test)
arch=$(variant_arch "$ref")
sfx=$(variant_suffix "$ref")

# The lines and the program reach the guest through build/bin (/rkpe/bin/).
HOSTILE_COUNT=$count bash "$ROOT/scripts/guest-bins.sh" --arch "$arch" hostile

fail=0
for variant in "$test" "$ref"; do
	log=$res/hostile-$variant.log
	load=
	module_variant "$variant" && load='modprobe rust_kprobe_events || exit 1;'
	stage "hostile input on $variant"
	set +e
	# A write that never returns would hold the VM until vm.sh's timeout:
	# after $watchdog s the guest shows where the program is stuck instead.
	c_only=(); [ "$(variant_kind "$variant")" = ref ] && c_only=(--c-only) # C alone: replayed when unchanged (vm.sh)
	c_runs_judged "$log"
	flock /tmp/rkpe-vm.lock bash "$ROOT/scripts/vm.sh" "${c_only[@]}" --timeout 1200 --log "$log" "$variant" -- \
		"$load sh /rkpe/guest/hostile.sh $watchdog $limit" >/dev/null
	rc=$?
	set -e
	done_stage
	grep -a '^hostile: ' "$log" || true
	# Where the program is stuck, if it is: the guest's report, at most 30 lines.
	{ grep -a '^=== HOSTILE HUNG' "$log" || true
	  console_section "$log" '^=== HOSTILE HUNG' '^=== HOSTILE BEGIN'; } | head -30
	case $rc in
	0) ;;
	125) echo "hostile: the $variant kernel reported a problem (see $log)"; fail=1 ;;
	*) echo "hostile: the run on $variant failed with status $rc (see $log)"; fail=1 ;;
	esac
	# A console message can land inside a base64 line: cut it out (base64
	# has neither '[' nor ' '), the rest of the line follows it.
	console_section "$log" '=== HOSTILE BEGIN$' '^=== HOSTILE END$' |
		sed -E "s/$KMSG_TS.*\$//" | base64 -d | gunzip > "$res/hostile-$variant.txt" ||
		{ echo "hostile: no readable results from $variant (see $log)"; fail=1; }
	# The guest's clock at its last message: the time in the VM, without
	# the wait for the lock.
	up=$(grep -aoE "^$KMSG_TS" "$log" | tail -1 | tr -d '[] ')
	echo "hostile: $variant: ${up%.*}s in the VM, serial log $(du -k "$log" | cut -f1) KiB," \
		"results $(du -k "$res/hostile-$variant.txt" | cut -f1) KiB"
done

python3 "$ROOT/tests/hostile/compare.py" --known "$ROOT/tests/hostile/known-differences.txt" --min-lines "$([ -n "$limit" ] && echo 0 || echo 10000)" \
	--logs "$res/hostile-$ref.log" "$res/hostile-$test.log" \
	"$hb/lines" "$res/hostile-$ref.txt" "$res/hostile-$test.txt" > "$res/hostile-summary$sfx.txt" || fail=1
# The summary; of the table of special cases only the ones that differ.
sed '/^hostile: special cases/,/^hostile: [0-9]* special answers/{/^hostile: \|DIFFERENT/!d}' "$res/hostile-summary$sfx.txt"
echo "hostile: special cases and full summary in $res/hostile-summary$sfx.txt"
echo "hostile: $(( $(date +%s) - t0 ))s in all"
exit $fail
