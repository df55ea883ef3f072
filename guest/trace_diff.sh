#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# For each "<trigger> | <place args>" line of a file: define the probe as cN
# on kprobe_events and rN on rkprobe_events, trace the trigger with both,
# and print each event's trace text (after "<name>: ") under "=== N C" and
# "=== N RUST". "<trigger> | r <place args>" (or a place with %return)
# defines return probes, traced one after the other with the same trigger.
# Runs on the ref kernel with the module loaded.
cd /sys/kernel/tracing || exit 1
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
			echo 1 > tracing_on
			sh -c "$trigger" > /dev/null 2>&1
			echo 0 > tracing_on
			echo 0 > events/$g/enable 2>/dev/null
			echo "=== $n $side $spec"
			grep -a " $e: " trace | sed "s/.* $e: //" | head -20
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
	echo 1 > tracing_on
	sh -c "$trigger" > /dev/null 2>&1
	echo 0 > tracing_on
	echo 0 > events/kprobes/enable 2>/dev/null
	echo 0 > events/rkprobes/enable 2>/dev/null
	echo "=== $n C $spec"
	grep -a " c$n: " trace | sed "s/.* c$n: //" | head -20
	echo "=== $n RUST $spec"
	grep -a " r$n: " trace | sed "s/.* r$n: //" | head -20
done < "$1"
echo > kprobe_events
echo > rkprobe_events
echo "=== end"
