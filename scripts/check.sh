#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make check`: every test, host first, then the VMs. Each stage's outcome is
# counted; the last line is "check: N passed, N failed" and the exit status is
# non-zero if anything failed.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

passed=0 failed=0 failures=()
step() { # name command...
	local name=$1; shift
	local t0=$(date +%s)
	echo "=== $name"
	if "$@"; then
		passed=$((passed + 1)); echo "=== $name: ok ($(( $(date +%s) - t0 ))s)"
	else
		failed=$((failed + 1)); failures+=("$name"); echo "=== $name: FAILED ($(( $(date +%s) - t0 ))s)"
	fi
}

no_unsafe_in_src() {
	# STYLE.md: the module under src/ is safe Rust; all unsafe lives in rust/.
	# Code, not comments: `unsafe` before any `/` on the line.
	if grep -rnE '^[^/]*\bunsafe\b' "$ROOT/src" --include='*.rs'; then
		echo "unsafe code in src/ (see above)"; return 1
	fi
}

bash "$ROOT/scripts/deps.sh" || { echo "check: 0 passed, 1 failed"; exit 1; }

step "host: cargo test" cargo test --manifest-path "$ROOT/Cargo.toml" --locked
step "host: rustfmt" cargo fmt --manifest-path "$ROOT/Cargo.toml" --check
rustfmt_rust() { # the kernel-crate additions, with the kernel's rustfmt settings
	find "$ROOT/rust" -name '*.rs' -print0 | xargs -0 -r rustfmt --edition 2021 --config-path "$ROOT/.rustfmt.toml" --check
}
step "host: rustfmt rust/" rustfmt_rust
step "host: fuzz target builds" cargo check --quiet --manifest-path "$ROOT/fuzz/Cargo.toml" --locked
step "host: no unsafe in src/" no_unsafe_in_src
step "build: test kernel" bash "$ROOT/scripts/kernel.sh" test
step "build: ref kernel" bash "$ROOT/scripts/kernel.sh" ref
step "build: kernel crate and module clippy-clean" bash "$ROOT/scripts/clippy.sh"
if [ -e "$ROOT/build/test/bzImage" ]; then
	step "vm test: module load/unload, KUnit doctests" \
		bash "$ROOT/scripts/vm.sh" --timeout 300 --log "$ROOT/build/results/module_load-test.log" test -- \
		'sh /rkpe/tests/vm/module_load.sh'
	step "vm test: own .tc tests" bash "$ROOT/scripts/owntests.sh" test
	step "vm test: ftracetest kprobe+dynevent" bash "$ROOT/scripts/ftracetest.sh" test
	step "vm test: client tools" bash "$ROOT/scripts/tools.sh" test
fi
if [ -e "$ROOT/build/ref/bzImage" ]; then
	step "vm ref: ftracetest kprobe+dynevent" bash "$ROOT/scripts/ftracetest.sh" ref
	step "vm ref: own .tc tests marked c-too, on the C implementation" bash "$ROOT/scripts/owntests.sh" ref
	step "vm ref: C answers still match tests/vectors/c-ref.txt" bash "$ROOT/scripts/oracle.sh" verify
	step "vm ref: differential, C vs module on the same specs" bash "$ROOT/scripts/differential.sh"
	step "vm ref: client tools on C" bash "$ROOT/scripts/tools.sh" ref
fi
if [ -e "$ROOT/build/test/bzImage" ] && [ -e "$ROOT/build/ref/bzImage" ]; then
	step "vm test+ref: 20,000 hostile lines, C as the oracle" bash "$ROOT/scripts/hostile.sh"
fi

# The debug variant: every VM test of `test` again under KASAN, lockdep and
# the other debug checks (scripts/vm.sh fails a run on any splat and, here, on
# a kmemleak report naming the module), then stress and lockdown, which
# need this kernel.
step "build: debug kernel" bash "$ROOT/scripts/kernel.sh" debug
if [ -e "$ROOT/build/debug/bzImage" ]; then
	vmdebug() { # name timeout script args...
		local name=$1 t=$2; shift 2
		bash "$ROOT/scripts/vm.sh" --timeout "$t" --log "$ROOT/build/results/$name-debug.log" debug -- "sh /rkpe/tests/vm/$*"
	}
	step "vm debug: module load/unload, KUnit doctests" vmdebug module_load 600 module_load.sh
	step "vm debug: own .tc tests" bash "$ROOT/scripts/owntests.sh" debug
	step "vm debug: ftracetest kprobe+dynevent" bash "$ROOT/scripts/ftracetest.sh" debug
	step "vm debug: stress, both CPUs" vmdebug stress 900 stress.sh 30
	# tests/vm/failslab.sh is not run here yet: under fault injection the
	# tracing and kprobes cores themselves warn (tracepoint.c:406,
	# kprobes.c:1131) and absorb failures; see NOTES.md (session 4).
	step "vm debug: lockdown" vmdebug lockdown 300 lockdown.sh
fi

[ ${#failures[@]} = 0 ] || printf 'failed: %s\n' "${failures[@]}"
echo "check: $passed passed, $failed failed"
[ "$failed" = 0 ]
