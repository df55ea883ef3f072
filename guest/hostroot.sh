#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Make the host's root filesystem (shared read-only by `scripts/vm.sh
# --hostroot` over virtio-9p, tag "hostroot") a place to run the host's
# tools from: mounted at /host, with the guest's /proc, /sys (tracefs at
# /sys/kernel/tracing, debugfs at /sys/kernel/debug, whose tracing/ is the
# same tracefs), /dev, and tmpfs on /tmp and /run. BUILD_DIR and SOURCE_DIR
# are the kernel's O= directory and source tree (host paths, seen at the
# same path in the chroot); /tmp/kernel merges their headers for bcc. The
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
mount -t tmpfs tmpfs /host/tmp
mount -t tmpfs tmpfs /host/run
mkdir -p /host/tmp/rkpe
# bcc's headers: BCC_KERNEL_SOURCE=/tmp/kernel names one directory that must
# hold both the source and the generated headers (bcc knows the split
# build/source layout only under /lib/modules, which this host lacks): the
# source tree's entries as links, with the O= directory's generated/ and
# config/ beside them.
k=/host/tmp/kernel
mkdir -p $k/include $k/arch/x86/include
for e in "/host$source"/* "/host$source"/include/* "/host$source"/arch/x86/* "/host$source"/arch/x86/include/*; do
	r=${e#/host$source/}
	[ -e "$k/$r" ] || ln -s "$source/$r" "$k/$r"
done
ln -sfn "$build/include/generated" "$k/include/generated"
ln -sfn "$build/include/config" "$k/include/config"
ln -sfn "$build/arch/x86/include/generated" "$k/arch/x86/include/generated"
mount -o bind /rkpe /host/tmp/rkpe
[ -d "/host$build" ] || echo "hostroot: $build not visible in the chroot" >&2
