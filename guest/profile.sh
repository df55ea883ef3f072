#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# scripts/profile-vm.py's guest side, on the ref kernel with the module
# loaded. Prints "MODTEXT <the module's .text address>", then
# "PROFILE-START", waits 2 s, runs what is profiled, prints "PROFILE-END"
# and waits 2 s (the host turns QEMU's exec log on and off at those lines).
#   profile.sh hit EVENTS GROUP KIND ARGS CALLS [soft|off]
#       a KIND probe "bench" with ARGS on __x64_sys_getppid (arm64:
#       __arm64_sys_getppid) in EVENTS
#       (kprobe_events or rkprobe_events; its events in GROUP), enabled;
#       profiled: getppid_loop CALLS (soft: the event soft-disabled by a
#       trigger; off: with tracing_on 0)
#   profile.sh create EVENTS KIND ARGS N
#       profiled: one write of N KIND probes with ARGS on vfs_read to
#       EVENTS; then prints how many EVENTS lists
mode=$1
modprobe rust_kprobe_events
cd /sys/kernel/tracing || exit 1
case "$mode" in
hit)
	events=$2 group=$3 kind=$4 args=$5 calls=$6
	sys=__x64_sys_getppid
	[ "$(uname -m)" = aarch64 ] && sys=__arm64_sys_getppid
	echo "$kind:bench $sys $args" >> "$events" || exit 1
	case "${7:-}" in
	# Soft-disabled by an enable_event trigger that does not fire: the
	# floor of guest/bench.sh.
	soft) echo "enable_event:$group:bench" > events/module/module_free/trigger ;;
	# Enabled, with tracing_on 0.
	off) echo 1 > "events/$group/bench/enable"; echo 0 > tracing_on ;;
	*) echo 1 > "events/$group/bench/enable" ;;
	esac
	;;
create)
	events=$2 kind=$3 args=$4 n=$5
	i=0
	while [ $i -lt "$n" ]; do echo "$kind:p$i vfs_read $args"; i=$((i + 1)); done > /tmp/defs
	;;
*) echo "usage: profile.sh hit|create ..." >&2; exit 1 ;;
esac
echo "MODTEXT $(cat /sys/module/rust_kprobe_events/sections/.text)"
for s in .kprobes.text; do
	[ -e "/sys/module/rust_kprobe_events/sections/$s" ] &&
		echo "MODSECTION $s $(cat "/sys/module/rust_kprobe_events/sections/$s")"
done
echo PROFILE-START
sleep 2
if [ "$mode" = hit ]; then
	/rkpe/bin/getppid_loop "$calls" > /dev/null
else
	dd if=/tmp/defs of="$events" bs=1M conv=notrunc 2>/dev/null
fi
echo PROFILE-END
sleep 2
[ "$mode" = hit ] || grep -c . "$events"
