#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# For each "<trigger> | <place args>" line of a file: define the probe as cN
# on kprobe_events and rN on rkprobe_events, trace the trigger with both,
# and print each event's trace text (after "<name>: ") under "=== N C" and
# "=== N RUST", after its record header as the trace shows it (task, pid,
# CPU and context flags, without the timestamp; see `lines`), then its
# kprobe_profile counts. "<trigger> | r <place args>" (or a place with %return)
# defines return probes, traced one after the other with the same trigger.
# Runs on the ref kernel with the module loaded.
cd /sys/kernel/tracing || exit 1
# "HITS MISSES" of events $1 (in kprobe_profile) and $2 (in
# rkprobe_profile), read by one process, so that the hits around the reads
# are the same for both. Into a file, not a pipe, and not inside $(...):
# no other process (a pipe's reader, the shell reading the substitution)
# may call read(), which a probe on vfs_read counts, between the two reads.
counts() {
	awk -v a="$1" -v b="$2" '$1 == a || $1 == b { print $2, $3 }' kprobe_profile rkprobe_profile > /tmp/counts
}
# "profile: HITS MISSES" from the counts before ($1 $2) and after ($3 $4)
# the trigger: hits while tracing, misses in all.
profile() {
	echo "profile: $(($3 - $1)) $4"
}
# The trace lines of event $1: "TASK-PID [CPU] FLAGS TEXT", the header
# fields of the record (common_pid, common_flags, common_preempt_count; the
# task name as saved for the pid) without the timestamp. The need-resched
# flag (the second) may change between the two probes' handlers of one hit,
# so it reads as "?". With $2 "seq" (probes traced one after the other, so
# in other processes and maybe on other CPUs): "TASK FLAGS TEXT".
lines() {
	if [ "${2:-}" = seq ]; then
		hdr='\1 \4'
	else
		hdr='\1-\2 [\3] \4'
	fi
	grep -a " $1: " trace | head -20 |
		sed -E "s/^ *(.*)-([0-9]+) +\[([0-9]+)\] (.)(.)([^ ]*) +[0-9]+\.[0-9]+: $1: /\1-\2 [\3] \4?\6 /" |
		sed -E "s/^(.*)-([0-9]+) \[([0-9]+)\] ([^ ]+) /$hdr /"
}
n=0
while IFS= read -r line; do
	case "$line" in '#'*|'') continue ;; esac
	n=$((n + 1))
	trigger=${line%% | *}
	spec=${line#* | }
	head=p
	case "$spec" in "r "*) head=r; spec=${spec#r } ;; esac
	case "$head $spec" in r*|*%return*)
		# Return probes one after the other: of two kretprobes on one
		# function, only the outer one sees the real return address.
		for side in C RUST; do
			if [ $side = C ]; then f=kprobe_events g=kprobes e=c$n; else f=rkprobe_events g=rkprobes e=r$n; fi
			echo 0 > tracing_on
			echo > trace
			if ! echo "$head:$e $spec" >> $f 2>/dev/null; then
				echo "=== $n $side: rejected"
				continue
			fi
			echo 1 > events/$g/enable 2>/dev/null
			counts $e $e; before=$(tr '\n' ' ' < /tmp/counts)
			echo 1 > tracing_on
			sh -c "$trigger" > /dev/null 2>&1
			echo 0 > tracing_on
			counts $e $e; after=$(tr '\n' ' ' < /tmp/counts)
			echo 0 > events/$g/enable 2>/dev/null
			echo "=== $n $side $spec"
			lines $e seq
			set -- $before $after
			profile "$@"
			echo > $f
		done
		continue ;;
	esac
	echo 0 > tracing_on
	echo > trace
	echo > kprobe_events
	echo > rkprobe_events
	echo "p:c$n $spec" >> kprobe_events 2>/dev/null || echo "=== $n C: rejected"
	echo "p:r$n $spec" >> rkprobe_events 2>/dev/null || echo "=== $n RUST: rejected"
	echo 1 > events/kprobes/enable 2>/dev/null
	echo 1 > events/rkprobes/enable 2>/dev/null
	counts c$n r$n; before=$(tr '\n' ' ' < /tmp/counts)
	echo 1 > tracing_on
	sh -c "$trigger" > /dev/null 2>&1
	echo 0 > tracing_on
	counts c$n r$n; after=$(tr '\n' ' ' < /tmp/counts)
	echo 0 > events/kprobes/enable 2>/dev/null
	echo 0 > events/rkprobes/enable 2>/dev/null
	set -- $before $after
	echo "=== $n C $spec"
	lines c$n
	profile $1 $2 $5 $6
	echo "=== $n RUST $spec"
	lines r$n
	profile $3 $4 $7 $8
done < "$1"
echo > kprobe_events
echo > rkprobe_events
echo "=== end"
