#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# scripts/tools.sh's guest side: the host's root made a place to run its
# tools (guest/hostroot.sh BUILD_DIR SOURCE_DIR), then each
# tests/tools/NAME.sh in that chroot, at most 900 s each, with a line
# "=== NAME: status N, Ss"; after all ran, each one's output between
# "=== BEGIN NAME" and "=== END NAME".
#   tools.sh BUILD_DIR SOURCE_DIR NAME...
sh /rkpe/guest/hostroot.sh "$1" "$2" || exit 1
shift 2
for t in "$@"; do
	t0=$(cut -d. -f1 /proc/uptime)
	timeout 900 chroot /host /bin/sh "/tmp/rkpe/tests/tools/$t.sh" > "/tmp/$t.out" 2>&1
	echo "=== $t: status $?, $(($(cut -d. -f1 /proc/uptime) - t0))s"
done
for t in "$@"; do echo "=== BEGIN $t"; cat "/tmp/$t.out"; echo "=== END $t"; done
