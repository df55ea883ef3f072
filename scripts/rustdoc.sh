#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `make rustdoc` of a test variant's tree (the kernel crate with our rust/
# additions; their docs and intra-doc links) must give no warning: the
# first test variant of scripts/variants.tsv (`test`) unless one is given.
# Run after scripts/kernel.sh VARIANT. The HTML goes to
# out-VARIANT/Documentation/output/rust/.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
variant=${1:-$(variants kind=test | head -1)}
variant_build_env "$variant"
lock_build_cache
# The docs depend on the tree (its key covers every input) and the config:
# a run that passed with the same ones is not repeated.
key=$(cat "$tree/.key" "$out/.config" | sha256sum | cut -d' ' -f1)
if [ "$(cat "$CACHE/rustdoc-passed" 2>/dev/null)" = "$key" ]; then
	echo "rustdoc: passed before on the same tree and config; not rebuilt"
	exit 0
fi
log=$(mktemp)
make -s -C "$tree" O="$out" LLVM="$llvm" -j"$(nproc)" rustdoc >"$log" 2>&1 || { cat "$log"; exit 1; }
if grep -E '^(warning|error)' "$log"; then
	cat "$log"
	echo "rustdoc: warnings"
	exit 1
fi
echo "$key" > "$CACHE/rustdoc-passed"
echo "rustdoc: the kernel crate's documentation builds without warnings"
