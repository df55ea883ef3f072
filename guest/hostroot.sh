#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Make the host's root filesystem (shared read-only by `scripts/vm.sh
# --hostroot` over virtio-9p, tag "hostroot") a place to run the host's
# tools from: mounted at /host, with the guest's /proc, /sys (tracefs at
# /sys/kernel/tracing, debugfs at /sys/kernel/debug, whose tracing/ is the
# same tracefs), /dev, and tmpfs on /tmp and /run. BUILD_DIR and SOURCE_DIR
# are the kernel's O= directory and source tree (host paths), seen in the
# chroot at /run/kbuild and /run/ksrc; /tmp/kernel merges their headers for
# bcc. The
# guest's /rkpe (tests, binaries) appears as /tmp/rkpe.
#   hostroot.sh BUILD_DIR SOURCE_DIR
# Then: chroot /host /bin/sh -c '...'
set -e
build=${1:?build dir} source=${2:?source dir}
mkdir -p /host
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=512000,cache=loose hostroot /host
mount -t proc proc /host/proc
mount -t sysfs sysfs /host/sys
mount -t tracefs nodev /host/sys/kernel/tracing
mount -t debugfs nodev /host/sys/kernel/debug
mount -t devtmpfs devtmpfs /host/dev
# The kernel's source and build directories, at fixed paths in the chroot
# (/run/ksrc, /run/kbuild): they may be under the host's /tmp, which the
# tmpfs below hides.
mkdir -p /ksrc /kbuild
mount -o bind "/host$source" /ksrc
mount -o bind "/host$build" /kbuild
mount -t tmpfs tmpfs /host/tmp
mount -t tmpfs tmpfs /host/run
mkdir -p /host/tmp/rkpe /host/run/ksrc /host/run/kbuild
mount -o bind /ksrc /host/run/ksrc
mount -o bind /kbuild /host/run/kbuild
# bcc's headers: BCC_KERNEL_SOURCE=/tmp/kernel names one directory that must
# hold both the source and the generated headers (bcc knows the split
# build/source layout only under /lib/modules, which this host lacks): the
# source tree's entries as links, with the O= directory's generated/ and
# config/ beside them.
k=/host/tmp/kernel
src=/host/run/ksrc
mkdir -p $k/include $k/arch/x86/include
for e in "$src"/* "$src"/include/* "$src"/arch/x86/* "$src"/arch/x86/include/*; do
	r=${e#$src/}
	[ -e "$k/$r" ] || ln -s "/run/ksrc/$r" "$k/$r"
done
ln -sfn /run/kbuild/include/generated "$k/include/generated"
ln -sfn /run/kbuild/include/config "$k/include/config"
ln -sfn /run/kbuild/arch/x86/include/generated "$k/arch/x86/include/generated"
mount -o bind /rkpe /host/tmp/rkpe
[ -d /host/run/kbuild/include/generated ] || echo "hostroot: $build not visible in the chroot" >&2
