#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# scripts/hostile.sh's guest side: tests/hostile/hostile.c (/rkpe/bin/hostile)
# writes the lines of /rkpe/bin/hostile.lines (the first LIMIT, if given),
# after "=== HOSTILE RUN"; its answers follow, gzipped and in base64,
# between "=== HOSTILE BEGIN" and "=== HOSTILE END". A write that never
# returns would hold the VM until vm.sh's timeout: after WATCHDOG s the
# program's last answer and kernel stack follow "=== HOSTILE HUNG ..."
# instead, and the status is 3. Otherwise the status is the program's.
#   hostile.sh WATCHDOG [LIMIT]
watchdog=${1:?watchdog seconds} limit=${2:-}
echo '=== HOSTILE RUN'
/rkpe/bin/hostile /rkpe/bin/hostile.lines /tmp/h.out ${limit:+"$limit"} & pid=$!
i=0
while kill -0 $pid 2>/dev/null && [ $i -lt "$watchdog" ]; do sleep 1; i=$((i + 1)); done
if kill -0 $pid 2>/dev/null; then
	echo "=== HOSTILE HUNG after $i s, after this answer:"; tail -n 1 /tmp/h.out | cut -c1-300
	cat /proc/$pid/stack; rc=3
else
	wait $pid; rc=$?
fi
echo '=== HOSTILE BEGIN'; gzip -c /tmp/h.out | base64; echo '=== HOSTILE END'
exit $rc
