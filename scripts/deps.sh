#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Install what the build and the VM tests need. Fast when everything is there.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

PKGS=(linux-source-6.12 clang lld llvm libclang-dev qemu-system-x86 busybox-static
      bc bison flex libelf-dev libssl-dev cpio xz-utils make python3 kmod rsync patch
      # BTF: pahole (1.24) turns the x86 kernels' DWARF into BTF.
      dwarves
      # The patch series: git (format-patch, am) and perl (checkpatch.pl).
      git perl
      # The client tools scripts/tools.sh runs in the VM from the host's root
      # (gcc and libc6-dev build its static trigger).
      linux-perf trace-cmd bpfcc-tools python3-bpfcc bpftrace gcc libc6-dev
      # The arm64 variants: their QEMU, and the arm64 libc and libgcc that
      # clang and lld build the static guest programs with
      # (scripts/busybox-arm64.sh fetches their busybox).
      qemu-system-arm libc6-dev-arm64-cross libgcc-12-dev-arm64-cross
      # Linux 7.3 needs LLVM 17 at least: Debian 12's LLVM 19 (LLVM=-19, and
      # its libclang for bindgen); scripts/linux-7.3.sh fetches its source.
      clang-19 lld-19 llvm-19 libclang-19-dev
      # The kernel variants share their C objects (scripts/kernel.sh).
      ccache)
BINDGEN_VERSION=0.73.2

missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	stage "apt-get install ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
	done_stage
fi

if ! rustup component list --installed 2>/dev/null | grep -q '^rust-src'; then
	stage "rustup component add rust-src"
	rustup component add rust-src
	done_stage
fi

if ! command -v bindgen >/dev/null 2>&1 || ! bindgen --version 2>/dev/null | grep -q " $BINDGEN_VERSION\$"; then
	stage "cargo install bindgen-cli $BINDGEN_VERSION"
	cargo install --locked --quiet bindgen-cli --version "$BINDGEN_VERSION"
	done_stage
fi
