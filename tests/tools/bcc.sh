# SPDX-License-Identifier: GPL-2.0
# bcc tools (bpfcc-tools): funccount on a kprobe, trace on a kprobe and a
# kretprobe, exact counts over the trigger; no probe left in kprobe_events
# at exit. The trigger is forked first and held on a FIFO, so the tools can
# follow its pid (-p) and nothing else counts; released, it execs (one
# do_filp_open and one vfs_open for the binary) and runs its rounds.
# Twice on both variants: through perf's kprobe PMU, as bcc does by
# default (C's, or the module's on a kernel without C's kprobe events), then
# through kprobe_events (hide_kprobe_pmu).
. /tmp/rkpe/tests/tools/lib.sh
N=20
reset
hold() { # rounds: fork the trigger, held until release; sets $tp
	rm -f go; mkfifo go
	$TRIG "$1" $D < go &
	tp=$!
}
release() { # open the FIFO, write nothing: no SIGPIPE if the trigger is gone
	: > go
	wait $tp
	echo "trigger status $?"
}
# Start a tool in the background, wait until it prints $2 (it is attached).
start() { # out ready cmd...
	out=$1 ready=$2; shift 2
	: > "$out" # before the tool starts: not an earlier run's output
	"$@" > "$out" 2> "$out.err" &
	bg=$!
	i=0
	until grep -q "$ready" "$out"; do
		kill -0 $bg 2>/dev/null || break
		i=$((i + 1)); [ $i -lt 600 ] || break
		sleep 1
	done
}
finish() { # out [status]: wait for the tool; its stderr unless it ended with status (0)
	wait $bg
	st=$?
	echo "status $st"
	[ $st = "${2:-0}" ] || grep -v -e warning -e '^ ' -e '^In file' -e 'expanded from' -e 'generated\.$' "$1.err"
}

# Run a tool that ends on SIGINT (Ctrl-C) as it would from a terminal: a
# script's background job ignores SIGINT, and Python then keeps ignoring it.
# Only as the command of start (it replaces the background subshell).
interruptible() {
	exec python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])' "$@"
}
tools() { # how: what the tools go through
	echo "--- funccount-bpfcc -p, $1: $N rounds"
	hold $N
	start fc.txt Tracing funccount-bpfcc -p $tp -d 15 vfs_open
	# Through the PMU a probe is a local event, listed nowhere.
	echo "probes in kprobe_events while attached: $(grep -c . $T/kprobe_events)"
	release
	finish fc.txt
	grep -v '^Tracing' fc.txt
	# trace's -M does not end it (its exit() in a ctypes callback is
	# swallowed): wait for the 9 events (header + 9 lines), a little more for
	# any surplus, then Ctrl-C: trace prints an empty line, exits 1 and removes
	# its probes. One perf buffer per probe: lines sorted.
	echo "--- trace-bpfcc -p, kprobe and kretprobe, $1: 2 rounds"
	hold 2
	start tr.txt '^PID' interruptible trace-bpfcc -p $tp \
		"$OPEN \"dfd=%d\", arg1" 'r::do_sys_openat2 "ret=%d", retval'
	echo "probes in kprobe_events while attached: $(grep -c . $T/kprobe_events)"
	release
	i=0
	while [ "$(wc -l < tr.txt)" -lt 10 ] && [ $i -lt 60 ]; do i=$((i + 1)); sleep 1; done
	sleep 3
	kill -INT $bg
	finish tr.txt 1
	head -1 tr.txt
	sed 1d tr.txt | grep . | awk '{ $1 = "PID"; $2 = "TID"; print }' | norm | sort
}
show_kprobe_pmu
echo "--- kprobe PMU: $(cat /sys/bus/event_source/devices/kprobe/format/retprobe 2>&1)"
tools "the kprobe PMU"
hide_kprobe_pmu
tools kprobe_events
echo "--- kprobe_events after"
cat $T/kprobe_events
echo "--- end"
