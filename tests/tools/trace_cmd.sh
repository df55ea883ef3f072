# SPDX-License-Identifier: GPL-2.0
# trace-cmd on kprobe events: list, record, report (libtraceevent parsing
# each fetch type's format: strings, arrays, bitfields, symbols, %pd,
# return probes).
. /tmp/rkpe/tests/tools/lib.sh
reset
defprobe 'p:kprobes/rk_getppid __x64_sys_getppid' \
	'p:kprobes/rk_open do_filp_open dfd=%di:s32 path=+0(+0(%si)):string head=+0(+0(%si)):u8[4] nib=+0(+0(%si)):b4@4/8 caller=$stack0:symbol' \
	'p:kprobes/rk_vfsopen vfs_open name=+8(%di):%pd' \
	'p:kprobes/rk_flush filp_flush file=%di:%pD' \
	'r:kprobes/rk_open_ret do_sys_openat2 ret=$retval:s32'
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
