#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build one kernel variant of scripts/variants.tsv (test, ref or debug for
# x86-64; arm64-test or arm64-ref for arm64; test-7.3 and ref-7.3 on Linux
# 7.3; pristine and pristine-7.3 without the series) with the module,
# incrementally, in $CACHE/out-<variant>, and link the artifacts under
# build/<variant>/: the image (bzImage on x86, Image on arm64: its arch
# row), rust_kprobe_events.ko, modroot/ (modules_install output).
# A tree without the module (a series cut short, as `make series-build`
# builds) is that kernel alone, and says so.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

variant=${1:?usage: kernel.sh VARIANT (scripts/variants.tsv: $(variants | tr '\n' ' '))}
table_has variant "$variant" || die "no variant $variant in scripts/variants.tsv"
# (An overlay is its base's build with something swapped in, by its own
# script.)
[ "$(variant_kind "$variant")" != overlay ] || die "$variant is an overlay of $(variant_base "$variant"), made by its own script"
kind=$(variant_config "$variant")
arch=$(variant_arch "$variant")
export RKPE_KVER
RKPE_KVER=$(variant_kver "$variant")
[ -f "$ROOT/kconfig/$kind.config" ] || die "no kconfig/$kind.config"

bash "$ROOT/scripts/deps.sh"
mkdir -p "$CACHE"
# One build at a time per cache, whichever clone asks.
lock_build_cache
if variant_pristine "$variant"; then
	# Debian's source itself, built out of tree (O=): nothing is written
	# into it.
	tree=$(pristine_dir "$RKPE_KVER")
else
	tree=$(bash "$ROOT/scripts/tree.sh")
fi
out=$CACHE/out-$variant
mkdir -p "$out"
jobs=$(( $(nproc) + 1 ))
# Reproducible images: the same sources give the same bzImage whenever it is
# relinked (no build number, time, user or host in it), so that
# scripts/vm.sh --c-only can key C's runs on the image itself.
export KBUILD_BUILD_TIMESTAMP='Thu Jan  1 00:00:00 UTC 2026' KBUILD_BUILD_VERSION=1 \
	KBUILD_BUILD_USER=rkpe KBUILD_BUILD_HOST=rkpe
# ccache (scripts/deps.sh installs it) under the compilers' own names, first
# in PATH: kbuild's command lines stay `clang ...` (a kernel built before
# ccache came rebuilds nothing), and the variants of one release share their
# objects: `ref` compiles little that `test` has not, nor `arm64-ref` what
# `arm64-test` has. The build directory is not hashed (CCACHE_NOHASHDIR), so
# an object may carry another variant's build directory as its DWARF
# comp_dir: the images and the installed modules are stripped of DWARF, and
# BTF does not hold it. Rust is not cached (rustc is not a C compiler).
ccbin=$CACHE/ccache/bin
mkdir -p "$ccbin"
for c in clang clang-19; do ln -sfn "$(command -v ccache)" "$ccbin/$c"; done
export PATH=$ccbin:$PATH CCACHE_DIR=$CACHE/ccache/store CCACHE_NOHASHDIR=1 CCACHE_MAXSIZE=15G
llvm=$(tree_llvm "$tree")
libclang=$(tree_libclang "$tree")
# bindgen (and Kconfig's check of it) loads the tree's own libclang.
export LIBCLANG_PATH=$libclang
kmake() { make -s -C "$tree" O="$out" ARCH="$arch" LLVM="$llvm" -j"$jobs" "$@"; }
# A tree without the module builds the kernel alone: its options are not
# asked of its configuration.
skip=""
module=yes
if [ ! -f "$tree/kernel/trace/rust_kprobe_events/Kconfig" ]; then
	skip="CONFIG_RUST_KPROBE_EVENTS CONFIG_RUST_KPROBE_EVENTS_BTF_ARGS"
	module=no
	echo "kernel.sh: the $RKPE_KVER tree has no module: $variant is the kernel without it" >&2
fi

# The architecture's lines (kconfig/x86.config, kconfig/arm64.config), then
# the variant's (`debug` is `test` plus kconfig/debug.config), then the
# variant's on that architecture, if any.
frags=("$ROOT/kconfig/base.config" "$ROOT/kconfig/$arch.config")
[ "$kind" = debug ] && frags+=("$ROOT/kconfig/test.config")
frags+=("$ROOT/kconfig/$kind.config")
# And the variant's lines for one architecture only (kconfig/x86-ref.config).
[ -f "$ROOT/kconfig/$arch-$kind.config" ] && frags+=("$ROOT/kconfig/$arch-$kind.config")
# On a later release, its names for what base.config asks
# (kconfig/7.3.config), and the symbols it no longer has (its release row)
# left out of the check.
[ -f "$ROOT/kconfig/$RKPE_KVER.config" ] && frags+=("$ROOT/kconfig/$RKPE_KVER.config")
gone=$(table_field release "$RKPE_KVER" 4)
[ -z "$gone" ] || skip+=" ${gone//,/ }"
if variant_pristine "$variant"; then
	src_id="pristine $(cat "$tree/.version" 2>/dev/null || dpkg-query -W -f='${Version}' linux-source-6.12) LLVM=$llvm"
	kpatches=()
elif [ "$RKPE_KVER" = 6.12 ]; then
	src_id=$(dpkg-query -W -f='${Version}' linux-source-6.12)
	kpatches=("$ROOT"/patches/*.patch)
else
	src_id="$(cat "$(pristine_dir "$RKPE_KVER")/.version") LLVM=$llvm"
	kpatches=("$ROOT"/patches/*.patch "$ROOT/patches/$RKPE_KVER"/*)
fi
# (The source's version without a newline, as dpkg-query prints it: 6.12's
# keys stay what they were before 7.3 came.)
ckey=$( { printf '%s' "$src_id"; cat "${frags[@]}" "$ROOT/Kconfig" "${kpatches[@]}"; } | sha256sum | cut -d' ' -f1)
if [ "$(cat "$out/.config-key" 2>/dev/null)" != "$ckey" ] || [ ! -f "$out/.config" ]; then
	stage "configure $variant"
	ARCH=$arch configure_kernel "$tree" "$out" "$skip" "${frags[@]}" >/dev/null ||
		die "kernel config for $variant is not what kconfig/ asks for"
	echo "$ckey" > "$out/.config-key"
	done_stage
fi

stage "build $variant kernel and modules"
image=$(table_field arch "$arch" 3)
ccache -z >/dev/null
kmake "$image" modules
# How much of the C came from the cache (the builds are one at a time).
ccache --print-stats 2>/dev/null | awk '
	$1 == "direct_cache_hit" || $1 == "preprocessed_cache_hit" { hit += $2 }
	$1 == "cache_miss" { miss += $2 }
	END { if (hit + miss) printf "kernel.sh: ccache: %d of %d C compilations from the cache\n", hit, hit + miss }' >&2
rm -rf "$out/modroot"
kmake INSTALL_MOD_PATH="$out/modroot" INSTALL_MOD_STRIP=1 modules_install >/dev/null
done_stage

b=$ROOT/build/$variant
mkdir -p "$b"
ln -sfn "$out/arch/$arch/boot/$image" "$b/$image"
if [ "$module" = yes ]; then
	ln -sfn "$out/kernel/trace/rust_kprobe_events/rust_kprobe_events.ko" "$b/rust_kprobe_events.ko"
else
	rm -f "$b/rust_kprobe_events.ko"
fi
ln -sfn "$out/modroot" "$b/modroot"
ln -sfn "$out" "$b/out"
if variant_pristine "$variant"; then :
else ln -sfn "$tree" "$ROOT/build/tree$(release_suffix "$RKPE_KVER")"; fi
