# SPDX-License-Identifier: GPL-2.0
# bpftrace one-liners with kprobe: and kretprobe: over a command (-c), exact
# counts, printf of an argument, override() of a return value; no probe left
# in kprobe_events at exit.
# Through perf's kprobe PMU, then through kprobe_events (hide_kprobe_pmu),
# on both variants.
. /tmp/rkpe/tests/tools/lib.sh
N=20
reset
# First through perf's kprobe PMU, as bpftrace does by default (C's, or
# the module's on a kernel without C's kprobe events).
show_kprobe_pmu
echo "--- kprobe PMU: $(cat /sys/bus/event_source/devices/kprobe/format/retprobe 2>&1)"
echo "--- bpftrace through the kprobe PMU: $N rounds"
bpftrace -c "$TRIG $N $D" -e '
kprobe:__x64_sys_getppid /pid == cpid/ { @getppid = count(); }
kretprobe:do_sys_openat2 /pid == cpid/ { @ret[(int32)retval] = count(); }' > bt.txt 2>&1
echo "status $?"
grep . bt.txt | sort
# bpf_override_return(): the core asks the event's provider whether the
# probe is at the entry of a function on the error injection list. dash
# (/bin/sh) calls getppid() once, for $PPID.
echo "--- bpftrace --unsafe override(): getppid() answers 4242"
printf 'echo PPID=$PPID\n' > ppid.sh
bpftrace --unsafe -c '/bin/sh /tmp/ppid.sh' -e '
kprobe:__x64_sys_getppid /pid == cpid/ { override(4242); }' > bo.txt 2>&1
echo "status $?"
grep . bo.txt
hide_kprobe_pmu
echo "--- bpftrace kprobe/kretprobe: $N rounds"
bpftrace -c "$TRIG $N $D" -e '
kprobe:vfs_open /pid == cpid/ { @vfs_open = count(); }
kprobe:__x64_sys_getppid /pid == cpid/ { @getppid = count(); }
kprobe:'"$OPEN"' /pid == cpid/ { @dfd[(int32)arg0] = count(); }
kretprobe:do_sys_openat2 /pid == cpid/ { @ret[(int32)retval] = count(); }' > bt.txt 2>&1
echo "status $?"
# Map entries with equal counts print in any order.
grep . bt.txt | sort
echo "--- bpftrace printf: 2 rounds"
bpftrace -c "$TRIG 2 $D" -e '
kretprobe:do_sys_openat2 /pid == cpid/ { printf("%s ret=%d\n", comm, (int32)retval); }' 2>&1
echo "status $?"
echo "--- kprobe_events after"
cat $T/kprobe_events
echo "--- end"
