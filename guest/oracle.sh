#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Feed each probe spec of a file (one a line, '#' comments skipped) alone into
# an empty $EVENTS file and report what the implementation did: the write's
# error, the error_log entry, the read-back line, the event's format fields
# and print fmt. Used on the ref kernel to record the C implementation's
# answers (tests/vectors/c-ref.txt) and, later, to compare the module.
# A spec after a line "#caret varies" has its caret reported as "varies":
# C's caret after a BTF field chain is computed from a NULL pointer minus a
# heap address (trace_probe.c:593), so it differs from boot to boot.
#   oracle.sh SPECS [EVENTS_FILE]
specs=$1
events=${2:-kprobe_events}
# The specs' module functions are trace-events-sample's (a C module, with
# module BTF on the x86 kernels).
modprobe trace-events-sample || exit 1
cd /sys/kernel/tracing || exit 1
echo 0 > tracing_on
varies=
while IFS= read -r spec; do
	case "$spec" in
	'#caret varies') varies=1; continue ;;
	'#'*|'') continue ;;
	esac
	echo > "$events"
	echo > error_log
	echo "=== $spec"
	# dd reports the write's errno (the shell's printf builtin does not,
	# and busybox tee fails on tracefs before writing); one write per line.
	err=$(printf '%s\n' "$spec" |
		dd of="$events" bs=65536 oflag=append conv=notrunc 2>&1 |
		sed -n 's/^dd: error writing [^:]*: //p')
	if [ -n "$err" ]; then
		echo "write: $err"
	else
		echo "write: ok"
	fi
	# error_log: "[ts] trace_kprobe: error: MSG", "  Command: CMD", caret line.
	if grep -q ': error: ' error_log; then
		sed -n 's/^\[[^]]*\] [a-z_]*: error: /log: /p' error_log
		sed -n 's/^  Command: /command: /p' error_log
		caret=$(tail -n 1 error_log | wc -c)
		if [ -n "$varies" ]; then
			echo "caret: varies"
		else
			echo "caret: $((caret - 13))"
		fi
	fi
	line=$(cat "$events")
	if [ -n "$line" ]; then
		echo "probe: $line"
		ge=${line#*:}
		ge=${ge%% *}
		f=events/$ge/format
		if [ -f "$f" ]; then
			sed -n '/^format:/,$p' "$f" | grep -v 'common_' | grep -v '^format:' | grep -v '^$' |
				sed 's/^\tfield:/field: /; s/^print fmt: /printfmt: /'
		fi
	fi
	varies=
done < "$specs"
echo > "$events"
echo "=== end"
