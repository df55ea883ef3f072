# SPDX-License-Identifier: GPL-2.0
# Sourced by tests/tools/*.sh, which run in the guest under
# `chroot /host` (guest/hostroot.sh): the host's tools, the guest's kernel.
# Each test prints normalized output (no timestamps, pids, CPU numbers or
# kernel addresses) that scripts/tools.sh compares with NAME.expect.
T=/sys/kernel/tracing
TRIG=/tmp/rkpe/bin/rkpe-trigger
D=/tmp/trig
export HOME=/tmp PATH=/usr/sbin:/usr/bin:/sbin:/bin PYTHONUNBUFFERED=1 LC_ALL=C TERM=dumb PAGER=cat PERF_PAGER=cat
mkdir -p "$D" && : > "$D/present"
cd /tmp
# The open path's function that takes (dfd, struct filename *, op):
# do_filp_open on 6.12, renamed do_file_open by 7.3. The outputs show it as
# do_filp_open (norm), so that one expectation serves both kernels.
OPEN=do_filp_open
grep -qw do_filp_open /proc/kallsyms || OPEN=do_file_open

# The tracefs state a test starts from: no probes, nothing enabled.
reset() {
	echo 0 > $T/tracing_on
	echo > $T/set_event
	echo > $T/kprobe_events
	echo > $T/trace
	echo 1 > $T/tracing_on
}
# Define probes in kprobe_events, one argument a line; report a refusal.
defprobe() {
	for spec; do
		echo "$spec" >> $T/kprobe_events || echo "refused: $spec"
	done
}
# The probes perf.sh and trace_cmd.sh trace: every fetch kind a tool must
# parse (register, dereferences, string, array, bitfield, symbol, %pd,
# %pD, a return probe), each hit by the trigger.
defprobes_fetch_kinds() {
	defprobe 'p:kprobes/rk_getppid __x64_sys_getppid' \
		'p:kprobes/rk_open '$OPEN' dfd=%di:s32 path=+0(+0(%si)):string head=+0(+0(%si)):u8[4] nib=+0(+0(%si)):b4@4/8 caller=$stack0:symbol' \
		'p:kprobes/rk_vfsopen vfs_open name=+8(%di):%pd' \
		'p:kprobes/rk_flush filp_flush file=%di:%pD' \
		'r:kprobes/rk_open_ret do_sys_openat2 ret=$retval:s32'
}
# Kernel addresses, symbol offsets, pids, CPUs and times out.
norm() {
	sed -E \
		-e 's/\b(0x)?ffff[0-9a-f]{12}\b/\1ADDR/g' \
		-e 's/\+0x[0-9a-f]+\/0x[0-9a-f]+/+OFF/g' \
		-e 's/\+0x[0-9a-f]+\b/+OFF/g' \
		-e 's/_text\+[0-9]+/_text+OFF/g' | renames
}
# The kernel's function names as 6.12 has them (see OPEN).
renames() {
	sed -E 's/\bdo_file_open\b/do_filp_open/g'
}
# bcc compiles against the headers guest/hostroot.sh gathers there.
export BCC_KERNEL_SOURCE=/tmp/kernel
# bcc and bpftrace (through libbcc) create their kprobes with the kprobe PMU
# (perf_event_open type /sys/bus/event_source/devices/kprobe/type) where
# the kernel has one (C's kprobe events serve it, or the module on a kernel
# without them); where it has none, they write kprobe_events
# (p:kprobes/p_FUNC_bcc_PID ...) and attach to that event. Hide the PMU to
# test that second path.
hide_kprobe_pmu() {
	[ ! -e /sys/bus/event_source/devices/kprobe ] ||
		mount -t tmpfs none /sys/bus/event_source/devices/kprobe
}
# Undo hide_kprobe_pmu (an earlier test of the same boot may have hidden it).
show_kprobe_pmu() {
	! mountpoint -q /sys/bus/event_source/devices/kprobe ||
		umount /sys/bus/event_source/devices/kprobe
}
