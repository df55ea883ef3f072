#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Rebuild the kernel crate (with our rust/ additions) and the module with the
# kernel's lint set plus clippy (`CLIPPY=1`) on the test tree (or the given
# variant: arm64-test, test-7.3), and fail on any warning. Run after
# scripts/kernel.sh.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
variant=${1:-$(variants kind=test | head -1)} # or arm64-test, test-7.3
variant_build_env "$variant"
lock_build_cache
# Make rebuilds the kernel crate and the module when their objects are gone:
# removed here, in this variant's out-VARIANT only (touching the shared tree's sources would
# make every variant rebuild them, and relink, on its next build).
rm -f "$out/rust/kernel.o" "$out/kernel/trace/rust_kprobe_events/rust_kprobe_events.o"
log=$(mktemp)
make -s -C "$tree" O="$out" ARCH="$arch" LLVM="$llvm" CLIPPY=1 -j"$(nproc)" rust/ kernel/trace/rust_kprobe_events/ >"$log" 2>&1 || { cat "$log"; exit 1; }
if grep -E '^(warning|error)' "$log"; then
	cat "$log"
	echo "clippy: warnings in the kernel crate or the module"
	exit 1
fi
# Leave the objects as a plain build makes them.
rm -f "$out/rust/kernel.o" "$out/kernel/trace/rust_kprobe_events/rust_kprobe_events.o"
make -s -C "$tree" O="$out" ARCH="$arch" LLVM="$llvm" -j"$(nproc)" rust/ kernel/trace/rust_kprobe_events/ >/dev/null 2>&1
echo "clippy: kernel crate and module build without warnings ($variant)"
