#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The experiment behind "The kretprobe oops" (NOTES.md): the `test` kernel
# (the module's return probes) and the `ref` kernel (C's, --c-only) with
# scripts/stale-int3.patch (investigation only, never in the series), each
# running guest/retprobe_race.sh on QEMU 10.0 (vm.sh --fixed-qemu: both
# vCPUs truly in parallel) for SECONDS of guest time.
#
# The patch counts, without changing what the kernel does otherwise:
# - every int3 trap that text_poke_bp() no longer claims at an address whose
#   memory holds no int3 and whose kprobe (if any) is ftrace-based
#   ("rkpe-stale-int3"), with the generation of the last write of that
#   site's final first byte and the last generation this CPU serialized
#   after (do_sync_core()); it then resumes at the address instead of
#   jumping to the NULL ainsn.insn of an ftrace kprobe (the RIP 0 of the
#   oops), so a run counts such traps instead of dying. "STALE" means the
#   CPU executed an int3 after it had serialized following the write that
#   removed it: what x86 forbids (SDM vol. 3A, 9.1.3, cross-modifying code)
#   and a stale translation in the emulator allows;
# - an unclaimed int3 at an ftrace kprobe's site whose memory does hold one
#   (logged, then the kernel goes on as without the patch);
# - in arch_rethook_prepare(), a return address of 0, or one already the
#   trampoline's on a frame no node of the task hooked ("rkpe-rethook",
#   with one WARN each).
#   stale-int3.sh [SECONDS [VARIANT...]]   (default: 1200 test ref)
# Prints, per variant, the rounds run and what was counted; the whole
# console logs are build/results/stale-int3-VARIANT.log.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

secs=${1:-1200}
shift || true
variants=("$@")
[ ${#variants[@]} -gt 0 ] || variants=(test ref)
for v in "${variants[@]}"; do
	# (Each has its overlay row, stale-int3-VARIANT, in scripts/variants.tsv.)
	[ "$(variant_base "stale-int3-$v" 2>/dev/null)" = "$v" ] || die "stale-int3.sh: test or ref, not $v"
	bash "$ROOT/scripts/kernel.sh" "$v" >&2
done
src=$(readlink -f "$ROOT/build/tree")
export KBUILD_BUILD_TIMESTAMP='Thu Jan  1 00:00:00 UTC 2026' KBUILD_BUILD_VERSION=1 \
	KBUILD_BUILD_USER=rkpe KBUILD_BUILD_HOST=rkpe
# The compilers through ccache, as kernel.sh has them: the objects the
# patch does not touch come from the cache.
export PATH=$CACHE/ccache/bin:$PATH CCACHE_DIR=$CACHE/ccache/store CCACHE_NOHASHDIR=1 CCACHE_MAXSIZE=15G
LIBCLANG_PATH=$(tree_libclang "$src")
llvm=$(tree_llvm "$src")
export LIBCLANG_PATH
for v in "${variants[@]}"; do
	d=$CACHE/stale-int3-$v
	key=$(cat "$src/.key" "$ROOT/scripts/stale-int3.patch" "$CACHE/out-$v/.config" | sha256sum | cut -c1-40)
	if [ "$(cat "$d/.key" 2>/dev/null)" != "$key" ]; then
		(
			lock_build_cache
			stage "build $v with scripts/stale-int3.patch"
			rm -rf "$d" && mkdir -p "$d"
			# A hard-linked copy of the tree: patch(1) writes new files, so
			# the tree shared with the other builds keeps its content.
			cp -al "$src" "$d/tree"
			patch -s -p1 -d "$d/tree" < "$ROOT/scripts/stale-int3.patch"
			# A copy of the variant's build, built again where the patch
			# changed it: in a mount namespace of its own, the patched copy
			# is seen at the tree's path, which kbuild's command lines
			# hold (elsewhere, every object would be rebuilt).
			cp -a "$CACHE/out-$v" "$d/out"
			rm -rf "$d/out/modroot"
			unshare -m --propagation private bash -c '
				set -e
				mount --bind "$1/tree" "$2"
				make -s -C "$2" O="$1/out" LLVM="$3" -j"$4" bzImage modules
				make -s -C "$2" O="$1/out" LLVM="$3" INSTALL_MOD_PATH="$1/out/modroot" \
					INSTALL_MOD_STRIP=1 modules_install > /dev/null
			' sh "$d" "$src" "$llvm" "$(($(nproc) + 1))"
			echo "$key" > "$d/.key"
			done_stage
		)
	fi
	b=$ROOT/build/stale-int3-$v
	mkdir -p "$b"
	ln -sfn "$d/out/arch/x86/boot/bzImage" "$b/bzImage"
	ln -sfn "$d/out/modroot" "$b/modroot"
	ln -sfn "$d/out" "$b/out"
done
qemu=$(bash "$ROOT/scripts/qemu-fixed.sh")
for v in "${variants[@]}"; do
	log=$ROOT/build/results/stale-int3-$v.log
	mkdir -p "$(dirname "$log")"
	# On ref, C alone: the module may not load.
	append=
	[ "$(variant_kind "$v")" = ref ] && append=module_blacklist=rust_kprobe_events
	set +e
	RKPE_APPEND=$append bash "$ROOT/scripts/vm.sh" --fixed-qemu --timeout $((secs * 2 + 300)) --log "$log" \
		"stale-int3-$v" -- "sh /rkpe/guest/retprobe_race.sh define $secs" > /dev/null 2>&1
	rc=$?
	set -e
	n=$(grep -a -c 'rkpe-stale-int3: .*memory holds [0-9a-f][0-9a-f],' "$log" || true)
	stale=$(grep -a -c 'rkpe-stale-int3:.*STALE' "$log" || true)
	held=$(grep -a -c 'rkpe-stale-int3: .*memory holds an int3' "$log" || true)
	rh=$(grep -a -c 'rkpe-rethook:' "$log" || true)
	oops=$(grep -a -c -E '(BUG:|Oops|general protection fault|RIP: 0010:0x0)' "$log" || true)
	echo "$v on $($qemu --version | sed -n 1p), vm.sh status $rc: $(grep -a -o 'retprobe_race: .*' "$log" | tail -1 || echo 'no result');" \
		"$n int3 traps where memory no longer held an int3 ($stale of them after the CPU had serialized: STALE)," \
		"$held unclaimed at an ftrace kprobe whose site held one, $rh return addresses 0 or hooked twice, $oops oops lines"
done
