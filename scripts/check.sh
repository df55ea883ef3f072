#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make check`: every test, host first, then the VMs. Each stage's outcome is
# counted; the last line is "check: N passed, N failed" and the exit status is
# non-zero if anything failed. The kernels it builds and the VM stages it
# runs on each, in which lane, come from scripts/variants.tsv.
#   check.sh          run it all
#   check.sh --list   print every stage, "LANE<tab>NAME" (main, a, b) in the
#                     order each lane runs them, and run nothing
set -uo pipefail
. "$(dirname "$0")/lib.sh"
list=0
case "${1:-}" in
--list) list=1 ;;
'') ;;
*) die "usage: check.sh [--list]" ;;
esac

# Each stage's outcome goes to files under build/results/check/ (so stages
# can run in the background lanes below): one "ok"/"FAILED" line per stage,
# and for a failed one the lines that say why.
R=$ROOT/build/results/check
n_stage=0
. "$ROOT/scripts/stage.sh"
if [ $list = 1 ]; then
	step() { printf '%s\t%s\n' "${LANE:-main}" "$1"; }
else
	export CHECK_T0=${CHECK_T0:-$(date +%s)}
	rm -rf "$R"; mkdir -p "$R"
fi

no_unsafe_in_src() {
	# The module under src/ is safe Rust: all unsafe lives in the kernel crate (rust/).
	# Code, not comments: `unsafe` before any `/` on the line.
	if grep -rnE '^[^/]*\bunsafe\b' "$ROOT/src" --include='*.rs'; then
		echo "unsafe code in src/ (see above)"; return 1
	fi
}

[ $list = 1 ] || bash "$ROOT/scripts/deps.sh" || { echo "check: 0 passed, 1 failed"; exit 1; }

step "host: cargo test" cargo test --manifest-path "$ROOT/Cargo.toml" --locked
step "host: rustfmt" cargo fmt --manifest-path "$ROOT/Cargo.toml" --check
rustfmt_kernel() { # the kernel-crate additions and the module, with the kernel's rustfmt settings
	find "$ROOT/rust" "$ROOT/src" -name '*.rs' -print0 | xargs -0 -r rustfmt --edition 2021 --config-path "$ROOT/.rustfmt.toml" --check
}
step "host: rustfmt rust/ and src/ (the kernel's settings)" rustfmt_kernel
step "host: fuzz target builds" cargo check --quiet --manifest-path "$ROOT/fuzz/Cargo.toml" --locked
step "host: no unsafe in src/" no_unsafe_in_src
step "host: the module's dialect follows the release it is built in (src/Kbuild)" bash "$ROOT/tests/kbuild/dialect.sh"
step "host: a failed stage keeps its logs under a name of its own" bash "$ROOT/scripts/stage-test.sh"
step "host: the watcher ends a guest only when it has lost its timer interrupts" bash "$ROOT/tests/vm-watch/run.sh"
step "host: the variant table (scripts/variants.tsv)" bash "$ROOT/scripts/variants-check.sh"
# The kernels are built by the main sequence below, one after another (one
# build at a time per cache); the VM stages run in two lanes beside it, each
# stage as soon as the kernels it needs are built (`have`), so that the
# guests of the first kernels run while the later ones build. A guest mostly
# keeps one of its two virtual CPUs busy, and a kernel build leaves a CPU
# idle in its serial parts (the kernel crate, the links, BTF): once the lanes
# have started, the main sequence runs at the lowest priority (nice 19), so
# that a guest keeps its CPU and its timers (scripts/vm.sh fails a run on an
# RCU stall) and the builds take what the guests leave. Each lane's output is
# shown when it ends, each stage's outcome at once (scripts/stage.sh). The
# runs of C alone (`ref`, vm.sh --c-only) are replayed when C, the tests and
# the harness are unchanged since they last passed: the summary says how
# many.
#
# arm64: the module on its second architecture, built with ARCH=arm64 LLVM=1
# and booted on qemu-system-aarch64 -M virt. RKPE_ARM64=0 leaves out every
# variant whose arch column is arm64 (a quick local run); CI always runs
# them.
arm64=${RKPE_ARM64:-1}
selected() { # VARIANT
	[ "$arm64" != 0 ] || [ "$(variant_arch "$1")" != arm64 ]
}
# The variants make check builds, in table order: every selected test, ref
# and debug row (pristine ones are for bench-core.sh, overlays are made by
# their own scripts).
built_variants() {
	local v
	for v in $(variants); do
		selected "$v" || continue
		case "$(variant_kind "$v")" in test | ref | debug) echo "$v" ;; esac
	done
}
# Every program the guests take from build/bin, before the lanes: the
# initramfs then has the same content whichever lane gets where first.
if [ $list = 0 ]; then
	for a in $(arches); do
		for v in $(built_variants); do
			[ "$(variant_arch "$v")" = "$a" ] && { bash "$ROOT/scripts/guest-bins.sh" --arch "$a"; break; }
		done
	done
fi
step "deps: QEMU 10.0 for the runs on truly parallel vCPUs (scripts/qemu-fixed.sh)" bash "$ROOT/scripts/qemu-fixed.sh"

# A variant is announced (build/results/check/built-VARIANT) once its build
# stage passed and its initramfs is made (here, not by two lanes at a time);
# `builds-over` says that no more will come.
build() { # VARIANT STAGE-NAME
	local v=$1
	step "$2" bash "$ROOT/scripts/kernel.sh" "$v" && [ $list = 0 ] && [ -e "$(kernel_image "$v")" ] || return 0
	bash "$ROOT/scripts/initramfs.sh" "$v" > /dev/null && touch "$R/built-$v"
}
announce() { # VARIANT: its stages may start (after what the main sequence did with it)
	[ $list = 1 ] || [ ! -e "$R/built-$1" ] || touch "$R/announced-$1"
}
# Whether each VARIANT is built, waiting for the main sequence to announce
# it or to end (or to be gone).
main_pid=$$
have() { # VARIANT...
	local v
	[ $list = 0 ] || return 0
	for v; do
		until [ -e "$R/announced-$v" ] || [ -e "$R/builds-over" ] || ! kill -0 "$main_pid" 2>/dev/null; do
			sleep 5
		done
		[ -e "$R/announced-$v" ] || return 1
	done
}

# How the stages of a variant name it: C is "C" on the first release, "C
# 7.3" on another; a check on a build says where unless that is the first
# architecture and release ("on arm64", "on 7.3").
first_release() { [ "$(variant_kver "$1")" = "$(releases | head -1)" ]; }
c_name() { # VARIANT
	if first_release "$1"; then echo C; else echo "C $(variant_kver "$1")"; fi
}
where() { # VARIANT
	local w=()
	[ "$(variant_arch "$1")" = "$(arches | head -1)" ] || w+=("$(variant_arch "$1")")
	first_release "$1" || w+=("$(variant_kver "$1")")
	echo "${w[*]}"
}
build_name() { # VARIANT
	local v=$1 r what
	r=$(variant_kver "$v")
	if ! first_release "$v"; then
		case "$(variant_kind "$v")" in
		ref) what="C's kprobe events" ;;
		debug) what="the module alone, with the kernel's debug checks" ;;
		*) what="the module alone" ;;
		esac
		echo "build: $v kernel (Linux $r, the $r series, $what)"
	elif [ -n "$(where "$v")" ]; then
		echo "build: $(where "$v") $(variant_kind "$v") kernel"
	else
		echo "build: $v kernel"
	fi
}

# The checks on a built test kernel: the kernel crate and the module under
# clippy, the hit path unprobeable, the exports kept to the module; rustdoc
# on the first test kernel of the table.
nokprobe() { python3 "$ROOT/scripts/nokprobe-check.py" "$ROOT/build/$1/rust_kprobe_events.ko" "$ROOT/build/$1/out/vmlinux"; }
exports() { python3 "$ROOT/scripts/exports-check.py" "$ROOT/build/$1/out" --why; }
test_checks() { # VARIANT
	local v=$1 w on= comma= lints=
	w=$(where "$v")
	[ -z "$w" ] || { on=" on $w" comma=", on $w"; }
	first_release "$v" || lints=" (its lint set)"
	step "build: kernel crate and module clippy-clean$on$lints" bash "$ROOT/scripts/clippy.sh" "$v"
	# Nothing a probe hit runs through can be probed (rust/kernel/kprobes.rs):
	# followed from the kprobe callbacks through the module and vmlinux.
	step "build: nothing on the hit path can be probed$comma" nokprobe "$v"
	# What the kernel keeps from modules stays kept: no exported kernel-crate
	# or helper symbol of the series reaches it, and another module cannot use
	# what is exported to rust_kprobe_events alone (issue 52).
	step "build: no kernel-crate export reaches what the kernel keeps from modules$comma" exports "$v"
	step "build: another module is refused what is exported to the module alone$comma" bash "$ROOT/scripts/foreign-check.sh" "$v"
	[ "$v" != "$(variants kind=test | head -1)" ] ||
		step "build: make rustdoc without warnings" bash "$ROOT/scripts/rustdoc.sh" "$v"
	[ "$v" != "$(variants kind=test | head -1)" ] ||
		step "host: a guest is booted again after QEMU itself crashes, once (a fake QEMU)" bash "$ROOT/tests/vm-watch/crash.sh" "$v"
}
# The patch series of a release: checkpatch, and git am gives the tree
# built (after the release's last build).
series_check() { # RELEASE
	if [ "$1" = "$(releases | head -1)" ]; then
		step "series: checkpatch --strict, git am gives the built tree" bash "$ROOT/scripts/series-check.sh"
	else
		step "series $1: checkpatch --strict, git am gives the built tree" env RKPE_KVER="$1" bash "$ROOT/scripts/series-check.sh"
	fi
}
# The main sequence: each variant's build in table order, then what needs
# that build before the lanes may use it (the broken module of a variant
# with racebroken), then the checks on a test kernel, and after a release's
# last build its series.
main_sequence() {
	local v r all
	all=$(built_variants)
	for v in $all; do
		build "$v" "$(build_name "$v")"
		variant_has_token "$v" racebroken &&
			step "build: the deliberately broken module for $v (tests/broken/)" bash "$ROOT/scripts/race-broken.sh" --build
		announce "$v"
		[ "$(variant_kind "$v")" != test ] || test_checks "$v"
		r=$(variant_kver "$v")
		[ "$v" != "$(for w in $all; do [ "$(variant_kver "$w")" != "$r" ] || echo "$w"; done | tail -1)" ] ||
			series_check "$r"
	done
}

# A VM stage of the table: TOKEN[:ARGUMENT] on VARIANT (scripts/variants.tsv
# says which lane runs it). Timeouts and QEMU 10 are the token's.
vm_stage() { # VARIANT TOKEN[:ARGUMENT]
	local v=$1 t=${2%%:*} arg= r c p where_c k n
	[ "$2" = "$t" ] || arg=${2#*:}
	r=$(variant_kver "$v") c=$(c_name "$v")
	if first_release "$v"; then where_c="the C implementation"; else where_c=$c; fi
	case "$t" in
	load)
		step "vm $v: module load/unload, KUnit doctests" \
			bash "$ROOT/scripts/vm.sh" --timeout "$arg" --log "$ROOT/build/results/module_load-$v.log" "$v" -- \
			'sh /rkpe/tests/vm/module_load.sh' ;;
	own)
		if module_variant "$v"; then
			step "vm $v: own .tc tests" bash "$ROOT/scripts/owntests.sh" "$v"
		else
			step "vm $v: own .tc tests marked c-too, on $where_c" bash "$ROOT/scripts/owntests.sh" "$v"
		fi ;;
	ft)
		if [ -n "$arg" ]; then
			# In shares on QEMU 10: QEMU 7.2's multi-threaded TCG can keep
			# executing patched text (NOTES.md, "The kretprobe oops"); it once
			# hit an int3 that the kernel had removed in multiple_kprobes.tc.
			k=${arg%/*} n=${arg#*/}
			case "$k/$n" in 1/2) k="first half" ;; 2/2) k="second half" ;; *) k="share $k of $n" ;; esac
			step "vm $v: ftracetest kprobe+dynevent, $k (QEMU 10)" bash "$ROOT/scripts/ftracetest.sh" --fixed-qemu "$v" "$arg"
		elif first_release "$v"; then
			step "vm $v: ftracetest kprobe+dynevent" bash "$ROOT/scripts/ftracetest.sh" "$v"
		elif module_variant "$v"; then
			step "vm $v: $r's upstream ftracetest kprobe+dynevent on the module" bash "$ROOT/scripts/ftracetest.sh" "$v"
		else
			step "vm $v: $r's upstream ftracetest kprobe+dynevent on $c with the $r series" \
				bash "$ROOT/scripts/ftracetest.sh" "$v"
		fi ;;
	ftcore)
		step "vm $v: $(first_release "$v" || echo "$r's ")upstream ftracetest event+filter+trigger give the pristine kernel's results (patch 0007)" \
			bash "$ROOT/scripts/ftracetest.sh" --core "$v" ;;
	tools)
		if module_variant "$v"; then
			step "vm $v: client tools" bash "$ROOT/scripts/tools.sh" "$v"
		else
			step "vm $v: client tools on $c" bash "$ROOT/scripts/tools.sh" "$v"
		fi ;;
	race)
		# Return probes on vfs_read defined, enabled, disabled and removed
		# while both CPUs call it, on a QEMU whose multi-threaded TCG runs
		# them truly in parallel and keeps x86's cross-modifying-code rule
		# (NOTES.md, "The kretprobe oops": QEMU 7.2 oopses C alone here); on
		# a debug kernel under KASAN (with vmalloc), lockdep and kmemleak.
		if module_variant "$v"; then
			step "vm $v: return probes while vfs_read is patched, vCPUs in parallel (QEMU 10)" \
				bash "$ROOT/scripts/vm.sh" --fixed-qemu --timeout "$arg" --log "$ROOT/build/results/retprobe_race-$v.log" "$v" -- \
				'sh /rkpe/guest/retprobe_race.sh define 60'
		else
			# The same race on C alone, always booted (a stress, not an
			# answer to replay).
			step "vm $v: return probes while vfs_read is patched, vCPUs in parallel (QEMU 10), C alone" \
				env RKPE_C_CACHE=0 bash "$ROOT/scripts/vm.sh" --fixed-qemu --c-only --timeout "$arg" \
				--log "$ROOT/build/results/retprobe_race-$v.log" "$v" -- 'sh /rkpe/guest/retprobe_race.sh define 60'
		fi ;;
	oracle)
		step "vm $v: $c answers still match tests/vectors/c-ref$(variant_suffix "$v").txt" \
			bash "$ROOT/scripts/oracle.sh" verify "$v" ;;
	diff)
		step "vm $v: differential, $c vs module on the same specs" bash "$ROOT/scripts/differential.sh" "$v" ;;
	hostile)
		p=$(variant_partner "$v" test)
		have "$p" || return 0
		step "vm $p+${v#"$(variant_arch "$v")"-}: 20,000 hostile lines, $c as the oracle" bash "$ROOT/scripts/hostile.sh" "$v" ;;
	benchvm)
		# Counted under -icount: instructions, whatever else the host runs.
		step "vm $v: hit cost module/$c under -icount, at most 2% above tests/bench/ratios$(variant_suffix "$v").txt" \
			bash "$ROOT/scripts/bench-vm.sh" --check "$v" ;;
	benchcreate)
		step "vm $v: defining a probe, plain and with BTF, takes the module at most $c's instructions (-icount)" \
			bash "$ROOT/scripts/bench-create.sh" --check "$v" ;;
	loadlock)
		# One boot for both (a debug boot takes ~15 s): lockdown last, since it
		# cannot be lifted, and kmemleak's check before it (debugfs is closed
		# once locked down).
		step "vm $v: module load/unload, KUnit doctests; then lockdown" vmdebug "$v" module_load 900 \
			'module_load.sh; a=$?; sh /rkpe/guest/kmemleak.sh || a=1; sh /rkpe/tests/vm/lockdown.sh && exit $a' ;;
	stress)
		# On QEMU 10, both vCPUs truly in parallel: QEMU 7.2's multi-threaded
		# TCG oopses C's kprobe events alone here (NOTES.md, "The kretprobe
		# oops").
		step "vm $v: stress, both CPUs in parallel (QEMU 10)" vmdebug --fixed-qemu "$v" stress 900 stress.sh 20 ;;
	racebroken)
		# And the race stage is not blind: on a module whose return-probe
		# removal frees too early, the same race fails, with KASAN's report.
		step "vm $v: the race stage fails on a deliberately broken module (a return probe freed before its grace period)" \
			bash "$ROOT/scripts/race-broken.sh" ;;
	failslab)
		# Under fault injection the tracing and kprobes cores themselves WARN
		# (tracepoint_probe_unregister(), disarm_kprobe_ftrace(), the same for
		# C's kprobe events); those two and no other warning are let through
		# (tests/vm/failslab.sh), at whatever line the series puts them.
		step "vm $v: fault injection (failslab) over every write" \
			vmdebug --allow-warning ' at kernel/(tracepoint\.c:[0-9]+ tracepoint_probe_unregister|kprobes\.c:[0-9]+ disarm_kprobe_ftrace)\+' \
			"$v" failslab 900 failslab.sh ;;
	*) die "check.sh: no stage token $2 (scripts/variants.tsv)" ;;
	esac
}

# The debug kernel: every VM test of `test` again under KASAN, lockdep and
# the other debug checks (scripts/vm.sh fails a run on any splat and, here, on
# a kmemleak report naming the module), then stress, fault injection and
# lockdown, which need this kernel.
vmdebug() { # [--fixed-qemu] [--allow-warning ERE] VARIANT name timeout script args...
	local opts=()
	[ "$1" = --fixed-qemu ] && { opts+=("$1"); shift; }
	[ "$1" = --allow-warning ] && { opts+=("$1" "$2"); shift 2; }
	local v=$1 name=$2 t=$3; shift 3
	bash "$ROOT/scripts/vm.sh" "${opts[@]}" --timeout "$t" --log "$ROOT/build/results/$name-$v.log" "$v" -- "sh /rkpe/tests/vm/$*"
}
# A lane: its stages rows in table order, each row's tokens in order, each
# once its variant is built. The rows are read first and the stages read
# /dev/null: a stage that reads its standard input must not eat the rows.
lane() { # LANE
	local rows row v t toks
	mapfile -t rows < <(stage_rows "$1")
	for row in "${rows[@]}"; do
		read -r _ v toks <<< "$row"
		selected "$v" || continue
		have "$v" || continue
		for t in $toks; do vm_stage "$v" "$t" < /dev/null; done
	done
}
lane_variants() { stage_rows "$1" | while read -r l v toks; do selected "$v" && echo "$v"; done | tr '\n' ' '; }

if [ $list = 1 ]; then
	main_sequence
	LANE=a lane a
	LANE=b lane b
	exit 0
fi
exec 3>&1 # progress lines (scripts/stage.sh)
LANE=a lane a < /dev/null > "$R/lane-a.log" 2>&1 &
pa=$!
LANE=b lane b < /dev/null > "$R/lane-b.log" 2>&1 &
pb=$!
# The builds, at the lowest priority from here on (the lanes keep theirs).
renice -n 19 -p $$ > /dev/null

main_sequence
touch "$R/builds-over"
echo "=== the builds are over, minute $(( ($(date +%s) - CHECK_T0) / 60 )); the lanes go on"

wait $pa; echo "=== lane A ($(lane_variants a)in scripts/variants.tsv's order):"; cat "$R/lane-a.log"
wait $pb; echo "=== lane B ($(lane_variants b)in scripts/variants.tsv's order):"; cat "$R/lane-b.log"

passed=$(grep -c '^ok ' "$R/outcomes") failed=$(grep -c '^FAILED ' "$R/outcomes")
[ -s "$R/reasons" ] && cat "$R/reasons"
sed -n 's/^FAILED /failed: /p' "$R/outcomes"
replayed=$(cat "$R"/stage-*.out | grep -c "^vm: C's run replayed from ")
echo "check: C alone (ref): $replayed run(s) replayed from the cache (RKPE_C_CACHE=0 boots them all)"
# Guests booted once more after an emulator fault (vm.sh): how many, and
# where, so that a growing count is seen.
while IFS='|' read -r mark what; do
	echo "check: $(cat "$R"/stage-*.out | grep -c "^$mark") run(s) booted again after $what (an emulator fault, vm.sh)"
	grep -l "^$mark" "$R"/stage-*.out 2>/dev/null | sed 's/^/check:   in /' || true
done <<'EOF2'
vm: the guest lost its timer interrupts|the guest lost its timer interrupts
vm: QEMU ended by signal|QEMU itself crashed
EOF2
echo "check: $passed passed, $failed failed"
[ "$failed" = 0 ]
