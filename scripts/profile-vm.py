#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Where a probe hit spends its instructions, in the ref VM under QEMU TCG.

Boots the ref kernel with a QEMU monitor socket, runs guest/profile.sh
(a probe SPEC on __x64_sys_getppid, __arm64_sys_getppid with --arch arm64,
in rkprobe_events, or kprobe_events with --c, and a getppid loop), and while the loop runs turns on QEMU's
`exec,nochain` log: one line per translated block executed. Blocks are
attributed to functions (System.map for the kernel, the module's symbols
at the address the guest prints) and counted; with `in_asm` the size of
each block is known, so the report is in guest instructions per getppid
call. The loop itself is attributed too (it is the "no probe" baseline).
With --create N, what is profiled is instead one write that defines N
probes SPEC on vfs_read, and the report is per probe.

  scripts/profile-vm.py [--arch arm64 | --variant V] [--c] [--calls N | --create N] 'p a=%di'

The variant (a ref one: C and the module side by side) and how it boots
(QEMU, machine, console, image) come from scripts/variants.tsv.
"""
import argparse
import base64
import bisect
import os
import re
import shlex
import socket
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def lib(*cmd):
    """The output of a scripts/lib.sh function (the variant table's lookups)."""
    return subprocess.check_output(['bash', '-c', '. "$0/scripts/lib.sh" && "$@"', ROOT, *cmd], text=True).strip()


ap = argparse.ArgumentParser()
ap.add_argument('spec')
ap.add_argument('--c', action='store_true', help='the C implementation')
ap.add_argument('--calls', type=int, default=2000)
ap.add_argument('--top', type=int, default=40)
ap.add_argument('--detail', help='also list the blocks of functions whose name has this')
ap.add_argument('--create', type=int, metavar='N',
                help='profile defining N probes SPEC on vfs_read in one write instead of hits '
                     '(instructions per probe)')
ap.add_argument('--arch', choices=lib('arches').split(),
                help='the first ref variant of this architecture (default: the first arch row)')
ap.add_argument('--variant', help='a ref variant (ref-7.3, arm64-ref); its arch row says how it boots')
ap.add_argument('--mode', choices=('soft', 'off'),
                help='the event soft-disabled by a trigger, or tracing_on 0 (guest/bench.sh\'s rows)')
a = ap.parse_args()

variant = a.variant or lib('variants', 'kind=ref', 'arch=' + (a.arch or lib('arches').split()[0])).split()[0]
if lib('variant_kind', variant) != 'ref':
    sys.exit(f'profile: {variant} is not a ref variant')
arch = lib('variant_arch', variant)
b = os.path.join(ROOT, 'build', variant)
img = subprocess.check_output(['bash', os.path.join(ROOT, 'scripts/initramfs.sh'), variant], text=True).split()[-1]
tmp = tempfile.mkdtemp(prefix='rkpe-prof.')
mon = os.path.join(tmp, 'mon.sock')
qlog = os.path.join(tmp, 'qemu.log')
files = ('kprobe_events', 'kprobes') if a.c else ('rkprobe_events', 'rkprobes')
# `p ARGS` or `r ARGS` (a kretprobe), as bench.sh writes them.
kind, rest = (a.spec[0], a.spec[1:].strip()) if a.spec[:1] in ('p', 'r') and a.spec[1:2] in ('', ' ') else ('p', a.spec)
if a.create:
    args = ['create', files[0], kind, rest, str(a.create)]
else:
    args = ['hit', files[0], files[1], kind, rest, str(a.calls)] + ([a.mode] if a.mode else [])
cmd = ' '.join(['sh', '/rkpe/guest/profile.sh'] + [shlex.quote(x) for x in args])
machine = ([lib('table_field', 'arch', arch, '4'), '-machine', lib('table_field', 'arch', arch, '5')],
           lib('table_field', 'arch', arch, '6'), lib('table_field', 'arch', arch, '3'))
append = (f'console={machine[1]} panic=-1 printk.time=1 quiet loglevel=5 rkpe.cmd=' +
          base64.b64encode(cmd.encode()).decode())
qemu = machine[0] + ['-cpu', 'max', '-smp', '2', '-m', '1G',
        '-nographic', '-no-reboot', '-kernel', os.path.join(b, machine[2]), '-initrd', img,
        '-icount', 'shift=0,sleep=off', '-append', append, '-serial', 'stdio',
        '-monitor', f'unix:{mon},server,nowait', '-display', 'none', '-D', qlog]
p = subprocess.Popen(qemu, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, errors='replace')


def monitor(command):
    s = socket.socket(socket.AF_UNIX)
    for _ in range(50):
        try:
            s.connect(mon)
            break
        except OSError:
            time.sleep(0.1)
    s.sendall((command + '\n').encode())
    time.sleep(0.3)
    s.close()


modtext = None
# The module's sections by name (.text, and .kprobes.text, where its hit
# path is), at the addresses the guest prints.
modsecs = {}
console = []
timer = threading.Timer(600, p.kill)
timer.start()
for line in p.stdout:
    console.append(line)
    if line.startswith('MODTEXT '):
        modtext = int(line.split()[1], 16)
        modsecs['.text'] = modtext
    elif line.startswith('MODSECTION '):
        f = line.split()
        modsecs[f[1]] = int(f[2], 16)
    elif line.startswith('PROFILE-START'):
        monitor('log exec,nochain,in_asm')
    elif line.startswith('PROFILE-END'):
        monitor('log none')
p.wait()
timer.cancel()
if modtext is None:
    sys.exit('profile: the guest did not get going:\n' + ''.join(console[-20:]))

# Symbols with their sizes: vmlinux's, and the module's .text ones at
# modtext. Anything else (ftrace and kprobe trampolines) is "[other]".
syms = []
for l in subprocess.check_output(['llvm-nm', '-S', '--defined-only', os.path.join(b, 'out', 'vmlinux')],
                                 text=True).splitlines():
    f = l.split()
    if len(f) == 4 and f[2] in 'tTwW':
        syms.append((int(f[0], 16), int(f[1], 16), f[3]))
ko = os.path.join(b, 'rust_kprobe_events.ko')
for l in subprocess.check_output(['llvm-objdump', '-t', ko], text=True).splitlines():
    f = l.split()
    if len(f) >= 6 and f[-3] in modsecs and 'F' in f[1:-3]:
        syms.append((modsecs[f[-3]] + int(f[0], 16), int(f[-2], 16), 'mod:' + f[-1]))
syms.sort()
addrs = [s[0] for s in syms]


def name(pc):
    if pc < 0x800000000000:
        return '[user]'
    i = bisect.bisect_right(addrs, pc) - 1
    if i >= 0 and pc < syms[i][0] + max(syms[i][1], 1):
        return syms[i][2]
    return '[other]'


# Block sizes from in_asm ("IN: " then one line per instruction).
size = {}
cur = None
execs = {}
for l in open(qlog, errors='replace'):
    if l.startswith('IN:'):
        cur = None
        continue
    m = re.match(r'^0x([0-9a-f]+):\s', l)
    if m:
        pc = int(m.group(1), 16)
        if cur is None:
            cur = pc
            size[cur] = 0
        size[cur] += 1
        continue
    if not l.strip():
        cur = None
    m = re.match(r'^Trace \d+: 0x[0-9a-f]+ \[[0-9a-f]+/([0-9a-f]+)/', l)
    if m:
        pc = int(m.group(1), 16)
        execs[pc] = execs.get(pc, 0) + 1

# getppid_loop warms up with 1000 calls before its N.
calls = a.create if a.create else a.calls + 1000
by = {}
unknown = 0
for pc, n in execs.items():
    k = name(pc)
    if pc not in size:
        unknown += n
    by[k] = by.get(k, 0) + n * size.get(pc, 1)
total = sum(by.values())
print(f'profile: {a.spec} ({"C" if a.c else "module"}), {calls} calls; '
      f'{total / calls:.0f} instructions per call in all '
      f'({unknown} block runs of unknown size counted as 1)')
for k, v in sorted(by.items(), key=lambda kv: -kv[1])[:a.top]:
    print(f'{v / calls:9.1f}  {k}')

if a.detail:
    rows = []
    for pc, n in execs.items():
        k = name(pc)
        if a.detail in k:
            i = bisect.bisect_right(addrs, pc) - 1
            rows.append((n * size.get(pc, 1), pc - syms[i][0], n, size.get(pc, 1), k[:60]))
    for v, off, n, sz, k in sorted(rows, reverse=True)[:30]:
        print(f'{v / calls:9.1f}  +0x{off:x} runs/call={n / calls:.1f} insns={sz}  {k}')
