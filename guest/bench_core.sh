#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The tracing core's record path, C alone (scripts/bench-core.sh runs this
# in a pristine kernel and in the series' `ref` kernel, under -icount): the
# cost of each event below on a getppid call, in guest instructions per
# call. Prints "CORE|<row>|<ns per getppid call>".
B=/rkpe/bin/getppid_loop
N=${1:-100000}
case $(uname -m) in
aarch64) SYS=__arm64_sys_getppid ;;
*) SYS=__x64_sys_getppid ;;
esac
cd /sys/kernel/tracing || exit 1
echo 1 > tracing_on
echo 0 > options/stacktrace
row() { echo "CORE|$1|$($B $N)"; }
# A kprobe event `bench` of C on the syscall: kprobe ARGS.
kp() {
	echo > kprobe_events
	echo "p:bench $SYS$1" >> kprobe_events || { echo "CORE|$2|rejected"; exit 1; }
}
ev=events/kprobes/bench
row none
# A static event: the syscall's entry event (a tracepoint).
sc=events/syscalls/sys_enter_getppid
if [ -d $sc ]; then
	echo 1 > $sc/enable
	row 'static: syscalls/sys_enter_getppid'
	echo 'common_pid == 0' > $sc/filter
	row 'static: syscalls/sys_enter_getppid, filter rejects'
	echo 0 > $sc/filter
	echo 0 > $sc/enable
fi
kp '' 'kprobe: p'
echo 1 > $ev/enable
row 'kprobe: p'
echo 0 > tracing_on
row 'kprobe: p, tracing_on=0'
echo 1 > tracing_on
echo 1 > options/stacktrace
row 'kprobe: p, options/stacktrace'
echo 0 > options/stacktrace
echo 0 > $ev/enable
kp ' a=%di b=%si c=%dx d=%cx' 'kprobe: p a=%di b=%si c=%dx d=%cx'
echo 1 > $ev/enable
row 'kprobe: p a=%di b=%si c=%dx d=%cx'
echo 0 > $ev/enable
# The rest on the empty event: filters and triggers on common_pid (no
# task here has pid 0), so that the rows measure the record path alone.
kp '' 'kprobe: p'
echo 1 > $ev/enable
echo 'common_pid == 0' > $ev/filter
row 'kprobe: p, filter rejects'
echo 'common_pid != 0' > $ev/filter
row 'kprobe: p, filter takes'
echo 0 > $ev/filter
# An unconditional trigger (run before the reserve), then a conditional
# one (run on the record at the commit); neither fires (tracing stays on).
echo 'traceon' > $ev/trigger
row 'kprobe: p, trigger traceon'
echo '!traceon' > $ev/trigger
echo 'traceon if common_pid == 0' > $ev/trigger
row 'kprobe: p, trigger traceon if common_pid == 0'
echo '!traceon if common_pid == 0' > $ev/trigger
# A pid filter that keeps every task.
echo $$ > set_event_pid
echo 1 > options/event-fork
row 'kprobe: p, set_event_pid'
echo > set_event_pid
echo 0 > options/event-fork
echo 0 > $ev/enable
# Soft-disabled: armed by an enable_event trigger on module_free, which
# does not fire in the loop.
echo "enable_event:kprobes:bench" > events/module/module_free/trigger || exit 1
row 'kprobe: p, soft-disabled'
echo "!enable_event:kprobes:bench" > events/module/module_free/trigger
t=0
until (echo > kprobe_events) 2>/dev/null || [ $t -ge 50 ]; do
	sleep 0.1
	t=$((t + 1))
done
echo "CORE|done|0"
