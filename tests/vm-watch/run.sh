#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/qemu-monitor.py ends a guest early, and scripts/vm.sh boots it
# once more, only when the guest has lost its timer interrupts: RCU's
# "kthread timer wakeup didn't happen" on the console and every vCPU
# halted. Each NAME.log (console) and NAME.vcpus (QEMU's `info registers
# -a`) here must be classified as NAME says: lost-timer.* is the CI run of
# 2026-12-04 (QEMU 10.0, debug, both vCPUs in default_idle until the
# timeout); deadlock.* a hung task with working timers; busy.* the same
# report with one vCPU still running.
set -euo pipefail
cd "$(dirname "$0")"
bad=0
for c in lost-timer:lost-timer deadlock:other busy:other; do
	name=${c%%:*} want=${c#*:}
	got=$(python3 ../../scripts/qemu-monitor.py --classify "$name.log" "$name.vcpus" || true)
	if [ "$got" = "$want" ]; then
		echo "vm-watch: $name: $got"
	else
		echo "vm-watch: $name: classified '$got', expected '$want'" >&2
		bad=1
	fi
done

# The watcher itself, against a fake monitor (fake-monitor.py) and a
# console log: with the lost-timer console and halted vCPUs it must tell
# the monitor to quit and leave LOG.lost-timer; with one vCPU running it
# must not, and must print the registers at its deadline instead.
# (Silence and the second look shortened to 1 s.)
watch() { # DIR NAME DEADLINE
	local d=$1 name=$2 deadline=$3
	cp "$name.log" "$d/console.log"
	python3 fake-monitor.py "$d/mon" "$name.vcpus" "$d/quit" &
	local fake=$!
	RKPE_WATCH_QUIET=1 RKPE_WATCH_RELOOK=1 timeout 60 \
		python3 ../../scripts/qemu-monitor.py "$d/mon" "$deadline" /dev/null "$d/console.log" > "$d/out" || true
	kill $fake 2>/dev/null || true
	wait $fake 2>/dev/null || true
}
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
watch "$d" lost-timer 30
if [ -s "$d/quit" ] && [ -s "$d/console.log.lost-timer" ] && grep -q 'HLT=1' "$d/out"; then
	echo "vm-watch: the watcher ended the lost-timer guest: $(cat "$d/console.log.lost-timer")"
else
	echo "vm-watch: the watcher did not end the lost-timer guest (quit: $(cat "$d/quit" 2>/dev/null))" >&2
	bad=1
fi
rm -rf "${d:?}"/*
watch "$d" busy 8
if [ ! -e "$d/quit" ] && [ ! -e "$d/console.log.lost-timer" ] && grep -q 'HLT=0' "$d/out"; then
	echo "vm-watch: the watcher left the running guest alone and gave its registers at the deadline"
else
	echo "vm-watch: the watcher ended a guest with a running vCPU, or gave no registers" >&2
	bad=1
fi
exit $bad
