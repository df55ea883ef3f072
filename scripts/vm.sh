#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot a variant under QEMU (TCG, 2 CPUs, with its arch row's QEMU, machine
# and console in scripts/variants.tsv: qemu-system-x86_64 -machine q35, or
# qemu-system-aarch64 -machine virt for the arm64 variants) and run a shell
# command in the guest.
#   vm.sh [--timeout S] [--log FILE] [--icount] [--hostroot] [--allow-warning ERE]
#         [--c-only] [--single-thread] [--fixed-qemu] VARIANT -- COMMAND...
#   vm.sh [--hostroot] --shell VARIANT
# --hostroot shares the host's / read-only over virtio-9p (tag "hostroot")
# and gives the guest 3G: guest/hostroot.sh mounts it for chroot (an arch
# whose caps have hostroot: the host's userland must run in the guest).
# Streams the serial console. Exit status: the command's, or 124 on timeout,
# or 125 when the kernel printed an oops, panic, BUG:, WARNING: or other splat
# line (or the guest never reported a result). --allow-warning ERE: a
# "WARNING:" line that matches ERE does not count (the kernel core's own
# warnings under fault injection, see tests/vm/failslab.sh); every other
# splat still does. RKPE_APPEND adds kernel parameters (for experiments).
#
# --single-thread: QEMU runs both virtual CPUs on one host thread in turn
# (`-accel tcg,thread=single`) instead of one thread each. The guest is
# still SMP, its CPUs interleaved. For experiments: the host's QEMU 7.2
# with a thread a vCPU can keep executing text that the kernel has patched
# (NOTES.md, "The kretprobe oops"), which this hides and --fixed-qemu avoids.
#
# --fixed-qemu: run on the QEMU of scripts/qemu-fixed.sh (Debian's backport
# of 10.0, unpacked into the cache) instead of the host's 7.2, whose
# multi-threaded TCG can keep executing kernel text that another vCPU has
# patched (NOTES.md, "The kretprobe oops"). Multi-threaded TCG there keeps
# x86's cross-modifying-code rule, so both vCPUs run truly in parallel while
# kprobes and ftrace patch the text (an arch whose caps have fixed-qemu).
#
# --c-only (on `ref`): the run tests the C implementation alone, so the
# module is blacklisted (module_blacklist=: loading it fails, and so does
# the run). What such a run prints depends only on the kernel, the
# initramfs without the module, QEMU and its command line, the command
# and, with --hostroot, the host's packages: a run that passed with exactly these inputs is replayed
# from $CACHE/c-runs/ instead of booted again (it says so on stderr).
# RKPE_C_CACHE=0 always boots. The module's side of a comparison is never
# replayed, nor is an -icount run.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

timeout=600 log= shell=0 icount=() mem=1G hostroot=() allow= c_only=0 accel=() fixed=0 firmware=()
while [ $# -gt 0 ]; do
	case "$1" in
	--timeout) timeout=$2; shift 2 ;;
	--log) log=$2; shift 2 ;;
	--allow-warning) allow=$2; shift 2 ;;
	--c-only) c_only=1; shift ;;
	--single-thread) accel=(-accel tcg,thread=single); shift ;;
	--fixed-qemu) fixed=1; shift ;;
	--icount) icount=(-icount shift=0,sleep=off); shift ;;
	--shell) shell=1; shift ;;
	--hostroot)
		hostroot=(-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap)
		mem=3G; shift ;;
	*) break ;;
	esac
done
variant=${1:?variant}; shift
[ "${1:-}" = "--" ] && shift

b=$ROOT/build/$variant
image=$(kernel_image "$variant")
[ -e "$image" ] || die "${image#"$ROOT/"} missing: run scripts/kernel.sh $variant"
img=$(bash "$ROOT/scripts/initramfs.sh" "$variant")

arch=$(variant_arch "$variant")
if [ $fixed = 1 ]; then
	arch_can "$variant" fixed-qemu || die "--fixed-qemu is not for $arch variants (scripts/variants.tsv, its caps)"
	qemu_bin=$(bash "$ROOT/scripts/qemu-fixed.sh")
	# Its SeaBIOS and firmware; the NIC's option ROM from the host's
	# ipxe-qemu (installed with the host's QEMU, scripts/deps.sh).
	firmware=(-L "${qemu_bin%/bin/*}/share/seabios" -L "${qemu_bin%/bin/*}/share/qemu" -L /usr/lib/ipxe/qemu)
	# Its own modules, not the host QEMU's.
	export QEMU_MODULE_DIR=${qemu_bin%/bin/*}/lib/x86_64-linux-gnu/qemu
else
	qemu_bin=${RKPE_QEMU:-$(table_field arch "$arch" 4)} # RKPE_QEMU: another program in its place (a test of this script)
fi
[ ${#hostroot[@]} = 0 ] || arch_can "$variant" hostroot ||
	die "--hostroot is not for $arch variants (the host's userland is x86; scripts/variants.tsv, its caps)"
machine=(-machine "$(table_field arch "$arch" 5)") console=$(table_field arch "$arch" 6)
qemu=("$qemu_bin" "${firmware[@]}" "${machine[@]}" "${accel[@]}" -cpu max -smp 2 -m "$mem" -nographic -no-reboot
	-kernel "$image" -initrd "$img" "${icount[@]}" "${hostroot[@]}")
append="console=$console panic=-1 printk.time=1 quiet loglevel=5${RKPE_APPEND:+ $RKPE_APPEND}"
# A KASAN kernel on x86 boots with 4-level paging (no5lvl). With 5-level
# (QEMU's -cpu max has LA57), an interrupt that lands while identify_cpu()
# has zeroed boot_cpu_data's capabilities (arch/x86/kernel/cpu/common.c
# :1899 in 6.12, before the alternatives are applied) finds
# pgtable_l5_enabled() false, so KASAN's range (KASAN_SHADOW_START, from
# __VIRTUAL_MASK_SHIFT) leaves out the 5-level direct map and it reports
# the irq_desc's lock as a wild-memory-access, in handle_edge_irq() from
# identify_cpu+0x1fb: a false report of the pristine kernel, seen twice in
# one make check on 2026-12-05 with the host loaded, never in six boots on
# an idle one.
if [ "$arch" = x86 ] && grep -qx 'CONFIG_KASAN=y' "$b/out/.config" 2> /dev/null; then
	append+=" no5lvl"
fi
# A built-in parameter the kernel crate's module_param doctest reads back.
module_variant "$variant" && append+=" rkpe_doctest.greeting=hello"
if [ $c_only = 1 ]; then
	[ "$(variant_kind "$variant")" = ref ] || die "--c-only is for the ref variants"
	append+=" module_blacklist=rust_kprobe_events"
fi

if [ $shell = 1 ]; then
	exec "${qemu[@]}" -append "$append rkpe.shell"
fi

cmd=$*
# On a debug kernel, a kmemleak report that names the module fails the run
# (not on an overlay of one: debug-broken's run is meant to fail).
[ "$(variant_kind "$variant")" = debug ] && cmd="(
$cmd
); rc=\$?; sh /rkpe/guest/kmemleak.sh || rc=1; exit \$rc"
cmd=$(printf '%s' "$cmd" | base64 -w0)
[ -n "$log" ] || log=$(mktemp)
mkdir -p "$(dirname "$log")"
replay=
if [ $c_only = 1 ] && [ "${RKPE_C_CACHE:-1}" != 0 ] && [ ${#icount[@]} = 0 ] && [ -s "$img.c-key" ]; then
	key=$({
		sha256sum < "$image"
		cat "$img.c-key"
		# QEMU's command line but the paths of the kernel and the
		# initramfs, whose contents are above.
		printf '%s\n' "${qemu[@]/#\/*/}" "$append" "$cmd" "$timeout" "$allow"
		"$qemu_bin" --version
		[ ${#hostroot[@]} = 0 ] || dpkg-query -W
	} | sha256sum | cut -c1-40)
	replay=$CACHE/c-runs/$key
fi
rm -f "$log.c-run"
[ -z "$replay" ] || echo "$replay" > "$log.c-run" # for c_runs_judged (lib.sh)
if [ -n "$replay" ] && [ -f "$replay" ]; then
	echo "vm: C's run replayed from $replay (passed before with the same ref kernel, initramfs, command$([ ${#hostroot[@]} = 0 ] || echo ' and host packages'); RKPE_C_CACHE=0 boots it)" >&2
	cp "$replay" "$log"
	cat "$log"
	qrc=0
else
	# The guest runs beside scripts/qemu-monitor.py, on a monitor socket
	# of its own: 5 s before the time is up it records where the vCPUs
	# are, for the report below; before that, it ends a guest that has
	# lost its timer interrupts (RCU's "kthread timer wakeup didn't
	# happen", then silence, every vCPU halted: an emulator fault that
	# never recovers) and writes $log.lost-timer. Such a run is booted
	# once more, its first console kept as $log.lost-timer-1; a second
	# loss fails the run.
	rm -f "$log.lost-timer-1" "$log.lost-timer-1.vcpus" "$log.emulator-crash-1"
	# An emulator fault (KIND) on the first boot: its console kept as
	# $log.KIND-1, and one more boot; on the second, the run fails with
	# STATUS.
	boot_again() { # KIND STATUS
		if [ $attempt = 2 ]; then
			echo "vm: it happened twice in a row: the run fails" >&2
			exit "$2"
		fi
		cp "$log" "$log.$1-1"
		echo "vm: its console is kept in $log.$1-1; booting the run once more" >&2
	}
	for attempt in 1 2; do
		mon=$(mktemp -u "${TMPDIR:-/tmp}/rkpe-monitor.XXXXXX")
		rm -f "$log.vcpus" "$log.lost-timer"
		python3 "$ROOT/scripts/qemu-monitor.py" "$mon" $((timeout > 10 ? timeout - 5 : timeout)) \
			"$b/out/System.map" "$log" > "$log.vcpus" 2>&1 < /dev/null &
		watcher=$!
		set +e
		timeout --foreground "$timeout" "${qemu[@]}" -append "$append rkpe.cmd=$cmd" \
			-serial stdio -monitor "unix:$mon,server=on,wait=off" -display none </dev/null 2>&1 | tr -d '\r' | tee "$log"
		qrc=${PIPESTATUS[0]}
		kill "$watcher" 2>/dev/null
		wait "$watcher" 2>/dev/null
		set -e
		rm -f "$mon"
		# QEMU itself killed by a signal (134: an abort; not the
		# timeout's 124) before the guest said its result: an
		# emulator crash. Once, on CI at 2026-12-07 (a debug guest on
		# QEMU 10, 10 s into its boot; its message was in a log CI does
		# not keep), hence its last lines on stderr and one more boot.
		if [ "$qrc" -gt 128 ] && ! grep -q '^RKPE-RESULT: ' "$log"; then
			echo "vm: QEMU ended by signal $((qrc - 128)) before the guest's result: an emulator fault, not the test's; its last lines:" >&2
			tail -n 12 "$log" | sed 's/^/vm: emulator crash | /' >&2
			boot_again emulator-crash 125
			continue
		fi
		[ -e "$log.lost-timer" ] || break
		echo "vm: the guest lost its timer interrupts ($(cat "$log.lost-timer")): an emulator fault, not the test's" >&2
		grep -E "kthread timer wakeup didn't happen|^(CPU#|RIP=)" "$log" "$log.vcpus" | sed 's/^/vm: lost timer | /' >&2
		cp "$log.vcpus" "$log.lost-timer-1.vcpus"
		boot_again lost-timer 124
	done
fi
# A kernel message printed while the guest was in the middle of a line (a
# loaded host makes e.g. the clocksource watchdog talk) cuts that line in
# two on the console: move such messages after the line they cut, so that
# what the tests printed reads whole in the log (the splat checks below see
# the messages at the start of their own lines).
# (Lines with an escape, the firmware's screen clearing, are left alone.)
TS=$KMSG_TS perl -0pi -e 'my $ts = qr/$ENV{TS}/; s/^(?!$ts)([^\n\e]+?)((?:$ts[^\n]*\n)+)((?!$ts)[^\n]*\n)/$1$3$2/mg' "$log"
if [ "$qrc" = 124 ]; then
	# What the guest printed last and where its vCPUs were, on stderr
	# (check.sh repeats a failed stage's "timed out" lines at the end).
	echo "vm: timed out after ${timeout}s; the console's last lines:" >&2
	tail -n 8 "$log" | sed 's/^/vm: timed out | /' >&2
	if [ -s "$log.vcpus" ]; then
		echo "vm: timed out; the vCPUs 5 s before (QEMU monitor, info registers -a):" >&2
		grep -E '^(CPU#|RIP=)|qemu-monitor' "$log.vcpus" | sed 's/^/vm: timed out | /' >&2
	fi
	exit 124
fi
splats() {
	grep -E "^$KMSG_TS(WARNING:|BUG:|Oops|Kernel panic|general protection fault|kernel BUG|Internal error:|Unable to handle kernel|INFO: trying to register non-static key|UBSAN:|rcu: INFO: rcu_[a-z]+ (self-)?detected stall|watchdog: BUG:|INFO: task .* blocked for more than)" "$log" |
		{ if [ -n "$allow" ]; then grep -Ev "\] WARNING:.*($allow)" || true; else cat; fi; }
}
if [ -n "$allow" ] && grep -E "^${KMSG_TS}WARNING:" "$log" | grep -E "$allow" > /dev/null; then
	echo "vm: allowed warnings (--allow-warning):" >&2
	grep -E "^${KMSG_TS}WARNING:" "$log" | grep -E "$allow" | head -5 >&2
fi
found=$(splats || true)
if [ -n "$found" ]; then
	echo "vm: the kernel reported a problem:" >&2
	echo "$found" | head -5 >&2
	exit 125
fi
rc=$(sed -n 's/^RKPE-RESULT: \([0-9]*\)$/\1/p' "$log" | tail -1)
if [ -z "$rc" ]; then
	echo "vm: the guest reported no result (QEMU's status $qrc); the console's last lines:" >&2
	tail -n 12 "$log" | sed 's/^/vm: no result | /' >&2
	exit 125
fi
if [ -n "$replay" ] && [ "$rc" = 0 ] && [ ! -f "$replay" ]; then
	mkdir -p "$(dirname "$replay")"
	cp "$log" "$replay.$$" && mv "$replay.$$" "$replay"
fi
exit "$rc"
