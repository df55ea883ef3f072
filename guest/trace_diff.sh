#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# For each "<trigger> | <place args>" line of a file: define the probe as cN
# on kprobe_events and rN on rkprobe_events, trace the trigger with both,
# and print each event's trace text (after "<name>: ") under "=== N C" and
# "=== N RUST". Runs on the ref kernel with the module loaded.
cd /sys/kernel/tracing || exit 1
n=0
while IFS= read -r line; do
	case "$line" in '#'*|'') continue ;; esac
	n=$((n + 1))
	trigger=${line%% | *}
	spec=${line#* | }
	echo 0 > tracing_on
	echo > trace
	echo > kprobe_events
	echo > rkprobe_events
	echo "p:c$n $spec" >> kprobe_events || echo "=== $n C: rejected"
	echo "p:r$n $spec" >> rkprobe_events || echo "=== $n RUST: rejected"
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
