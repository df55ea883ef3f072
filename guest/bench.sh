#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Side by side in one boot of the ref kernel: the cost of a probe on
# __x64_sys_getppid (__arm64_sys_getppid) with the C kprobe events and with
# the module, per spec.
# Prints "<impl>|<spec>|<ns per getppid call>".
B=/rkpe/bin/getppid_loop
N=${1:-200000}
# task_struct's offsets of pid, real_parent and comm (from the caller).
PID_OFF=${PID_OFF:-1024} PARENT_OFF=${PARENT_OFF:-1040} COMM_OFF=${COMM_OFF:-1504}
# "quick": only the rows make check guards (scripts/bench-vm.sh --check);
# "row=LABEL": that row alone.
QUICK=${2:-}
quick_row() {
	case "$QUICK" in row=*) [ "$1" = "${QUICK#row=}" ]; return ;; esac
	case "$1" in
	'p' | 'p a=%di b=%si c=%dx d=%cx' | 'p u=+0(%di):u64' | 'p s=@linux_banner:string' | 'r r=$retval' | 'tracing_on=0 p') return 0 ;;
	# 7.3's (skipped where the README does not show them).
	'p a=$current->pid' | 'p a=this_cpu_read(@cpu_number):u32') return 0 ;;
	*) return 1 ;;
	esac
}
# The probed function and, on arm64, the specs in arm64's registers (eight
# registers for x86-64's eight; the syscall's pt_regs pointer is x0 there,
# and the user's first argument is at its start, not at +112; arm64 keeps
# the CPU number in thread_info, not in a per-CPU cpu_number, so its
# this_cpu_read() row reads kernel/fork.c's per-CPU process_counts). The rows at
# +9 are x86's (an optimised probe, then the same place as a plain int3):
# arm64 has no optimised probes, every hit is a BRK.
case $(uname -m) in
aarch64)
	SYS=__arm64_sys_getppid
	arch_spec() {
		sed -e 's/+112(%di)/+0(%di)/g' -e 's/%di/%x0/g; s/%si/%x1/g; s/%dx/%x2/g; s/%cx/%x3/g' \
			-e 's/%r8/%x4/g; s/%r9/%x5/g; s/%ax/%x6/g; s/%bx/%x7/g' \
			-e 's/@cpu_number/@process_counts/g'
	}
	arch_row() { case "$1" in p+*) return 1 ;; esac; }
	;;
*)
	SYS=__x64_sys_getppid
	arch_spec() { cat; }
	arch_row() { return 0; }
	;;
esac
# A kernel without BTF (arm64's here): no BTF rows, nor the hand-written
# programs beside them (the offsets scripts/bench-vm.sh reads from BTF).
if [ -e /sys/kernel/btf/vmlinux ]; then
	btf_row() { return 0; }
else
	btf_row() { case "$1|$2" in *'->'* | *'|at:'*) return 1 ;; esac; }
fi
cd /sys/kernel/tracing || exit 1
modprobe rust_kprobe_events || exit 1
echo 1 > tracing_on
echo "none|-|$($B $N)"
# 128 register arguments (MAX_TRACE_ARGS).
ARGS128=p
i=0
for r in di si dx cx r8 r9 ax bx; do
	for j in 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do
		ARGS128="$ARGS128 a$i=%$r"
		i=$((i + 1))
	done
done
# measure IMPL KIND ARGS LABEL [MODE]: a KIND probe with ARGS on
# __x64_sys_getppid (KIND may carry an offset: p+9) in IMPL's file,
# enabled; prints "IMPL|LABEL|ns per call"; removes it. MODE: "off"
# (tracing_on=0 during the loop), "filter" (an event filter that rejects
# every record), "two" (enabled in a second trace instance too), "int3"
# (kprobe jump optimization off: the breakpoint path), "soft" (armed by an
# enable_event trigger on module_free, which does not fire in the loop:
# the event is soft-disabled, so each hit is the kprobe core, the dispatch
# and the soft-disabled test, nothing written; the floor of a probe),
# "at:FUNC" (the probe is on FUNC, which each getppid calls once).
measure() {
	if [ $1 = C ]; then f=kprobe_events; g=kprobes; else f=rkprobe_events; g=rkprobes; fi
	# (sh has no locals: these names are measure's own.)
	m_kind=${2%%+*}
	m_off=
	[ "$m_kind" = "$2" ] || m_off=+${2#*+}
	echo > $f
	m_place=$SYS
	case "$5" in at:*) m_place=${5#at:} ;; esac
	echo "$m_kind:bench $m_place$m_off$3" >> $f || { echo "$1|$4|rejected"; return; }
	case "$5" in
	filter) echo 'a == 0' > events/$g/bench/filter || { echo "$1|$4|rejected"; return; } ;;
	two) mkdir instances/bench2 && echo 1 > instances/bench2/events/$g/bench/enable || { echo "$1|$4|rejected"; return; } ;;
	int3) echo 0 > /proc/sys/debug/kprobes-optimization || { echo "$1|$4|rejected"; return; } ;;
	soft)
		echo > trace
		echo "enable_event:$g:bench" > events/module/module_free/trigger || { echo "$1|$4|rejected"; return; } ;;
	esac
	[ "$5" = soft ] || echo 1 > events/$g/bench/enable
	if [ -n "$m_off" ] && [ "$5" != int3 ]; then
		# The kprobe optimizer runs a little after registration: measure
		# the optimized probe, not a mix.
		t=0
		while ! grep -q "getppid$m_off.*OPTIMIZED" /sys/kernel/debug/kprobes/list && [ $t -lt 50 ]; do
			sleep 0.1
			t=$((t + 1))
		done
	fi
	[ "$5" = off ] && echo 0 > tracing_on
	echo "$1|$4|$($B $N)"
	# How the kprobe ran (ftrace, int3, optimized), for the log.
	grep getppid /sys/kernel/debug/kprobes/list | sed "s/^/# $1 kprobe: /"
	echo 1 > tracing_on
	if [ "$5" = soft ]; then
		# The trace must be empty: the event stayed soft-disabled.
		[ -z "$(grep -v '^#' trace)" ] || echo "# $1: soft-disabled event recorded"
		echo "!enable_event:$g:bench" > events/module/module_free/trigger
	fi
	echo 0 > events/$g/bench/enable
	[ "$5" = int3 ] && echo 1 > /proc/sys/debug/kprobes-optimization
	if [ "$5" = two ]; then
		echo 0 > instances/bench2/events/$g/bench/enable
		rmdir instances/bench2
	fi
	# Linux 7.3 frees a removed trigger's data (which holds the event in
	# soft mode) after the write returns: until then the event is busy.
	t=0
	until (echo > $f) 2>/dev/null || [ $t -ge 50 ]; do
		sleep 0.1
		t=$((t + 1))
	done
	echo > $f
}
# Rows: "SPEC" or "SPEC|MODE|LABEL"; SPEC is "KIND ARGS".
while IFS= read -r row; do
	case "$row" in '#'*|'') continue ;; esac
	spec=${row%%|*}
	mode=
	label=$spec
	if [ "$spec" != "$row" ]; then
		rest=${row#*|}
		mode=${rest%%|*}
		label=${rest#*|}
	fi
	[ -z "$QUICK" ] || quick_row "$label" || continue
	arch_row "$spec" || continue
	btf_row "$spec" "$mode" || continue
	# Linux 7.3's syntax ($current, this_cpu_*(), typecasts): only where the
	# README shows it.
	case "$spec" in
	*'$current'* | *this_cpu_* | *'=('*) grep -qF 'this_cpu_read(<fetcharg>)' README || continue ;;
	esac
	spec=$(echo "$spec" | arch_spec)
	label=$(echo "$label" | arch_spec)
	kind=${spec%% *}
	[ "$kind" = "$spec" ] && args= || args=" ${spec#* }"
	for impl in C RUST; do
		measure $impl "$kind" "$args" "$label" "$mode"
	done
done <<SPECS
p
p a=%di
p a=\$stack1
p a=\$stack
p a=\$arg1
p a=@jiffies
p a=\\1234
p c=\$comm
p a=%di b=%si c=\$stack0 d=\$comm
p a=%di b=%si c=%dx d=%cx
p a=%di b=%si c=%dx d=%cx e=%r8 f=%r9 g=%ax h=%bx
$ARGS128||p 128 registers
p u=+0(%di):u64
p f=+0(+8(%di)):u32
# BTF field chains and the programs a user would write by hand for them,
# on __task_pid_nr_ns(), which getppid calls once (the syscall wrapper has
# no BTF). The offsets are this kernel's (task_struct's pid, real_parent
# and comm: scripts/bench-vm.sh reads them from its BTF; 6.12's are 1024,
# 1040 and 1504).
p a=task->pid|at:__task_pid_nr_ns|p a=task->pid (BTF, on __task_pid_nr_ns)
p a=+$PID_OFF(%di):s32|at:__task_pid_nr_ns|p a=+$PID_OFF(%di):s32 (on __task_pid_nr_ns)
p s=task->real_parent->comm:string|at:__task_pid_nr_ns|p s=task->real_parent->comm:string (BTF, on __task_pid_nr_ns)
p s=+$COMM_OFF(+$PARENT_OFF(%di)):string|at:__task_pid_nr_ns|p s=+$COMM_OFF(+$PARENT_OFF(%di)):string (on __task_pid_nr_ns)
# Linux 7.3's: the current task, a field of it (BTF, and by hand), a
# per-CPU variable, a typecast chain (and the hand-written row above).
p a=\$current
p a=\$current->pid
p a=+$PID_OFF(\$current):s32
p a=this_cpu_read(@cpu_number):u32
p s=(task_struct)task->real_parent->comm:string|at:__task_pid_nr_ns|p s=(task_struct)task->real_parent->comm:string (typecast, on __task_pid_nr_ns)
p s=@init_uts_ns:string
p s=@linux_banner:string
p u=+0(+112(%di)):ustring
p y=@linux_banner:symbol
# Without the series' first patch, C's symstr wrote sprint_symbol()'s whole
# KSYM_NAME_LEN reach into the record (kallsyms_lookup_buildid() sets
# namebuf[KSYM_NAME_LEN - 1]): near the end of a ring-buffer page that
# overwrote the next page, and the kernel oopsed within this row's loop
# (6.12, C alone). With it, C formats aside as the module does.
p y=@linux_banner:symstr
p x=@linux_banner:u8[16]
p b=@linux_banner:b4@4/32
r r=\$retval
r a=\$arg1
p+9||p at __x64_sys_getppid+9 (optprobe)
p+9|int3|p at __x64_sys_getppid+9 (int3)
p a=%di|filter|p a=%di, a filter that rejects
p|two|p, enabled in two instances
p|off|tracing_on=0 p
p|soft|p, soft-disabled (the floor: kprobe core and dispatch)
SPECS
