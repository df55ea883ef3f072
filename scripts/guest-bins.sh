#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The programs and data the guests take from build/bin (/rkpe/bin/ in the
# initramfs), each rebuilt only when its source is newer or its content
# changed, so that the initramfs is not rebuilt for nothing:
#   guest-bins.sh [--arch x86|arm64] [NAME...]
#                             perf_bpf getppid_loop timed_write rkpe-trigger hostile
#                             (all by default); for arm64 into build/bin-arm64
#                             (lib.sh guest_bin_dir), with clang and lld
# make check builds them all before its lanes: the initramfs then holds the
# same files whichever lane gets where first (scripts/vm.sh --c-only keys
# C's runs on its content). HOSTILE_COUNT: lines generated for hostile.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
arch=$(arches | head -1)
if [ "${1:-}" = --arch ]; then arch=$2; shift 2; fi
bin=$(guest_bin_dir "$arch") || exit 1
read -ra cc <<< "$(guest_cc "$arch")"
mkdir -p "$bin"
static() { # NAME SOURCE [CC FLAGS...]
	local out=$bin/$1 src=$2
	shift 2
	[ "$out" -nt "$src" ] || "${cc[@]}" -O2 -static "$@" -o "$out" "$src"
}
names=("$@")
# (rkpe-trigger is the client tools', which run on x86 only.)
if [ $# = 0 ]; then
	case "$arch" in
	arm64) names=(perf_bpf getppid_loop hostile) ;;
	*) names=(perf_bpf getppid_loop timed_write rkpe-trigger hostile) ;;
	esac
fi
for n in "${names[@]}"; do
	case "$n" in
	perf_bpf) static perf_bpf "$ROOT/tests/bench/perf_bpf.c" ;;
	getppid_loop) static getppid_loop "$ROOT/tests/bench/getppid_loop.c" ;;
	timed_write) static timed_write "$ROOT/tests/bench/timed_write.c" ;;
	rkpe-trigger) static rkpe-trigger "$ROOT/tests/tools/trigger.c" ;;
	hostile)
		# scripts/hostile.sh's lines and program, copied only when changed.
		hb=$ROOT/build/hostile
		mkdir -p "$hb"
		python3 "$ROOT/scripts/hostile-lines.py" --count "${HOSTILE_COUNT:-20000}" "$hb/lines"
		"${cc[@]}" -O2 -Wall -Wextra -Werror -static -o "$hb/hostile-$arch" "$ROOT/tests/hostile/hostile.c"
		cmp -s "$hb/lines" "$bin/hostile.lines" || cp "$hb/lines" "$bin/hostile.lines"
		cmp -s "$hb/hostile-$arch" "$bin/hostile" || cp "$hb/hostile-$arch" "$bin/hostile"
		;;
	*) die "guest-bins.sh: no program $n" ;;
	esac
done
