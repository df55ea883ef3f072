#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/vm.sh boots a run once more when QEMU itself dies of a signal
# before the guest's result (an emulator crash), and fails on a second one
# in a row; a run whose QEMU dies after the guest's result keeps that
# result. A fake QEMU (RKPE_QEMU) that aborts its first CRASHES calls plays
# the emulator. Needs a built VARIANT (vm.sh checks its image exists).
set -euo pipefail
variant=${1:?usage: crash.sh VARIANT}
root=$(cd "$(dirname "$0")/../.." && pwd)
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
cat > "$d/qemu" <<'FAKE'
#!/usr/bin/env bash
n=$(cat "$FAKE_DIR/count" 2>/dev/null || echo 0)
echo $((n + 1)) > "$FAKE_DIR/count"
echo "fake QEMU, call $((n + 1))"
[ "$FAKE_LATE" = 0 ] || echo "RKPE-RESULT: 0"
if [ "$n" -lt "$FAKE_CRASHES" ]; then echo "qemu: fatal: a fake crash"; kill -ABRT $$; fi
echo "RKPE-RESULT: 0"
FAKE
chmod +x "$d/qemu"
bad=0
run() { # CRASHES LATE WANT_RC WANT_CALLS WHAT
	rm -f "$d/count"
	local rc=0
	FAKE_DIR=$d FAKE_CRASHES=$1 FAKE_LATE=$2 RKPE_QEMU=$d/qemu \
		bash "$root/scripts/vm.sh" --timeout 60 --log "$d/log" "$variant" -- true > /dev/null 2> "$d/err" || rc=$?
	if [ "$rc" = "$3" ] && [ "$(cat "$d/count")" = "$4" ]; then
		echo "vm-crash: $5: status $rc after $4 boot(s)"
	else
		echo "vm-crash: $5: status $rc after $(cat "$d/count") boot(s), expected $3 after $4" >&2
		sed 's/^/vm-crash:   /' "$d/err" >&2
		bad=1
	fi
}
run 0 0 0 1 "no crash"
run 1 0 0 2 "one crash, booted once more"
run 2 0 125 2 "two crashes in a row fail the run"
run 1 1 0 1 "a crash after the guest's result keeps the result"
exit $bad
