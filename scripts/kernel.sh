#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build one kernel variant (test, ref or debug for x86-64; arm64-test or
# arm64-ref for arm64) with the module, incrementally, in
# $CACHE/out-<variant>, and link the artifacts under build/<variant>/:
#   bzImage (x86) or Image (arm64), rust_kprobe_events.ko, modroot/
#   (modules_install output).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

variant=${1:?usage: kernel.sh test|ref|debug|arm64-test|arm64-ref}
kind=$(variant_kind "$variant")
arch=$(variant_arch "$variant")
[ -f "$ROOT/kconfig/$kind.config" ] || die "no kconfig/$kind.config"
case "$variant" in test | ref | debug | arm64-test | arm64-ref) ;; *) die "no variant $variant" ;; esac

bash "$ROOT/scripts/deps.sh"
mkdir -p "$CACHE"
# One build at a time per cache, whichever clone asks.
lock_build_cache
tree=$(bash "$ROOT/scripts/tree.sh")
out=$CACHE/out-$variant
mkdir -p "$out"
jobs=$(( $(nproc) + 1 ))
# Reproducible images: the same sources give the same bzImage whenever it is
# relinked (no build number, time, user or host in it), so that
# scripts/vm.sh --c-only can key C's runs on the image itself.
export KBUILD_BUILD_TIMESTAMP='Thu Jan  1 00:00:00 UTC 2026' KBUILD_BUILD_VERSION=1 \
	KBUILD_BUILD_USER=rkpe KBUILD_BUILD_HOST=rkpe
kmake() { make -s -C "$tree" O="$out" ARCH="$arch" LLVM=1 -j"$jobs" "$@"; }

# The architecture's lines (kconfig/x86.config, kconfig/arm64.config), then
# the variant's (`debug` is `test` plus kconfig/debug.config), then the
# variant's on that architecture, if any.
frags=("$ROOT/kconfig/base.config" "$ROOT/kconfig/$arch.config")
[ "$kind" = debug ] && frags+=("$ROOT/kconfig/test.config")
frags+=("$ROOT/kconfig/$kind.config")
# And the variant's lines for one architecture only (kconfig/x86-ref.config).
[ -f "$ROOT/kconfig/$arch-$kind.config" ] && frags+=("$ROOT/kconfig/$arch-$kind.config")
ckey=$( { dpkg-query -W -f='${Version}' linux-source-6.12; cat "${frags[@]}" "$ROOT/Kconfig" "$ROOT"/patches/*.patch; } | sha256sum | cut -d' ' -f1)
if [ "$(cat "$out/.config-key" 2>/dev/null)" != "$ckey" ] || [ ! -f "$out/.config" ]; then
	stage "configure $variant"
	ARCH=$arch configure_kernel "$tree" "$out" "" "${frags[@]}" >/dev/null ||
		die "kernel config for $variant is not what kconfig/ asks for"
	echo "$ckey" > "$out/.config-key"
	done_stage
fi

stage "build $variant kernel and modules"
case "$arch" in
arm64) image=Image ;;
*) image=bzImage ;;
esac
kmake "$image" modules
rm -rf "$out/modroot"
kmake INSTALL_MOD_PATH="$out/modroot" INSTALL_MOD_STRIP=1 modules_install >/dev/null
done_stage

b=$ROOT/build/$variant
mkdir -p "$b"
ln -sfn "$out/arch/$arch/boot/$image" "$b/$image"
ln -sfn "$out/kernel/trace/rust_kprobe_events/rust_kprobe_events.ko" "$b/rust_kprobe_events.ko"
ln -sfn "$out/modroot" "$b/modroot"
ln -sfn "$out" "$b/out"
ln -sfn "$tree" "$ROOT/build/tree"
