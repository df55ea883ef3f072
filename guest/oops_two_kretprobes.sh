#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Reproducer for the oops seen with two kretprobes on vfs_read (NOTES.md,
# session 3): C's kprobe_events only, no module. Two return probes and an
# entry probe on vfs_read, dd on both CPUs, the events enabled 0.2 s per
# round. Usage (ref kernel): oops_two_kretprobes.sh ROUNDS
rounds=${1:-1000}
cd /sys/kernel/tracing || exit 1
load() { i=0; while [ $i -lt 200 ]; do dd if=/etc/passwd of=/dev/null bs=16 count=2 2>/dev/null; i=$((i + 1)); done; }
r=0
while [ $r -lt "$rounds" ]; do
	echo 'p:c0 vfs_read' >> kprobe_events
	echo 'r:c1 vfs_read $retval' >> kprobe_events
	echo 'r:c2 vfs_read $retval' >> kprobe_events
	load & load &
	echo 1 > events/kprobes/enable
	sleep 0.2
	echo 0 > events/kprobes/enable
	wait
	echo > kprobe_events
	r=$((r + 1))
done
echo "oops_two_kretprobes: $r rounds, no oops"
