#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# src/Kbuild picks the module's dialect from the release it is built in:
# 6.12's on 6.12, 7.3's on 7.3 and later, and a build error for a release it
# does not know (between the two, or before 6.12). Read by make alone, as
# kbuild reads it, with each release's VERSION and PATCHLEVEL.
set -euo pipefail
kbuild=$(dirname "$0")/../../src/Kbuild
fail=0
# RELEASE: what the file gives (the dialect flag, none, or the error)
for c in 6.12:none 7.3:7.3 7.4:7.3 8.0:7.3 6.13:error 7.2:error 6.6:error 5.15:error; do
	r=${c%%:*} want=${c#*:}
	out=$(make -s -f "$kbuild" VERSION="${r%.*}" PATCHLEVEL="${r#*.}" -p -n 2>&1 || true)
	if grep -q 'is not a release it knows' <<<"$out"; then
		got=error
	elif grep -q '^rustflags-y = --cfg rkpe_linux_7_3$' <<<"$out"; then
		got=7.3
	else
		got=none
	fi
	if [ "$got" != "$want" ]; then
		echo "kbuild dialect: Linux $r gives $got, not $want"
		fail=1
	fi
done
[ $fail = 0 ] && echo "kbuild dialect: 6.12, 7.3 and later as they should be; other releases refused"
exit $fail
