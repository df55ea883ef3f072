# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# make check's stages (sourced by scripts/check.sh, and by
# scripts/stage-test.sh, which checks that a failed stage keeps its
# evidence): step NAME COMMAND... runs one stage, records its outcome
# under $R (build/results/check/) and returns non-zero if it failed;
# $n_stage counts the stages, $LANE names the lane that runs them.
# A lane's output is shown when the lane ends; each of its stages' outcomes
# is also printed at once on file descriptor 3, when check.sh opened it, with
# the lane and the minutes since the check began: a run cut short (CI's
# time limit) still shows how far each lane got.
progress() { # text
	[ -n "${LANE:-}" ] && { true >&3; } 2>/dev/null || return 0
	echo "lane $LANE, minute $(( ($(date +%s) - ${CHECK_T0:-$(date +%s)}) / 60 )): $1" >&3
}

step() { # name command...
	local name=$1; shift
	local t0=$(date +%s) out kept rc=0
	n_stage=$((n_stage + 1)); out="$R/stage-${LANE:-main}-$n_stage.out"
	# (A second early: file times are as coarse as the kernel's clock tick,
	# and a log the stage writes at once would not be newer than its start.)
	touch -d "@$(($(date +%s) - 1))" "$out.start"
	echo "=== $name"
	if "$@" 2>&1 | tee "$out"; [ "${PIPESTATUS[0]}" = 0 ]; then
		echo "ok $name" >> "$R/outcomes"; echo "=== $name: ok ($(( $(date +%s) - t0 ))s)"
		progress "ok ($(( $(date +%s) - t0 ))s) $name"
	else
		echo "FAILED $name" >> "$R/outcomes"; echo "=== $name: FAILED ($(( $(date +%s) - t0 ))s)"
		progress "FAILED ($(( $(date +%s) - t0 ))s) $name"
		rc=1
		kept=$(keep_evidence "$name" "$out")
		# Why, repeated at the end (CI shows only the tail of the output):
		# the stage's failure lines, else its last lines, and where its
		# logs are kept.
		{ echo "--- $name:"
		  (grep -aE 'FAIL|BUG|WARNING|panic|Oops|timed out|splat|unreferenced|error' "$out" || tail -n 8 "$out") | tail -n 16
		  echo "logs kept in ${kept#"$ROOT/"}"
		} >> "$R/reasons"
	fi
	rm -f "$out.start"
	return $rc
}

# A failed stage's evidence, kept where no later run writes: its output and
# every console log and result written under build/results/ while it ran
# (the other lane's too, when they overlap), copied into
# build/results/failed/UTC-TIME-LANE-N-STAGE/. A rerun overwrites
# build/results/*.log; this copy stays. Prints the directory.
keep_evidence() { # NAME OUT
	local slug d
	slug=$(printf '%s' "$1" | tr -cs 'A-Za-z0-9.' '-' | cut -c1-60)
	d=$ROOT/build/results/failed/$(date -u +%Y%m%dT%H%M%SZ)-${LANE:-main}-$n_stage-${slug%-}
	mkdir -p "$d"
	cp "$2" "$d/stage.out"
	find "$ROOT/build/results" -maxdepth 1 -type f -newer "$2.start" -exec cp -p {} "$d/" \;
	echo "$d"
}

