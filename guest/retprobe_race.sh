#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Return probes on a hot function while its text is patched: `dd` on both
# CPUs the whole time, kprobe events defined, enabled, disabled and removed
# on vfs_read, for SECONDS of guest time. On C's kprobe events (ref, with
# --c-only) or the module's (test: loaded here). Under Debian 12's QEMU 7.2
# with multi-threaded TCG, `define` oopsed C alone in 3 of 4 runs of a
# minute (RIP 0: README, "The kretprobe oops"); make check runs it on QEMU 10
# (vm.sh --fixed-qemu), where both CPUs run in parallel, on test, on ref (C
# alone) and on debug (KASAN), and it must pass: every write succeeds and
# the return probe fires in at least half the rounds (it fired in all of
# them in every run measured). On a module broken on purpose
# (scripts/race-broken.sh) it must fail.
# Usage: retprobe_race.sh MODE SECONDS
#   define  define c0/c1/c2 (p, r, r) on vfs_read, enable 0.2 s, disable,
#           remove, again (the reproducer)
#   toggle  define once; enable 0.2 s, disable 0.2 s, again (no removal)
#   steady  define once, enable once: no text patched while the load runs
#   ret1    one return probe toggled, no entry probe
#   entry1  one entry probe toggled, no return probe
#   ftrace  the function tracer on vfs_read toggled, no kprobes at all
mode=${1:?mode}
secs=${2:-60}
cd /sys/kernel/tracing || exit 1
[ -e kprobe_events ] || modprobe rust_kprobe_events || exit 1
stop=/tmp/retprobe_race.stop
rm -f $stop
load() { while [ ! -e $stop ]; do dd if=/etc/passwd of=/dev/null bs=16 count=2 2>/dev/null; done; }
now() { cut -d. -f1 /proc/uptime; }
fail=0
w() { # TEXT FILE: every write must succeed
	echo "$1" >> "$2" || { echo "retprobe_race: writing '$1' to $2 failed"; fail=1; }
}
define3() {
	w 'p:c0 vfs_read' kprobe_events
	w 'r:c1 vfs_read $retval' kprobe_events
	w 'r:c2 vfs_read $retval' kprobe_events
}
# Rounds in which the return probe c1 fired (its hits in kprobe_profile).
fired=0
count() { awk '$1 == "c1" && $2 > 0 { f = 1 } END { exit !f }' kprobe_profile && fired=$((fired + 1)); }
load & load &
end=$(($(now) + secs))
n=0
case $mode in
steady) define3; echo 1 > events/kprobes/enable ;;
toggle) define3 ;;
ret1) w 'r:c1 vfs_read $retval' kprobe_events ;;
entry1) w 'p:c0 vfs_read' kprobe_events ;;
ftrace) w vfs_read set_ftrace_filter ;;
esac
while [ "$(now)" -lt $end ]; do
	case $mode in
	define)
		define3
		w 1 events/kprobes/enable; sleep 0.2
		w 0 events/kprobes/enable
		count
		echo > kprobe_events || { echo "retprobe_race: removing the probes failed"; fail=1; } ;;
	toggle|ret1|entry1)
		w 1 events/kprobes/enable; sleep 0.2
		w 0 events/kprobes/enable; sleep 0.2 ;;
	ftrace)
		w function current_tracer; sleep 0.2
		w nop current_tracer; sleep 0.2 ;;
	steady) sleep 1 ;;
	esac
	n=$((n + 1))
done
touch $stop
wait
[ -d events/kprobes ] && echo 0 > events/kprobes/enable
echo > kprobe_events
if [ $mode = define ] && [ $((fired * 2)) -lt $n ]; then
	echo "retprobe_race: the return probe fired in only $fired of $n rounds"; fail=1
fi
echo "retprobe_race: $mode: $n rounds in $secs s (the return probe fired in $fired)$([ $fail = 0 ] && echo ', no oops, no failed write' || echo ': FAILED')"
exit $fail
