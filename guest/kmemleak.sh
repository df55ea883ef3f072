#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Run by scripts/vm.sh after the command on kernels with kmemleak (`debug`):
# two scans (an object must stay unreferenced past its minimum age of 5 s to
# be reported), then fail if a reported leak was allocated by the module or
# the kernel crate's abstractions (their symbols in the backtrace). Leaks of
# the rest of the kernel are shown but do not fail the run.
K=/sys/kernel/debug/kmemleak
[ -e $K ] || exit 0
# Locked down (tests/vm/lockdown.sh), debugfs refuses: nothing to scan.
cat $K > /dev/null 2>&1 || { echo "kmemleak: not readable (lockdown?)"; exit 0; }
sleep 6
echo scan > $K
echo scan > $K
cat $K > /tmp/kmemleak
n=$(grep -c '^unreferenced object' /tmp/kmemleak)
echo "kmemleak: $n unreferenced objects"
# Rust symbols are mangled: the module's crate is 18rust_kprobe_events, the
# kernel crate's items are under 6kernel (7kprobes, 7tracefs, 11trace_event,
# 8kallsyms ...).
if grep -Eq 'rust_kprobe_events|6kernel(7kprobes|7tracefs|11trace_event|8kallsyms|12module_param)' /tmp/kmemleak; then
	echo "kmemleak: FAILED: leaks from the module or its kernel-crate abstractions:"
	cat /tmp/kmemleak
	exit 1
fi
[ "$n" = 0 ] || head -40 /tmp/kmemleak
exit 0
