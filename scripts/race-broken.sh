#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The race stage must fail on a real fault in the module's return-probe
# path, not only pass (NOTES.md, "The kretprobe oops"). This builds the module
# with tests/broken/free-before-grace-period.patch (a removed return probe's
# data freed while its kretprobe is still registered, before the grace
# period of its unregistration has ended) against the built `debug` kernel
# (KASAN), then runs make check's debug race stage on it: `debug-broken` is
# the `debug` kernel with that module in place of the module. Passes when
# that run fails with a KASAN report in the module's return-probe removal;
# fails when the run passes, or when it fails for another reason twice (a
# run that fails without the report is made once more).
#   race-broken.sh [SECONDS]   (default 30)
#   race-broken.sh --build     (only build the module: make check does it
#                               before the VM lanes, one build at a time)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

build_only=0
[ "${1:-}" = --build ] && { build_only=1; shift; }
secs=${1:-30}
patchf=$ROOT/tests/broken/free-before-grace-period.patch
# The overlay and the kernel it is made from (scripts/variants.tsv).
overlay=debug-broken
base=$(variant_base "$overlay")
out=$(readlink -f "$ROOT/build/$base/out")
src=$(variant_tree "$base")
[ -e "$out/vmlinux" ] || die "race-broken.sh: build the debug kernel first (scripts/kernel.sh debug)"
d=$CACHE/broken-debug
# The module is built against the debug kernel's own kernel crate: its
# metadata is in the key, so a rebuilt kernel rebuilds the module.
key=$(cat "$src/.key" "$patchf" "$out/rust/libkernel.rmeta" "$out/.config" | sha256sum | cut -c1-40)
if [ "$(cat "$d/.key" 2>/dev/null)" != "$key" ]; then
	(
		lock_build_cache
		stage "build the module with ${patchf#"$ROOT/"} for debug"
		rm -rf "$d" && mkdir -p "$d/src"
		cp -a "$src/kernel/trace/rust_kprobe_events/." "$d/src/"
		# The patch is against src/ of this repository: the tree's copy
		# of it is the same files without that directory.
		patch -s -p2 -d "$d/src" < "$patchf"
		export PATH=$CACHE/ccache/bin:$PATH CCACHE_DIR=$CACHE/ccache/store CCACHE_NOHASHDIR=1
		LIBCLANG_PATH=$(tree_libclang "$src")
		export LIBCLANG_PATH
		make -s -C "$src" O="$out" LLVM="$(tree_llvm "$src")" M="$d/src" -j"$(($(nproc) + 1))" modules
		echo "$key" > "$d/.key"
		done_stage
	)
fi
[ $build_only = 0 ] || exit 0
# debug-broken: the debug kernel, its modules with the broken module.
b=$ROOT/build/$overlay
rm -rf "$b" && mkdir -p "$b"
ln -sfn "$(readlink -f "$(kernel_image "$base")")" "$(kernel_image "$overlay")"
ln -sfn "$out" "$b/out"
cp -a "$(readlink -f "$ROOT/build/$base/modroot")" "$b/modroot"
trap 'rm -rf "$b/modroot"' EXIT
ko=$(find "$b/modroot" -name rust_kprobe_events.ko)
[ -n "$ko" ] || die "race-broken.sh: no rust_kprobe_events.ko in the debug modules"
cp "$d/src/rust_kprobe_events.ko" "$ko"
log=$ROOT/build/results/retprobe_race-debug-broken.log
# A run that fails without KASAN's report failed for another reason (on
# 2026-12-04 in CI, beside a guest that lost its timer interrupts): it
# says nothing about whether the fault is caught, so the run is made once
# more, its findings printed first. A run that passes fails the stage at
# once: the fault went unseen.
for attempt in 1 2; do
	set +e
	bash "$ROOT/scripts/vm.sh" --fixed-qemu --timeout 600 --log "$log" "$overlay" -- \
		"sh /rkpe/guest/retprobe_race.sh define $secs" > /dev/null 2> "$log.vm"
	rc=$?
	set -e
	grep '^vm: the guest lost its timer' "$log.vm" || true # counted by check.sh
	if [ "$rc" = 0 ]; then
		echo "race-broken.sh: the race stage PASSED on the deliberately broken module: it would not catch that fault ($log)"
		exit 1
	fi
	# What must be there: KASAN's report, from the module's code. (grep
	# reads to the end, not -q: under pipefail, sed killed by SIGPIPE when
	# grep -q stops early made the pipeline fail on a report that was there.)
	report=$(grep -a -m1 -E 'BUG: KASAN: [a-z-]+' "$log" || true)
	if [ -n "$report" ] && sed -n '/BUG: KASAN/,/^.*==================================================================$/p' "$log" |
		grep -a 'rust_kprobe_events' > /dev/null; then
		break
	fi
	echo "race-broken.sh: the broken module's run failed (vm.sh status $rc), but not with a KASAN report in the module ($log)"
	# What vm.sh said (the splat lines it found), and the console's end.
	sed 's/^/race-broken.sh: vm.sh | /' "$log.vm"
	grep -a -E "^$KMSG_TS" "$log" | tail -n 20 | sed 's/^/race-broken.sh: console | /'
	[ $attempt = 1 ] || exit 1
	cp "$log" "$log.attempt-1"
	echo "race-broken.sh: its console is kept in $log.attempt-1; running it once more"
done
echo "race-broken.sh: the race stage fails on the deliberately broken module (vm.sh status $rc): ${report#*] }"
