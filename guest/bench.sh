#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Side by side in one boot of the ref kernel: the cost of a probe on
# __x64_sys_getppid with the C kprobe events and with the module, per spec.
# Prints "<impl>|<spec>|<ns per getppid call>".
B=/rkpe/bin/getppid_loop
N=${1:-200000}
# "quick": only the rows make check guards (scripts/bench-vm.sh --check).
QUICK=${2:-}
quick_row() {
	case "$1" in
	'p' | 'p a=%di b=%si c=%dx d=%cx' | 'p u=+0(%di):u64' | 'p s=@linux_banner:string' | 'r r=$retval') return 0 ;;
	*) return 1 ;;
	esac
}
cd /sys/kernel/tracing || exit 1
modprobe rust_kprobe_events || exit 1
echo 1 > tracing_on
echo "none|-|$($B $N)"
# measure IMPL KIND ARGS LABEL [off]: a KIND probe with ARGS on
# __x64_sys_getppid in IMPL's file, enabled; prints "IMPL|LABEL|ns per call"
# (with tracing_on=0 during the loop when "off"); removes it.
measure() {
	if [ $1 = C ]; then f=kprobe_events; g=kprobes; else f=rkprobe_events; g=rkprobes; fi
	echo > $f
	echo "$2:bench __x64_sys_getppid$3" >> $f || { echo "$1|$4|rejected"; return; }
	echo 1 > events/$g/bench/enable
	[ "$5" = off ] && echo 0 > tracing_on
	echo "$1|$4|$($B $N)"
	echo 1 > tracing_on
	echo 0 > events/$g/bench/enable
	echo > $f
}
while IFS= read -r spec; do
	case "$spec" in '#'*|'') continue ;; esac
	[ -z "$QUICK" ] || quick_row "$spec" || continue
	kind=${spec%% *}
	for impl in C RUST; do
		measure $impl "$kind" "${spec#"$kind"}" "$spec"
	done
done <<'SPECS'
p
p a=%di b=%si c=$stack0 d=$comm
p a=%di
p a=%di b=%si c=%dx d=%cx
p u=+0(%di):u64
p f=+0(+8(%di)):u32
p c=$comm
p s=@linux_banner:string
r r=$retval
SPECS
# The hit without the ring-buffer write: tracing off, reservations fail.
for impl in C RUST; do
	measure $impl p "" "tracing_on=0 p" off
done
