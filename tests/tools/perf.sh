# SPDX-License-Identifier: GPL-2.0
# perf on kprobe events defined in kprobe_events (group kprobes): perf stat
# counts, perf record per task and system-wide, perf script fields of every
# fetch type, return probes, --filter.
. /tmp/rkpe/tests/tools/lib.sh
N=20
reset
defprobes_fetch_kinds
cat $T/kprobe_events | renames

echo "--- perf stat: $N rounds"
perf stat -x, -e kprobes:rk_getppid -e kprobes:rk_open -e kprobes:rk_vfsopen -e kprobes:rk_flush -e kprobes:rk_open_ret \
	-- $TRIG $N $D 2> stat.txt
echo "status $?"
cut -d, -f1,3 stat.txt

echo "--- perf record (task): 2 rounds"
perf record -q -o task.data -e kprobes:rk_getppid -e kprobes:rk_open -e kprobes:rk_vfsopen -e kprobes:rk_flush -e kprobes:rk_open_ret \
	-- $TRIG 2 $D
echo "status $?"
perf script -i task.data -F comm,event,trace 2>&1 | grep -v 'not valid for' | norm

echo "--- perf record -a: $N rounds"
# System-wide, so only the trigger's own records are counted (its pid, by
# a shell that execs it): another process of that name elsewhere in the
# run must not change the count.
perf record -q -a -o all.data -e kprobes:rk_getppid -e kprobes:rk_open_ret -- \
	sh -c 'echo $$ > all.pid; exec "$0" "$@"' $TRIG $N $D
echo "status $?"
perf script -i all.data --pid "$(cat all.pid)" -F comm,event,trace 2>&1 | grep rkpe-trigger | norm | sort | uniq -c

echo "--- perf record --filter 'ret < 0': $N rounds"
perf record -q -o filter.data -e kprobes:rk_open_ret --filter 'ret < 0' -- $TRIG $N $D
echo "status $?"
perf script -i filter.data -F comm,event,trace 2>&1 | grep -v 'not valid for' | norm | sort | uniq -c

echo "--- perf record --filter on a string: $N rounds"
perf record -q -o sfilter.data -e kprobes:rk_open --filter 'path ~ "*/present"' -- $TRIG $N $D
echo "status $?"
perf script -i sfilter.data -F comm,event,trace 2>&1 | grep -v 'not valid for' | norm | sort | uniq -c

reset
