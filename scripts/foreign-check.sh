#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Another Rust module cannot use what the kernel keeps from modules through
# the kernel crate: an out-of-tree module named `foreign` that calls each
# kernel-crate function the module uses to reach such a C function
# (tests/foreign/calls.txt: the C symbol, a tab, the Rust that reaches it)
# must fail to build, modpost refusing every one of those C symbols, on
# the given variant's built kernel (run after scripts/kernel.sh VARIANT).
# Also:
# - the same module with none of those calls builds (the harness can build
#   a module at all: the refusals are the symbols', not the harness's);
# - every symbol the built rust_kprobe_events.ko takes from the namespace
#   `module:rust_kprobe_events` has a line in calls.txt (the list cannot
#   fall behind what the module needs).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
variant=${1:?usage: foreign-check.sh VARIANT}
variant_build_env "$variant"
# calls.txt names the kretprobe trampoline by the architecture's symbol.
case "$arch" in
arm64) tramp=__kretprobe_trampoline ;;
*) tramp=arch_rethook_trampoline ;;
esac
calls=$(mktemp)
sed "s/^ARCH_KRETPROBE_TRAMPOLINE\t/$tramp\t/" "$ROOT/tests/foreign/calls.txt" >"$calls"
ko=$out/kernel/trace/rust_kprobe_events/rust_kprobe_events.ko
[ -f "$ko" ] || die "no $ko: build $variant first"

work=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work" "$calls"' EXIT

# foreign.rs with the calls of calls.txt (WITH=1) or without them: each
# call in a function of its own, called where init cannot reach it at run
# time (the module is never loaded; the calls only have to be built).
gen() { # DIR WITH
	mkdir -p "$1"
	echo 'obj-m := foreign.o' >"$1/Kbuild"
	{
		cat <<-'EOF'
		// SPDX-License-Identifier: GPL-2.0
		//! Not rust_kprobe_events: what another module reaches through the kernel crate.
		#![allow(unused_imports, unused_variables, unreachable_code, clippy::all)]
		use kernel::prelude::*;
		module! {
		    type: Foreign,
		    name: "foreign",
		    description: "Calls the kernel crate's wrappers of functions kept from modules",
		    license: "GPL",
		}
		struct Foreign;
		EOF
		cat "$ROOT/tests/foreign/items.rs"
		n=0
		while IFS=$'\t' read -r sym code cond; do
			case "$sym" in '' | '#'*) continue ;; esac
			n=$((n + 1))
			if [ "$2" = 1 ]; then
				if [ -n "$cond" ]; then
					code="#[cfg(all($(echo $cond | sed 's/ /, /g')))] { $code }"
				fi
				printf '#[inline(never)]\nfn call_%d() {\n    // %s\n    %s\n}\n' "$n" "$sym" "$code"
			else
				printf '#[inline(never)]\nfn call_%d() {}\n' "$n"
			fi
		done <"$calls"
		echo 'impl kernel::Module for Foreign {'
		echo '    fn init(_module: &'"'"'static ThisModule) -> Result<Self> {'
		echo '        if core::hint::black_box(false) {'
		for i in $(seq 1 "$n"); do echo "            call_$i();"; done
		echo '        }'
		echo '        Ok(Foreign)'
		echo '    }'
		echo '}'
	} >"$1/foreign.rs"
}
build() { # DIR
	make -C "$tree" O="$out" ARCH="$arch" LLVM="$llvm" M="$1" -j"$(nproc)" modules >"$1/log" 2>&1
}

gen "$work/control" 0
if ! build "$work/control"; then
	cat "$work/control/log"
	die "foreign: the module without the calls does not build (the harness is broken)"
fi
gen "$work/calls" 1
if build "$work/calls"; then
	die "foreign: a module not named rust_kprobe_events builds with every call of tests/foreign/calls.txt"
fi
log=$work/calls/log
# modpost runs only once the Rust has compiled: a compile error is the
# harness's (or calls.txt's) fault, not a refusal.
if grep -q '^error' "$log"; then
	cat "$log"
	die "foreign: calls.txt does not compile on $variant"
fi
fail=0
n=0
while IFS=$'\t' read -r sym code cond; do
	case "$sym" in '' | '#'*) continue ;; esac
	missing=""
	for c in $cond; do
		grep -qx "$c=y" "$out/.config" || missing+=" $c"
	done
	if [ -n "$missing" ]; then
		echo "foreign: $sym: not built on $variant (no$missing)"
		continue
	fi
	if awk -F'\t' -v s="$sym" '$2 == s && $5 == "" { f = 1 } END { exit !f }' "$out/Module.symvers"; then
		echo "foreign: $sym is exported to all modules on $variant: nothing to refuse"
		continue
	fi
	n=$((n + 1))
	# 7.3: "foreign.ko: module uses symbol 'SYM' from namespace 'module:...'",
	# "foreign.ko: symbol 'SYM' undefined!"; 6.12: "module foreign uses
	# symbol SYM from namespace module:...", "\"SYM\" [.../foreign.ko] undefined!".
	if grep -qE "^ERROR: modpost: .*uses symbol '?$sym'? from namespace '?module:" "$log" ||
		grep -qE "^ERROR: modpost: (.*foreign\.ko: symbol '$sym' undefined|\"$sym\" \[.*foreign\.ko\] undefined)" "$log"; then
		:
	else
		echo "foreign: $sym ($code) is not refused to a module named foreign"
		fail=1
	fi
done <"$calls"
# Anything else modpost refused is fine (an inlined wrapper may reach more
# than one such symbol); show it for the record.
grep -E '^ERROR: modpost' "$log" | sed 's/^/foreign: /' || true

# What the module takes from its own namespace, each with a line in calls.txt.
mine=$(awk -F'\t' '$5 == "module:rust_kprobe_events" { print $2 }' "$out/Module.symvers" | sort -u)
used=$(llvm-nm-19 -u "$ko" | awk '{ print $2 }' | sort -u)
listed=$(grep -v '^#' "$calls" | cut -f1 | sort -u)
for sym in $(comm -12 <(echo "$mine") <(echo "$used")); do
	if ! grep -qx "$sym" <<<"$listed"; then
		echo "foreign: rust_kprobe_events.ko uses $sym (module:rust_kprobe_events) with no line in tests/foreign/calls.txt"
		fail=1
	fi
done
[ "$fail" = 0 ] || exit 1
echo "foreign: $n kernel-crate calls refused to another module on $variant; the module without them builds"
