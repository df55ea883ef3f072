#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# scripts/differential.sh's guest side, on the ref kernel: with the module
# loaded, guest/oracle.sh feeds SPECS to C's kprobe_events, then to the
# module's rkprobe_events, and guest/trace_diff.sh traces TRACE_SPECS with
# both. Each output is printed whole after its runs, in sections "=== C",
# "=== RUST" (ended by "=== DONE") and "=== TRACE" (to the end).
#   differential.sh SPECS[,SPECS...] TRACE_SPECS...  (the specs files,
#   comma-separated, and the trace specs files, each set one after the
#   other: scripts/differential.sh adds the BTF trace specs on a BTF kernel)
# shellcheck disable=SC2046 # the list is split on purpose
cat $(echo "${1:?specs file}" | tr , ' ') > /tmp/specs.txt || exit 1
specs=/tmp/specs.txt
shift
[ $# -gt 0 ] || { echo "differential.sh: no trace specs file"; exit 1; }
cat "$@" > /tmp/trace-specs.txt
trace_specs=/tmp/trace-specs.txt
# On arm64 the specs name arm64's argument and return registers where they
# name x86-64's (%di %si %dx %cx %r8 %r9 -> %x0..%x5, %ax -> %x0), and its
# instruction pointer (%ip -> %pc); the other x86 names stay, and both
# implementations must refuse them alike.
if [ "$(uname -m)" = aarch64 ]; then
	for f in "$specs" "$trace_specs"; do
		sed -e 's/%di\b/%x0/g; s/%si\b/%x1/g; s/%dx\b/%x2/g; s/%cx\b/%x3/g' \
			-e 's/%r8\b/%x4/g; s/%r9\b/%x5/g; s/%ax\b/%x0/g; s/%ip\b/%pc/g' "$f" > "/tmp/$(basename "$f").arm64"
	done
	specs=/tmp/$(basename "$specs").arm64 trace_specs=/tmp/$(basename "$trace_specs").arm64
fi
modprobe rust_kprobe_events || exit 1
sh /rkpe/guest/oracle.sh "$specs" kprobe_events > /tmp/c.txt
sh /rkpe/guest/oracle.sh "$specs" rkprobe_events > /tmp/r.txt
echo "=== C"; cat /tmp/c.txt; echo "=== RUST"; cat /tmp/r.txt; echo "=== DONE"
sh /rkpe/guest/trace_diff.sh "$trace_specs" > /tmp/t.txt 2>&1
echo "=== TRACE"; cat /tmp/t.txt
