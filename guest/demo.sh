#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# `make run`: load the module and show kprobe events at work, or say plainly
# what the module cannot do yet.
T=/sys/kernel/tracing
say() { printf '\n### %s\n' "$*"; }
run() { printf '$ %s\n' "$*"; sh -c "$*"; }

say "kernel $(uname -r), $(nproc) CPUs; loading the module"
run modprobe rust_kprobe_events || exit 1
run "lsmod | grep rust_kprobe_events"
run "dmesg | grep rust_kprobe_events"

if [ ! -e $T/kprobe_events ]; then
	say "not there yet: the module does not provide $T/kprobe_events yet,"
	echo "    so probes cannot be defined, enabled or traced with it today."
	echo "    (the C implementation of the same interface is in the 'ref' kernel: make shell VARIANT=ref)"
	run rmmod rust_kprobe_events
	exit 0
fi

say "define a probe on do_sys_openat2 and a return probe on it"
run "echo 'p:myprobe do_sys_openat2 dfd=%di path=+0(%si):string' >> $T/kprobe_events"
run "echo 'r:myret do_sys_openat2 ret=\$retval' >> $T/kprobe_events"
run "cat $T/kprobe_events"
run "cat $T/events/kprobes/myprobe/format"
say "enable, trigger, read trace_pipe"
run "echo 1 > $T/events/kprobes/enable"
cat /etc/passwd >/dev/null
cat /no/such/file 2>/dev/null
run "echo 0 > $T/events/kprobes/enable"
run "timeout 2 cat $T/trace_pipe | head -8"
run "cat $T/kprobe_profile"
say "remove the probes and unload"
run "echo > $T/kprobe_events"
run rmmod rust_kprobe_events
