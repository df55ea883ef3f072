#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Watches a guest that scripts/vm.sh runs, through its QEMU monitor (an HMP
# Unix socket) and its console log, and says where its vCPUs were:
#
#   qemu-monitor.py SOCKET DELAY SYSTEM_MAP CONSOLE_LOG
#
# - DELAY seconds after the start (5 s before vm.sh's timeout), it prints
#   `info registers -a` with each vCPU's RIP named from SYSTEM_MAP, so that a
#   run that times out says where its vCPUs were.
# - Before that, a guest that has lost its timer interrupts is ended early.
#   Its signature: the console says "rcu: rcu_... kthread timer wakeup didn't
#   happen" (RCU's grace-period kthread slept on a timer that never fired,
#   while jiffies still moved), then nothing for QUIET seconds, and every
#   vCPU is halted (HLT=1) in two looks 10 s apart. Such a guest never
#   wakes again (seen once in CI on QEMU 10.0 with the `debug` kernel, in
#   the periodic-tick LAPIC timer: both vCPUs in default_idle for 18
#   minutes until the timeout). The registers are printed, the file
#   CONSOLE_LOG.lost-timer written, and QEMU told to quit; vm.sh then
#   boots the run once more. A guest that waits on something else (a
#   deadlock in a test or the module) has working timers, so RCU never
#   prints that line: it runs into the timeout and its hung-task report as
#   before.
#
#   qemu-monitor.py --classify CONSOLE_LOG REGISTERS
#
# says "lost-timer" (exit 0) or "other" (exit 1) for a console log and a
# register dump: the rule above without the waiting (tests/vm-watch/).
import bisect
import os
import re
import socket
import sys
import time

LOST_TIMER = re.compile(rb"rcu: rcu_\w+ kthread timer wakeup didn't happen")
# How long the console must stay silent, and the time between the two
# looks at the vCPUs (tests/vm-watch/run.sh shortens both).
QUIET = float(os.environ.get("RKPE_WATCH_QUIET", "60"))
RELOOK = float(os.environ.get("RKPE_WATCH_RELOOK", "10"))


def all_halted(dump):
    """Every vCPU of an `info registers -a` answer is halted (HLT=1)."""
    cpus = len(re.findall(r"^CPU#\d+", dump, re.M))
    halted = len(re.findall(r"^RIP=.* HLT=1", dump, re.M))
    return cpus > 0 and halted == cpus


def classify(console, dump):
    return "lost-timer" if LOST_TIMER.search(console) and all_halted(dump) else "other"


if len(sys.argv) == 4 and sys.argv[1] == "--classify":
    with open(sys.argv[2], "rb") as f:
        console = f.read()
    with open(sys.argv[3]) as f:
        dump = f.read()
    verdict = classify(console, dump)
    print(verdict)
    sys.exit(0 if verdict == "lost-timer" else 1)

sock_path, delay, system_map, console_log = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4]
start = time.monotonic()

syms = []
try:
    with open(system_map) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 3 and parts[1] in "tTwW":
                syms.append((int(parts[0], 16), parts[2]))
    syms.sort()
except OSError:
    syms = []
addrs = [a for a, _ in syms]


def name(addr):
    i = bisect.bisect_right(addrs, addr) - 1
    if i < 0:
        return None
    return f"{syms[i][1]}+{addr - syms[i][0]:#x}"


s = None
for _ in range(100):  # QEMU creates the socket as it starts
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(sock_path)
        break
    except OSError as e:
        err = e
        s = None
        time.sleep(0.2)
if s is None:
    sys.exit(f"qemu-monitor: {sock_path}: {err}")
s.settimeout(2.0)


def read_until_quiet():
    out = b""
    while True:
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            return out
        if not chunk:
            return out
        out += chunk


def ask(command):
    s.sendall(command.encode() + b"\n")
    answer = read_until_quiet().decode(errors="replace").replace("\r", "")
    # Drop the echo of the command, the terminal escapes and the prompt.
    answer = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", answer)
    out = []
    for line in answer.split("\n"):
        if not line.strip() or line.startswith("(qemu)"):
            continue
        m = re.match(r"RIP=([0-9a-f]{16})", line)
        n = name(int(m.group(1), 16)) if m and syms else None
        out.append(line + (f"   [{n}]" if n else ""))
    return "\n".join(out) + "\n"


read_until_quiet()  # the banner and the prompt
seen, offset, size, quiet_since = False, 0, -1, time.monotonic()
while True:
    time.sleep(max(0.0, min(5.0, QUIET, start + delay - time.monotonic())))
    now = time.monotonic()
    if now >= start + delay:
        sys.stdout.write(ask("info registers -a"))
        break
    try:
        st = os.stat(console_log)
    except OSError:
        continue
    if st.st_size != size:
        size, quiet_since = st.st_size, now
        if not seen:
            with open(console_log, "rb") as f:
                f.seek(max(0, offset - 200))
                seen = bool(LOST_TIMER.search(f.read()))
            offset = st.st_size
    if not seen or now - quiet_since < QUIET:
        continue
    first = ask("info registers -a")
    if not all_halted(first):
        continue
    time.sleep(RELOOK)
    second = ask("info registers -a")
    if all_halted(second) and os.stat(console_log).st_size == size:
        sys.stdout.write(second)
        with open(console_log + ".lost-timer", "w") as f:
            f.write(f"quiet for {int(time.monotonic() - quiet_since)} s after RCU's timer-wakeup report, "
                    f"every vCPU halted in two looks {int(RELOOK)} s apart\n")
        s.sendall(b"quit\n")
        break
