#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Memory per probe, C and the module in one boot of `ref` (run by
# scripts/bench-memory.sh): N probes `p vfs_read a=%di b=+0(%si):u64`
# defined in one write() to kprobe_events (C) or rkprobe_events (module);
# Slab, Percpu and MemAvailable (/proc/meminfo, kB) before and after, then
# the time to remove them by truncation, by one write of N "-:" lines and
# by truncating dynamic_events (dd without conv=notrunc opens with O_TRUNC,
# which truncates kprobe_events: only the "-:" write must not). Prints "impl|what|value" lines.
N=${1:-1000}
T=/sys/kernel/tracing
modprobe rust_kprobe_events || exit 1
mem() { awk -v k="$1" '$1 == k":" {print $2}' /proc/meminfo; }
settle() { sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null; sleep 1; }
run() { # impl file group
	i=0
	while [ $i -lt $N ]; do echo "p:$3/p$i vfs_read a=%di b=+0(%si):u64"; i=$((i + 1)); done > /tmp/lines
	settle
	s0=$(mem Slab) p0=$(mem Percpu) a0=$(mem MemAvailable)
	t0=$(cut -d' ' -f1 /proc/uptime)
	dd if=/tmp/lines of=$T/$2 bs=4M 2>/dev/null || echo "$1|error|the write failed"
	t1=$(cut -d' ' -f1 /proc/uptime)
	[ "$(grep -c . $T/$2)" = "$N" ] || echo "$1|error|$(grep -c . $T/$2) probes defined, not $N"
	settle
	s1=$(mem Slab) p1=$(mem Percpu) a1=$(mem MemAvailable)
	t2=$(cut -d' ' -f1 /proc/uptime)
	: > $T/$2
	t3=$(cut -d' ' -f1 /proc/uptime)
	# Again, removed by one write of N "-:" lines, then by truncating
	# dynamic_events (only these probes are defined).
	i=0
	while [ $i -lt $N ]; do echo "-:$3/p$i"; i=$((i + 1)); done > /tmp/minus
	dd if=/tmp/lines of=$T/$2 bs=4M 2>/dev/null || echo "$1|error|the second write failed"
	t4=$(cut -d' ' -f1 /proc/uptime)
	dd if=/tmp/minus of=$T/$2 bs=4M conv=notrunc 2>/dev/null || echo "$1|error|the -: write failed"
	t5=$(cut -d' ' -f1 /proc/uptime)
	[ "$(grep -c . $T/$2)" = 0 ] || echo "$1|error|$(grep -c . $T/$2) probes left after the -: lines"
	dd if=/tmp/lines of=$T/$2 bs=4M 2>/dev/null || echo "$1|error|the third write failed"
	t6=$(cut -d' ' -f1 /proc/uptime)
	: > $T/dynamic_events
	t7=$(cut -d' ' -f1 /proc/uptime)
	[ "$(grep -c . $T/$2)" = 0 ] || echo "$1|error|$(grep -c . $T/$2) probes left after truncating dynamic_events"
	[ "$(grep -c . /sys/kernel/debug/kprobes/list)" = 0 ] || echo "$1|error|kprobes left registered: $(grep -c . /sys/kernel/debug/kprobes/list)"
	echo "$1|slab_kb|$((s1 - s0))"
	echo "$1|percpu_kb|$((p1 - p0))"
	echo "$1|memavailable_drop_kb|$((a0 - a1))"
	echo "$1|create_s|$(echo "$t1 $t0" | awk '{print $1 - $2}')"
	echo "$1|truncate_s|$(echo "$t3 $t2" | awk '{print $1 - $2}')"
	echo "$1|minus_s|$(echo "$t5 $t4" | awk '{print $1 - $2}')"
	echo "$1|dyn_truncate_s|$(echo "$t7 $t6" | awk '{print $1 - $2}')"
}
run RUST rkprobe_events rmem
run C kprobe_events cmem
run RUST rkprobe_events rmem2
run C kprobe_events cmem2
# With BTF arguments: the time to define N probes whose arguments are looked
# up in BTF (each line looks the function up, as C does), in one write.
btf() { # impl file group
	i=0
	while [ $i -lt $N ]; do
		echo "p:$3/b$i vfs_read file->f_path.dentry->d_name.name:string count \$arg4"
		i=$((i + 1))
	done > /tmp/btf_lines
	settle
	t0=$(cut -d' ' -f1 /proc/uptime)
	dd if=/tmp/btf_lines of=$T/$2 bs=4M 2>/dev/null || echo "$1|error|the BTF write failed"
	t1=$(cut -d' ' -f1 /proc/uptime)
	[ "$(grep -c . $T/$2)" = "$N" ] || echo "$1|error|$(grep -c . $T/$2) BTF probes defined, not $N"
	: > $T/$2
	echo "$1|btf_create_s|$(echo "$t1 $t0" | awk '{print $1 - $2}')"
}
if grep -q '<argname>' $T/README; then
	btf RUST rkprobe_events rbtf
	btf C kprobe_events cbtf
	btf RUST rkprobe_events rbtf2
	btf C kprobe_events cbtf2
fi
