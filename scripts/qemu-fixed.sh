#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# A QEMU whose multi-threaded TCG keeps x86's cross-modifying-code rule, for
# the VM runs that need truly parallel vCPUs while kernel text is patched
# (vm.sh --fixed-qemu). Debian 12's QEMU 7.2 lacks QEMU commit deba78709ae8
# ("accel/tcg: Always lock pages before translation", v8.1.0; with its fix
# 3b279f73fa37, v9.0.2): a vCPU can translate kernel text another vCPU is
# patching and keep that translation after the write, so it goes on
# executing text_poke_bp()'s temporary int3 that memory no longer holds
# (NOTES.md, "The kretprobe oops"). Debian's bookworm-backports build of QEMU
# 10.0 is fetched with `apt-get download` (private apt lists, nothing added
# to the host's sources) and unpacked into the cache, never installed over
# the host's QEMU, which every other run keeps using.
# Prints the path of its qemu-system-x86_64 (its SeaBIOS and QEMU's own
# firmware are under the same root/usr/share; vm.sh passes them with -L).
# The fetch needs the network once; RKPE_DEBIAN_MIRROR replaces
# http://deb.debian.org/debian. When the archive's backport has moved past
# the version below, its newer one is taken (at least 9.0.2), and the
# version fetched is in the directory's `version` and the stage's output;
# once bookworm-backports leaves the mirror, the fetch fails (then: the
# next Debian's QEMU).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

VERSION=1:10.0.2+ds-2+deb13u1~bpo12+1
PKGS=(qemu-system-x86=$VERSION qemu-system-common=$VERSION qemu-system-data=$VERSION
      # Debian 12's SeaBIOS 1.16.2 takes 30 s to boot a q35 machine of QEMU
      # 10.0; the backport boots it in 2.
      seabios=1.16.3-2~bpo12+1)
mirror=${RKPE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
dir=$CACHE/qemu-${VERSION//[:~]/_}
key=$(printf '%s\n' "${PKGS[@]}" | cat - "$0" | sha256sum | cut -c1-40)
# The version measured here; if the archive has moved on, its newer
# backport, checked to be at least 9.0.2.
unpack() { # DIR DEB...
	local dir=$1 d v
	shift
	for d in "$@"; do dpkg-deb -x "$d" "$dir/root"; done
	v=$("$dir/root/usr/bin/qemu-system-x86_64" --version | sed -n 's/^QEMU emulator version \([0-9.]*\).*/\1/p') ||
		die "the unpacked QEMU does not run"
	[ -n "$v" ] || die "the unpacked QEMU does not say its version"
	printf '%s\n' 9.0.2 "$v" | sort -V -C || die "QEMU $v from bookworm-backports is older than 9.0.2"
}
cached_debs qemu-fixed "$dir" "$key" "fetch QEMU $VERSION from bookworm-backports" unpack \
	"deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror bookworm-backports main" \
	-- "${PKGS[@]}"
sed 's/^/qemu-fixed: /' "$dir/version" >&2
echo "$dir/root/usr/bin/qemu-system-x86_64"
