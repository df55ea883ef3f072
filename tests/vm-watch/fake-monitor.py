#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# A stand-in for QEMU's HMP monitor (tests/vm-watch/run.sh): listens on the
# Unix socket SOCKET, answers every `info registers -a` with the file
# REGISTERS and, when told `quit`, writes "quit" to the file QUIT_FILE and
# exits, as QEMU does.
# Usage: fake-monitor.py SOCKET REGISTERS QUIT_FILE
import socket
import sys

sock_path, registers, quit_file = sys.argv[1:4]
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(sock_path)
srv.listen(1)
conn, _ = srv.accept()
conn.sendall(b"QEMU 10.0.2 monitor - type 'help' for more information\r\n(qemu) ")
buf = b""
while True:
    data = conn.recv(4096)
    if not data:
        break
    buf += data
    while b"\n" in buf:
        line, buf = buf.split(b"\n", 1)
        cmd = line.decode().strip()
        if cmd == "info registers -a":
            with open(registers, "rb") as f:
                conn.sendall(line + b"\r\n" + f.read().replace(b"\n", b"\r\n") + b"(qemu) ")
        elif cmd == "quit":
            with open(quit_file, "w") as f:
                f.write("quit\n")
            sys.exit(0)
