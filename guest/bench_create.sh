#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The instructions it takes to define a probe, C and the module in one boot
# of `ref` under QEMU -icount (run by scripts/bench-create.sh): N probes on
# vfs_read, defined in one write() to kprobe_events (C) or rkprobe_events
# (module) by /rkpe/bin/timed_write, which prints the guest nanoseconds of
# the write, one instruction each. Plain arguments, then BTF ones when the
# README offers them; each twice, alternating. Prints "impl|what|value"
# lines, value in instructions per probe.
N=${1:-200}
T=/sys/kernel/tracing
modprobe rust_kprobe_events || exit 1
define() { # impl what group spec
	f=kprobe_events
	[ "$1" = RUST ] && f=rkprobe_events
	i=0
	while [ $i -lt $N ]; do echo "p:$3/p$i vfs_read $4"; i=$((i + 1)); done > /tmp/defs
	sync
	ns=$(/rkpe/bin/timed_write $T/$f < /tmp/defs)
	case "$ns" in
	''|*[!0-9]*) echo "$1|error|defining $2 probes: $ns" ;;
	*) echo "$1|$2|$((ns / N))" ;;
	esac
	[ "$(grep -c . $T/$f)" = "$N" ] || echo "$1|error|$(grep -c . $T/$f) $2 probes defined, not $N"
	: > $T/$f
}
for run in 1 2; do
	define RUST create_insn rc$run 'a=%di b=+0(%si):u64'
	define C create_insn cc$run 'a=%di b=+0(%si):u64'
	if grep -q '<argname>' $T/README; then
		define RUST btf_create_insn rb$run 'file->f_path.dentry->d_name.name:string count $arg4'
		define C btf_create_insn cb$run 'file->f_path.dentry->d_name.name:string count $arg4'
	fi
done
