#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Stress for the oops seen once (NOTES.md): kprobes and kretprobes of both
# implementations on vfs_read, `dd` on both CPUs, events enabled and
# disabled meanwhile. Usage: stress_kretprobes.sh ROUNDS [C|RUST|BOTH]
# Runs on the ref kernel.
rounds=${1:-20}
which=${2:-BOTH}
modprobe rust_kprobe_events || exit 1
cd /sys/kernel/tracing || exit 1
define() {
	case $which in C|BOTH)
		echo 'p:c0 vfs_read' >> kprobe_events
		echo 'r:c1 vfs_read $retval' >> kprobe_events ;;
	esac
	case $which in RUST|BOTH)
		echo 'p:r0 vfs_read' >> rkprobe_events
		echo 'r:r1 vfs_read $retval' >> rkprobe_events ;;
	esac
}
load() {
	i=0
	while [ $i -lt 200 ]; do
		dd if=/etc/passwd of=/dev/null bs=16 count=2 2>/dev/null
		i=$((i + 1))
	done
}
r=0
while [ $r -lt "$rounds" ]; do
	define
	load & load &
	for g in kprobes rkprobes; do
		[ -d events/$g ] && echo 1 > events/$g/enable
	done
	sleep 0.2
	for g in rkprobes kprobes; do
		[ -d events/$g ] && echo 0 > events/$g/enable
	done
	wait
	echo > kprobe_events
	echo > rkprobe_events
	r=$((r + 1))
done
echo "stress: $rounds rounds done"
