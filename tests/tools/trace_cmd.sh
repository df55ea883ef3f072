# SPDX-License-Identifier: GPL-2.0
# trace-cmd on kprobe events: list, record, report (libtraceevent parsing
# each fetch type's format: strings, arrays, bitfields, symbols, %pd,
# return probes).
. /tmp/rkpe/tests/tools/lib.sh
reset
defprobes_fetch_kinds
echo "--- trace-cmd list -e kprobes"
trace-cmd list -e kprobes | sort
echo "--- trace-cmd record: 2 rounds"
trace-cmd record -q -o t.dat -F -e kprobes $TRIG 2 $D > rec.txt 2>&1
echo "status $?"
echo "--- trace-cmd report"
trace-cmd report -i t.dat 2>&1 | grep -v '^cpus=' |
	sed -E 's/^ *([^ ]+)-[0-9]+ +\[[0-9]+\] +[0-9.]+: /\1 /' | norm
reset
echo "--- end"
