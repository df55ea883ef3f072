#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Where the memory of N probe definitions goes, C and the module: the kmem
# tracepoints around one write of N definitions, allocations paired with
# their frees by pointer; what stays is summed by call site and size.
# Run in the ref VM, e.g.:
#   scripts/vm.sh --timeout 600 --log /tmp/kmem.log ref -- 'sh /rkpe/guest/kmem_sites.sh 100'
# The module's allocations show as the kernel crate's allocator; their
# sizes (kmalloc-N) tell them apart (BENCHMARKS.md, "Where a probe's bytes go").
N=${1:-100}
SPEC=${2:-'a=%di b=+0(%si):u64'}
modprobe rust_kprobe_events || exit 1
cd /sys/kernel/tracing || exit 1
echo 8192 > buffer_size_kb
i=0
while [ $i -lt "$N" ]; do echo "p:p$i vfs_read $SPEC"; i=$((i + 1)); done > /tmp/defs
for f in kprobe_events rkprobe_events; do
	echo 0 > tracing_on
	echo > trace
	for e in kmalloc kmem_cache_alloc kfree kmem_cache_free; do
		echo 1 > events/kmem/$e/enable
	done
	echo 1 > tracing_on
	dd if=/tmp/defs of=$f bs=1M conv=notrunc 2>/dev/null
	echo 0 > tracing_on
	echo 0 > events/kmem/enable
	echo "=== $f: bytes kept, allocations, call site, size"
	grep -v '^#' trace | awk '
	/kmalloc:|kmem_cache_alloc:/ {
		p = ""; n = 0; cs = ""
		for (i = 1; i <= NF; i++) {
			if ($i ~ /^ptr=/) p = substr($i, 5)
			if ($i ~ /^bytes_alloc=/) n = substr($i, 13) + 0
			if ($i ~ /^call_site=/) cs = substr($i, 11)
		}
		A[p] = n; C[p] = cs; next
	}
	/kfree:|kmem_cache_free:/ {
		for (i = 1; i <= NF; i++) if ($i ~ /^ptr=/) { p = substr($i, 5); delete A[p]; delete C[p] }
	}
	END {
		for (p in A) { k = C[p] " " A[p]; S[k] += A[p]; K[k]++; T += A[p] }
		for (k in S) print S[k], K[k], k
		print T, "-", "TOTAL"
	}' | sort -rn | head -40
	echo > $f
done
