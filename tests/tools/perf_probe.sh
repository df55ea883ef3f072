# SPDX-License-Identifier: GPL-2.0
# perf probe: -a FUNC, -a NAME=FUNC, -a FUNC%return, -l, -d, what they write
# into kprobe_events, and perf stat on the events it made.
. /tmp/rkpe/tests/tools/lib.sh
N=20
reset
# No debuginfo: perf falls back to kallsyms. Its warnings about that are
# the same on both kernels; keep stderr.
echo "--- perf probe -a vfs_open"
perf probe -a vfs_open 2>&1 | norm
echo "--- perf probe -a rkvfsopen=vfs_open"
perf probe -a 'rkvfsopen=vfs_open' 2>&1 | norm
echo "--- perf probe -a do_sys_openat2%return"
perf probe -a 'do_sys_openat2%return' 2>&1 | norm
echo "--- kprobe_events"
norm < $T/kprobe_events
echo "--- perf probe -l"
perf probe -l 2>&1 | norm
echo "--- perf stat: $N rounds"
perf stat -x, -e probe:vfs_open -e probe:rkvfsopen -e probe:do_sys_openat2__return \
	-- $TRIG $N $D 2> stat.txt
echo "status $?"
cut -d, -f1,3 stat.txt
echo "--- perf probe -d probe:rkvfsopen"
perf probe -d probe:rkvfsopen 2>&1 | norm
norm < $T/kprobe_events
echo "--- perf probe -d 'probe:*'"
perf probe -d 'probe:*' 2>&1 | norm
echo "--- kprobe_events after"
cat $T/kprobe_events
ls $T/events | grep -x probe
echo "--- end"
