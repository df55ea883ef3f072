#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The experiment behind "The kretprobe oops" (README): the `ref` kernel with
# scripts/stale-int3.patch (investigation only, never in the series), run
# with guest/retprobe_race.sh on Debian 12's QEMU 7.2 and on QEMU 10.0
# (vm.sh --fixed-qemu), both with multi-threaded TCG. The patch logs every
# int3 trap that text_poke_bp() no longer claims at an address whose memory
# holds no int3 and whose kprobe (if any) is ftrace-based, with the
# generation of the last write of that site's final first byte and the last
# generation this CPU serialized after (do_sync_core()); it then resumes at
# the address instead of jumping to the NULL ainsn.insn of an ftrace kprobe
# (the RIP 0 of the oops), so a run counts such traps instead of dying.
# "STALE" means the CPU executed an int3 after it had serialized following
# the write that removed it: what x86 forbids (SDM vol. 3A, 9.1.3,
# cross-modifying code) and a stale translation in the emulator allows.
#   stale-int3.sh [SECONDS]   (default 120 per QEMU; ~5 min to build first)
# Prints, per QEMU, the rounds run and the traps counted.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

secs=${1:-120}
bash "$ROOT/scripts/kernel.sh" ref >&2
lock_build_cache
src=$(readlink -f "$ROOT/build/tree")
d=$CACHE/stale-int3
key=$(cat "$src/.key" "$ROOT/scripts/stale-int3.patch" "$CACHE/out-ref/.config" | sha256sum | cut -c1-40)
if [ "$(cat "$d/.key" 2>/dev/null)" != "$key" ]; then
	stage "build ref with scripts/stale-int3.patch"
	rm -rf "$d" && mkdir -p "$d/out"
	# A hard-linked copy of the tree, the files the patch edits copied
	# apart: the tree shared with the other builds keeps its content.
	cp -al "$src" "$d/tree"
	patched_files "$ROOT/scripts/stale-int3.patch" | while read -r f; do
		cp --remove-destination "$src/$f" "$d/tree/$f"
	done
	patch -s -p1 -d "$d/tree" < "$ROOT/scripts/stale-int3.patch"
	cp "$CACHE/out-ref/.config" "$d/out/.config"
	export KBUILD_BUILD_TIMESTAMP='Thu Jan  1 00:00:00 UTC 2026' KBUILD_BUILD_VERSION=1 \
		KBUILD_BUILD_USER=rkpe KBUILD_BUILD_HOST=rkpe
	kmake() { make -s -C "$d/tree" O="$d/out" LLVM=1 -j"$(( $(nproc) + 1 ))" "$@"; }
	kmake olddefconfig
	kmake bzImage modules
	kmake INSTALL_MOD_PATH="$d/out/modroot" INSTALL_MOD_STRIP=1 modules_install > /dev/null
	echo "$key" > "$d/.key"
	done_stage
fi
exec 9>&- # the VM runs need no build lock
b=$ROOT/build/stale-int3
mkdir -p "$b"
ln -sfn "$d/out/arch/x86/boot/bzImage" "$b/bzImage"
ln -sfn "$d/out/modroot" "$b/modroot"
for q in host fixed; do
	opt=() qemu=qemu-system-x86_64
	[ $q = fixed ] && opt=(--fixed-qemu) qemu=$(bash "$ROOT/scripts/qemu-fixed.sh")
	log=$ROOT/build/results/stale-int3-$q.log
	mkdir -p "$(dirname "$log")" && rm -f "$log"
	rc=0
	bash "$ROOT/scripts/vm.sh" "${opt[@]}" --timeout $((secs + 300)) --log "$log" stale-int3 -- \
		"sh /rkpe/guest/retprobe_race.sh define $secs" > /dev/null 2>&1 || rc=$?
	[ -f "$log" ] || die "no log from the run on $q QEMU (vm.sh: $rc)"
	n=$(grep -a -c 'rkpe-stale-int3:' "$log" || true)
	stale=$(grep -a -c 'rkpe-stale-int3:.*STALE' "$log" || true)
	echo "$($qemu --version | sed -n 1p): vm.sh $rc, $(grep -a -o 'retprobe_race: .*' "$log" | tail -1 || echo 'no result');" \
		"${n:-0} int3 traps at a site memory no longer held an int3, ${stale:-0} of them after the CPU had serialized (STALE)"
done
