#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs in the `debug` VM (FAILSLAB). Fault injection over the module's
# writes: for each operation (create, create a return probe, append a probe to
# an event, remove, enable, disable, create through dynamic_events, truncate),
# fail its 1st, 2nd, 3rd ... slab allocation (/proc/thread-self/fail-nth, only
# the writing task is affected) until the operation needs no more. Every
# attempt must either fail with ENOMEM and leave the state exactly as before
# (probes listed, events, kprobes registered and their state), or
# succeed and leave exactly the state a successful operation leaves. Ends
# with a clean rmmod and modprobe. Prints the count of allocations failed.
#
# Three outcomes are the kernel core's, the same for C's kprobe events, and
# are counted apart rather than failed on (each recognised by its exact
# shape in the snapshot; anything else still fails):
# - "event without a directory": trace_add_event_call() succeeds whatever
#   __add_event_to_tracers() (trace_events.c:4077) meets: a failed
#   trace_create_new_event() is dropped silently (:3315), a failed
#   event_create_dir() only warns ("No memory to create event subsystem",
#   :2598; "Failed to create system directory", :2577; "Could not create
#   tracefs '%s' directory", :2794). The probe is defined, its events/ files
#   missing; it can still be removed.
# - "kprobe left armed": the tracing core ignores the unregister callback's
#   error (trace_events.c, __ftrace_event_enable_disable), and
#   disarm_kprobe_ftrace() WARNs when ftrace cannot allocate (kprobes.c:1131):
#   `disable` succeeds with the kprobe still armed.
# - "truncated, then ENOMEM": probes_open() (trace_kprobe.c:1334-1340)
#   releases every probe, then seq_open() fails; ours opens in that order too.
# The core's WARNs under fault injection (tracepoint.c:406, kprobes.c:1131)
# are let through by scripts/check.sh (vm.sh --allow-warning), no others.
fail=0
T=/sys/kernel/tracing
F=/sys/kernel/debug/failslab
FW=/rkpe/bin/failwrite
KL=/sys/kernel/debug/kprobes/list
[ -d $F ] || { echo "FAILED: no $F (CONFIG_FAILSLAB, FAULT_INJECTION_DEBUG_FS)"; exit 1; }
modprobe rust_kprobe_events || exit 1
# Only fail-nth decides (probability 0); sleeping allocations too; no stack dumps.
echo 0 > $F/probability
echo N > $F/ignore-gfp-wait
echo 0 > $F/verbose

A='x=%di y=+0(%si):u64 s=+0(%di):string c=$comm'
snap() { # the listings, events/fs/*/enable and the kprobes (tests/vm/tracestate.c)
	/rkpe/bin/tracestate
}
reset() {
	echo 0 > $T/events/enable 2>/dev/null
	echo > $T/kprobe_events || { echo "FAILED: cannot clear kprobe_events"; cat $T/error_log; fail=1; }
}
# The operations: set up the state before, and the operation itself as
# failwrite arguments.
setup() {
	reset
	case $1 in
	append|remove|enable) echo "p:fs/a vfs_read $A" >> $T/kprobe_events ;;
	disable) echo "p:fs/a vfs_read $A" >> $T/kprobe_events; echo 1 > $T/events/fs/a/enable ;;
	truncate) echo "p:fs/a vfs_read $A" >> $T/kprobe_events; echo "r:fs/b vfs_write \$retval" >> $T/kprobe_events ;;
	esac
}
op() { # op name n
	case $1 in
	create) $FW $2 $T/kprobe_events "p:fs/a vfs_read $A" ;;
	create_ret) $FW $2 $T/kprobe_events 'r:fs/r vfs_read $retval a=$arg1 s=+0($arg2):ustring' ;;
	append) $FW $2 $T/kprobe_events "p:fs/a vfs_write $A" ;;
	remove) $FW $2 $T/kprobe_events "-:fs/a" ;;
	enable) $FW $2 $T/events/fs/a/enable --write 1 ;;
	disable) $FW $2 $T/events/fs/a/enable --write 0 ;;
	dyn_create) $FW $2 $T/dynamic_events "p:fs/d ksys_read n=%dx s=+0(%si):ustring" ;;
	truncate) $FW $2 $T/kprobe_events --trunc ;;
	esac
}
total=0 core_nodir=0 core_armed=0 core_trunc=0
for o in create create_ret append remove enable disable dyn_create truncate; do
	setup $o; pre=$(snap)
	r=$(op $o 0)
	case "$r" in "ret=OK injected=0") ;; *) echo "FAILED: $o without a fault: $r"; fail=1; continue ;; esac
	post=$(snap)
	[ "$pre" != "$post" ] || { echo "FAILED: $o changed nothing"; fail=1; }
	n=1 failed_here=0 survived=0
	while [ $n -le 400 ]; do
		setup $o
		r=$(op $o $n)
		now=$(snap)
		case "$r" in
		"ret=OK injected=0") break ;;
		"ret=ENOMEM injected=1")
			failed_here=$((failed_here + 1))
			if [ "$now" = "$pre" ]; then :
			elif [ $o = truncate ] && [ "$now" = "$post" ]; then core_trunc=$((core_trunc + 1))
			else echo "FAILED: $o, allocation $n failed: ENOMEM but the state changed:"; echo "$pre" > /tmp/a; echo "$now" > /tmp/b; diff /tmp/a /tmp/b; fail=1
			fi ;;
		"ret=OK injected=1")
			survived=$((survived + 1))
			if [ "$now" = "$post" ]; then :
			elif [ "$now" = "$(echo "$post" | grep -v "^$T/events/")" ] && [ "$o" != append ]; then
				core_nodir=$((core_nodir + 1))
			elif [ $o = disable ] && [ "$now" = "$(echo "$post" | sed 's/\[DISABLED\]//')" ]; then
				core_armed=$((core_armed + 1))
			else
				echo "FAILED: $o, allocation $n failed, the write succeeded, but the state is not a success's:"; echo "$post" > /tmp/a; echo "$now" > /tmp/b; diff /tmp/a /tmp/b; fail=1
			fi ;;
		*)
			echo "FAILED: $o, allocation $n failed: $r (ENOMEM or success expected)"; fail=1
			echo "$pre" > /tmp/a; echo "$now" > /tmp/b; diff /tmp/a /tmp/b ;;
		esac
		n=$((n + 1))
	done
	[ $n -le 400 ] || { echo "FAILED: $o still allocating after 400"; fail=1; }
	echo "$o: $((n - 1)) allocations failed one after another: $failed_here ENOMEM with nothing changed, $survived absorbed"
	total=$((total + n - 1))
done
reset
echo "failslab: $total allocations failed in all; the core's own outcomes: $core_nodir events without a directory, $core_armed kprobes left armed, $core_trunc truncated then ENOMEM"
[ -z "$(cat $KL 2>/dev/null)" ] || { echo "FAILED: kprobes left registered:"; cat $KL; fail=1; }
rmmod rust_kprobe_events || { echo "FAILED: rmmod"; fail=1; }
modprobe rust_kprobe_events && echo 'p:fs/again vfs_read' >> $T/kprobe_events && echo 1 > $T/events/fs/again/enable &&
	cat /proc/version > /dev/null && grep -q ' again ' $T/kprobe_profile &&
	echo 0 > $T/events/fs/again/enable && echo > $T/kprobe_events && rmmod rust_kprobe_events ||
	{ echo "FAILED: the module does not work again after the faults"; fail=1; }
[ $fail = 0 ] && echo "failslab: ok"
exit $fail
