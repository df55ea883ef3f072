#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs in a `debug` VM of its own (lockdown cannot be lifted): once the kernel
# is locked down for confidentiality, the module's files refuse to open
# (LOCKDOWN_TRACEFS, probes_open() in trace_kprobe.c:1330, profile_open()
# :1396) and a file opened before cannot register new kprobes
# (LOCKDOWN_KPROBES, __register_trace_kprobe() :498), with EPERM as in C.
# Removing a probe and enabling or disabling an existing one through files
# opened before stay possible, as in C (neither checks lockdown).
T=/sys/kernel/tracing
L=/sys/kernel/security/lockdown
fail=0
check() { # description command...
	d=$1; shift
	if "$@" >/tmp/out 2>&1; then echo "ok: $d"; else echo "FAILED: $d"; sed 's/^/    /' /tmp/out; fail=1; fi
}
eperm() { # the command fails, saying "Operation not permitted"
	! "$@" 2>/tmp/err && grep -q 'Operation not permitted' /tmp/err
}
mountpoint -q /sys/kernel/security || mount -t securityfs none /sys/kernel/security
[ -e $L ] || { echo "FAILED: no $L (SECURITYFS, SECURITY_LOCKDOWN_LSM)"; exit 1; }
grep -q '\[none\]' $L || { echo "FAILED: the kernel is locked down already: $(cat $L)"; exit 1; }
modprobe rust_kprobe_events || exit 1
echo 'p:keep vfs_read a=%di' >> $T/kprobe_events
echo 'p:gone vfs_write' >> $T/kprobe_events
exec 3>>$T/kprobe_events 4>$T/events/kprobes/keep/enable
check "a probe is defined through the file opened before lockdown" sh -c 'echo "p:before vfs_read" >&3'

echo confidentiality > $L
check "locked down for confidentiality" grep -q '\[confidentiality\]' $L
check "kprobe_events does not open for reading: EPERM" eperm cat $T/kprobe_events
check "kprobe_events does not open for writing: EPERM" eperm sh -c "echo 'p:new vfs_read' >> $T/kprobe_events"
check "kprobe_events does not open with O_TRUNC: EPERM" eperm sh -c ": > $T/kprobe_events"
check "kprobe_profile does not open: EPERM" eperm cat $T/kprobe_profile
check "a new probe through the open file: EPERM (LOCKDOWN_KPROBES)" eperm sh -c 'echo "p:new vfs_read" >&3'
check "a new return probe through the open file: EPERM" eperm sh -c 'echo "r:newr vfs_read" >&3'
check "removal through the open file works" sh -c 'echo "-:gone" >&3'
check "enabling through the open enable file works" sh -c 'echo 1 >&4'
check "disabling through the open enable file works" sh -c 'echo 0 >&4'
exec 3>&- 4>&-
check "rmmod" rmmod rust_kprobe_events
exit $fail
