#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Builds the patch series one patch at a time (make series-build): a
# maintainer bisecting through it meets a kernel that builds, without a
# new warning, after every patch, not only after the last.
#
# A copy of the pristine source gets the patches of `make series` in order;
# after each one the kernel and its modules are built incrementally with the
# `test` variant's configuration (kconfig/base.config and test.config: the
# kernel crate, its doctests and the module), re-configured when a patch
# touches a Kconfig file (the module's symbol exists from its patch on).
# RKPE_KVER=7.3 (make series-build KERNEL=7.3): the 7.3 series on pristine
# 7.3, as `test-7.3` is configured and built (LLVM 19).
# A step fails on a build error and on a compiler warning the pristine
# build does not have.
#
# It takes about 12 minutes (more when the pristine build is not kept yet),
# which make check, run after every change of the series, does not spend;
# a passing run is remembered under the series' content and the
# configuration, and the next run of the same series says so and stops
# (--force builds again).
set -Eeuo pipefail
export LC_ALL=C
. "$(dirname "$0")/lib.sh"
trap 'echo "series-build.sh: failed (status $?) at line $LINENO: $BASH_COMMAND" >&2' ERR

force=0
[ "${1:-}" = --force ] && force=1

k=$(kver)
export RKPE_KVER=$k
pristine=$(pristine_dir "$k")
srcver=${pristine##*/pristine-}
suffix=$(release_suffix "$k")
series=$(bash "$ROOT/scripts/series.sh" "$CACHE/series$suffix")
mapfile -t patches < <(series_patches "$series")
# The test configuration without an architecture's lines, and on a later
# release its names (kconfig/7.3.config) and the symbols it no longer has
# (its release row in scripts/variants.tsv), as kernel.sh has them.
frags=("$ROOT/kconfig/base.config" "$ROOT/kconfig/test.config")
[ ! -f "$ROOT/kconfig/$k.config" ] || frags+=("$ROOT/kconfig/$k.config")
skip_more=$(table_field release "$k" 4)
skip_more=${skip_more//,/ }
llvm=$(tree_llvm "$pristine")
export LIBCLANG_PATH
LIBCLANG_PATH=$(tree_libclang "$pristine")
# What a pass depends on: the source, the configuration, the toolchain,
# this script, and the patches.
cc=clang; [ "$llvm" = 1 ] || cc=clang$llvm
tools() { $cc --version | sed -n 1p; rustc --version; bindgen --version 2>/dev/null || true; }
key=$( { echo "$srcver"; tools; cat "${frags[@]}" "$0" "$ROOT/scripts/lib.sh" "${patches[@]}"; } | sha256sum | cut -d' ' -f1)
mark=$CACHE/series-build-passed$suffix
if [ $force = 0 ] && [ "$(cat "$mark" 2>/dev/null)" = "$key" ]; then
	echo "series-build: this series built patch by patch before (${#patches[@]} patches; --force to build again)"
	exit 0
fi

lock_build_cache
# The compilers through ccache, as kernel.sh has them (it makes the links):
# a step's unchanged files, and much of the pristine build, are objects the
# kernel builds made (ccache replays their warnings too).
[ -x "$CACHE/ccache/bin/clang" ] &&
	export PATH=$CACHE/ccache/bin:$PATH CCACHE_DIR=$CACHE/ccache/store CCACHE_NOHASHDIR=1 CCACHE_MAXSIZE=15G
src=$CACHE/series-build-src$suffix
out=$CACHE/out-series-build$suffix
base=$CACHE/series-build-base$suffix
logs=$ROOT/build/results/series-build$suffix
rm -rf "$src" "$out" "$logs"
mkdir -p "$logs"

jobs=$(nproc)
kmake() { make -s -C "$src" O="$out" LLVM="$llvm" -j"$jobs" "$@"; }
# Configures from the fragments (lib.sh); the module's own symbol exists
# from its patch on.
configure() { # LOG
	local skip="CONFIG_RUST_KPROBE_EVENTS CONFIG_RUST_KPROBE_EVENTS_BTF_ARGS $skip_more"
	[ -e "$src/kernel/trace/rust_kprobe_events/Kconfig" ] && skip=$skip_more
	configure_kernel "$src" "$out" "$skip" "${frags[@]}" >>"$1" 2>&1 ||
		die "series-build: the configuration is not what kconfig/ asks for (log: $1)"
}
# A log's warnings (compilers, modpost, Kconfig), one a line, with the
# path relative to the source; a rustc warning with the `-->` location
# line that follows it.
warnings() { # LOG
	awk '
		tolower($0) ~ /(^|:) ?warning[:[]/ { if (w != "") print w; w = $0; n = 4; next }
		w != "" && /^ *--> / { print w " " $0; w = ""; next }
		w != "" && --n == 0 { print w; w = "" }
		END { if (w != "") print w }
	' "$1" | sed "s|$src/||g" | sort -u
}
# Builds; fails on an error or a compiler warning the pristine build did
# not have (6.12 with this configuration has a few, such as clang's
# -Wframe-larger-than in fs/select.c; a patch that makes a file recompile
# sees them again). Long Rust symbol names that kallsyms truncates
# (doctests' closures) are reported by kallsyms, not the compiler, as in
# every build of this tree.
build() { # NAME
	local log=$logs/$1.log new
	if ! kmake vmlinux modules >>"$log" 2>&1; then
		grep -i -m 20 -B 2 -A 8 'error' "$log" >&2 || tail -30 "$log" >&2
		echo "series-build: $1 does not build (log: $log)" >&2
		return 1
	fi
	new=$(warnings "$log" | comm -23 - <(warnings "$base/0000-pristine.log"))
	if [ -n "$new" ]; then
		echo "$new" >&2
		echo "series-build: $1 builds with a new warning (log: $log)" >&2
		return 1
	fi
}

# The pristine kernel, configured and built, is kept (keyed on the source
# package and the configuration): the steps build on a copy of it. Its
# paths are absolute in kbuild's dependency files, so it is copied back to
# where it was built.
bkey=$( { echo base-3; echo "$srcver"; tools; cat "${frags[@]}"; } | sha256sum | cut -d' ' -f1)
if [ "$(cat "$base/key" 2>/dev/null)" != "$bkey" ]; then
	stage "pristine $k, configured and built"
	rm -rf "$base" && mkdir -p "$base"
	cp -a "$pristine" "$src"
	mkdir -p "$out"
	configure "$logs/0000-pristine.log"
	kmake vmlinux modules >>"$logs/0000-pristine.log" 2>&1 ||
		die "series-build: pristine $k does not build (log: $logs/0000-pristine.log)"
	cp "$logs/0000-pristine.log" "$base/"
	cp -a "$src" "$base/src" && cp -a "$out" "$base/out"
	echo "$bkey" >"$base/key"
	done_stage
else
	stage "copy the pristine build"
	cp -a "$base/src" "$src" && cp -a "$base/out" "$out"
	done_stage
fi
for p in "${patches[@]}"; do
	name=$(basename "$p" .patch)
	stage "$name"
	(cd "$src" && patch -p1 -F0 -N -s <"$p")
	if patched_files "$p" | grep -E '(^|/)Kconfig' >/dev/null; then
		configure "$logs/$name.log"
	fi
	build "$name"
	done_stage
done
grep -x 'CONFIG_RUST_KPROBE_EVENTS=m' "$out/.config" >/dev/null ||
	die "series-build: the last step did not build the module (CONFIG_RUST_KPROBE_EVENTS)"
# The module was built, from every Rust file the series adds for it: the
# files a step adds undeclared (compiled from a later step) must all be in
# the last build's dependencies (rustc's dep-info in kbuild's .cmd file).
mdir=kernel/trace/rust_kprobe_events
[ -e "$out/$mdir/rust_kprobe_events.ko" ] ||
	die "series-build: the last step built no $mdir/rust_kprobe_events.ko"
uncompiled=$(cd "$src" && find "$mdir" -name '*.rs' | sort | while read -r f; do
	grep -q "$f" "$out/$mdir/.rust_kprobe_events.o.cmd" || echo "$f"
done)
[ -z "$uncompiled" ] || die "series-build: the module's build did not compile: $uncompiled"
echo "series-build: the module was built from all its $(cd "$src" && find "$mdir" -name '*.rs' | wc -l) Rust files"
echo "$key" >"$mark"
echo "series-build: each of the ${#patches[@]} patches builds, without a warning the pristine build lacks"
rm -rf "$src" "$out"
