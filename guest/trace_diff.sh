#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# For each "<trigger> | <place args>" line of a file: define the probe as cN
# on kprobe_events and rN on rkprobe_events, trace the trigger with both,
# and print each event's trace text (after "<name>: ") under "=== N C" and
# "=== N RUST", then its kprobe_profile counts. "<trigger> | r <place args>" (or a place with %return)
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
			echo "$head:$e $spec" >> $f 2>/dev/null || echo "=== $n $side: rejected"
			echo 1 > events/$g/enable 2>/dev/null
			counts $e $e; before=$(tr '\n' ' ' < /tmp/counts)
			echo 1 > tracing_on
			sh -c "$trigger" > /dev/null 2>&1
			echo 0 > tracing_on
			counts $e $e; after=$(tr '\n' ' ' < /tmp/counts)
			echo 0 > events/$g/enable 2>/dev/null
			echo "=== $n $side $spec"
			grep -a " $e: " trace | sed "s/.* $e: //" | head -20
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
	grep -a " c$n: " trace | sed "s/.* c$n: //" | head -20
	profile $1 $2 $5 $6
	echo "=== $n RUST $spec"
	grep -a " r$n: " trace | sed "s/.* r$n: //" | head -20
	profile $3 $4 $7 $8
done < "$1"
echo > kprobe_events
echo > rkprobe_events
echo "=== end"
