#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# After DELAY seconds, asks the QEMU monitor at the Unix socket SOCKET for
# COMMAND (an HMP command, such as "info registers -a") and prints its answer
# with each vCPU's RIP named from System.map when one is given. scripts/vm.sh
# runs it beside a guest, so that a run that times out says where its vCPUs
# were (and is killed when the guest ends first).
# Usage: qemu-monitor.py SOCKET DELAY COMMAND [SYSTEM_MAP]
import bisect
import re
import socket
import sys
import time

sock_path, delay, command = sys.argv[1], float(sys.argv[2]), sys.argv[3]
system_map = sys.argv[4] if len(sys.argv) > 4 else None
time.sleep(delay)
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect(sock_path)
except OSError as e:
    sys.exit(f"qemu-monitor: {sock_path}: {e}")
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


read_until_quiet()  # the banner and the prompt
s.sendall(command.encode() + b"\n")
answer = read_until_quiet().decode(errors="replace").replace("\r", "")
# Drop the echo of the command, the terminal escapes and the prompt.
answer = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", answer)
lines = [l for l in answer.split("\n") if l.strip() and not l.startswith("(qemu)")]

syms = []
if system_map:
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


for l in lines:
    m = re.match(r"RIP=([0-9a-f]{16})", l)
    n = name(int(m.group(1), 16)) if m and syms else None
    print(l + (f"   [{n}]" if n else ""))
