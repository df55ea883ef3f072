#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Where the memory of N probe definitions shows in /proc/meminfo, C and the
# module: the change of each field over one write of N definitions (after
# sync and drop_caches), C, module, module, C. MemFree moves by hundreds of
# KB with the per-CPU page lists whatever is allocated, so MemAvailable
# needs a large N (BENCHMARKS.md, "Reading the memory figures"). Run in the ref VM, e.g.:
#   scripts/vm.sh --timeout 1200 --log /tmp/m.log ref -- 'sh /rkpe/guest/meminfo_fields.sh 5000'
N=${1:-1000}
T=/sys/kernel/tracing
modprobe rust_kprobe_events || exit 1
settle() { sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null; sleep 1; }
F="MemFree MemAvailable Cached Shmem Slab SReclaimable SUnreclaim KernelStack PageTables VmallocUsed Percpu"
snap() { for k in $F; do awk -v k="$k" '$1 == k":" {printf "%s ", $2}' /proc/meminfo; done; }
run() {
	i=0
	while [ $i -lt $N ]; do echo "p:$3/p$i vfs_read a=%di b=+0(%si):u64"; i=$((i + 1)); done > /tmp/lines
	settle
	a=$(snap)
	dd if=/tmp/lines of=$T/$2 bs=4M 2>/dev/null
	settle
	b=$(snap)
	echo "$1 $F"
	echo "$a" | awk -v b="$b" -v n="$1" '{split(b,x," "); s=n; for(i=1;i<=NF;i++) s=s" "(x[i]-$i); print s}'
	: > $T/$2
}
run C kprobe_events cm
run RUST rkprobe_events rm
run RUST rkprobe_events rm2
run C kprobe_events cm2
