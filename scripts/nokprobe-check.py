#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check that nothing a probe hit runs through can be probed.

    nokprobe-check.py MODULE.ko VMLINUX

From the kprobe callbacks of MODULE.ko (`kernel::kprobes::*_handler_callback`
instances), follows every call and jump the module makes (its relocations):
each module function reached must be in `.kprobes.text`. The functions of the
kernel crate (`kernel::...`) and the Rust helpers (`rust_helper_*`) it calls
in VMLINUX must be refused to kprobes there (in `.kprobes.text`, between
`__kprobes_text_start` and `__kprobes_text_end`, or listed by
NOKPROBE_SYMBOL() in `_kprobe_blacklist`), and what they call is followed in
turn. The kernel's own C and Rust's core library (memcpy's kind) are called
as C's kprobe-event hit path calls them, and listed.
"""
import re
import struct
import subprocess
import sys


def run(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def demangle(names):
    if not names:
        return {}
    out = run('llvm-cxxfilt-19', *names).split('\n')
    return dict(zip(names, out))


def module_graph(ko):
    """Functions of the object, their section and the symbols they refer to.

    A call to a local function may name its section and an offset instead of
    the function (`bl .text+0x5d5c`, `call .text+0x5d58` with x86's -4): a
    closure is such a function (it takes no `#[link_section]` from the
    function that makes it). Those are resolved to the function that starts
    at the offset (or 4 bytes on, for x86's PC-relative addend), else to the
    one that holds it.
    """
    funcs, cur, sec, starts, refs = {}, None, None, {}, []
    for line in run('llvm-objdump-19', '-dr', '--no-show-raw-insn', ko).split('\n'):
        m = re.match(r'^Disassembly of section (\S+):', line)
        if m:
            sec = m.group(1)
            continue
        m = re.match(r'^([0-9a-f]+) <(.+)>:$', line)
        if m:
            cur = m.group(2)
            funcs[cur] = (sec, set())
            starts.setdefault(sec, []).append((int(m.group(1), 16), cur))
            continue
        m = re.search(r'\sR_[A-Z0-9_]+\s+([^\s+-]+)(?:([+-])0x([0-9a-f]+))?', line)
        if m and cur:
            if m.group(1).startswith('.'):
                off = int(m.group(3) or '0', 16) * (-1 if m.group(2) == '-' else 1)
                refs.append((cur, m.group(1), off))
            else:
                funcs[cur][1].add(m.group(1))
    for sec in starts:
        starts[sec].sort()
    for cur, sec, off in refs:
        fs = starts.get(sec)
        if not fs:
            continue  # data, not code
        at = {a: f for a, f in fs}
        f = at.get(off) or at.get(off + 4)
        if f is None:
            held = [f for a, f in fs if a <= off]
            f = held[-1] if held else None
        if f is not None:
            funcs[cur][1].add(f)
    return funcs


def read_vmlinux(path, vaddr, size):
    """`size` bytes at address `vaddr` of an ELF64 little-endian image."""
    data = open(path, 'rb').read()
    shoff, = struct.unpack_from('<Q', data, 0x28)
    shentsize, shnum = struct.unpack_from('<HH', data, 0x3a)
    for i in range(shnum):
        _, kind, _, addr, off, sz = struct.unpack_from('<IIQQQQ', data, shoff + i * shentsize)
        if kind != 8 and addr <= vaddr and vaddr + size <= addr + sz:  # not NOBITS
            return data[off + vaddr - addr:off + vaddr - addr + size]
    return b''


def ours(sym):
    """The kernel crate's Rust functions and the Rust helpers."""
    return sym.startswith('rust_helper_') or bool(re.match(r'_R\w*6kernel', sym))


def main():
    ko, vmlinux = sys.argv[1:3]
    funcs = module_graph(ko)
    roots = [f for f in funcs if re.search(r'(pre|ret|entry)_handler_callback', f)]
    if len(roots) < 2:
        sys.exit('nokprobe-check: no kprobe callbacks in %s' % ko)
    seen, work, external = set(), list(roots), set()
    while work:
        f = work.pop()
        if f in seen:
            continue
        seen.add(f)
        for s in funcs[f][1]:
            if s in funcs:
                work.append(s)
            elif not s.startswith('.'):
                external.add(s)
    bad = sorted(f for f in seen if funcs[f][0] != '.kprobes.text')

    # vmlinux: symbol addresses, the kprobes text and NOKPROBE_SYMBOL()'s list.
    addr = {}
    for line in run('llvm-nm-19', '--defined-only', vmlinux).split('\n'):
        p = line.split()
        if len(p) == 3:
            addr.setdefault(p[2], int(p[0], 16))
    lo, hi = addr.get('__kprobes_text_start', 0), addr.get('__kprobes_text_end', 0)
    start, stop = addr.get('__start_kprobe_blacklist', 0), addr.get('__stop_kprobe_blacklist', 0)
    raw = read_vmlinux(vmlinux, start, stop - start)
    listed = set(struct.unpack('<%dQ' % (len(raw) // 8), raw))

    def refused(sym):
        a = addr.get(sym)
        return a is not None and (lo <= a < hi or a in listed)

    # The kernel crate and the helpers the hit path reaches, and what they call.
    kseen, kwork, kbad, other = set(), sorted(s for s in external if ours(s)), [], set(
        s for s in external if not ours(s))
    while kwork:
        batch = [s for s in kwork if s not in kseen and s in addr]
        kwork = []
        kseen.update(batch)
        kbad += [s for s in batch if not refused(s)]
        if not batch:
            break
        dis = run('llvm-objdump-19', '-d', '--no-show-raw-insn',
                  '--disassemble-symbols=' + ','.join(batch), vmlinux)
        for m in re.finditer(r'\s(?:call|jmp|bl|b)\s+0x[0-9a-f]+ <([^>+]+)>', dis):
            s = m.group(1)
            if s in kseen:
                continue
            if ours(s):
                kwork.append(s)
            else:
                other.add(s)

    names = demangle(sorted(seen | kseen | other))
    print('nokprobe-check: %d functions of the module on the hit path, %d of them outside '
          '.kprobes.text; %d of the kernel crate and helpers, %d of them probe-able'
          % (len(seen), len(bad), len(kseen), len(kbad)))
    print('nokprobe-check: the kernel\'s own functions it calls (as C\'s hit path does): '
          + ', '.join(sorted(names.get(s, s) for s in other)))
    for f in bad:
        print('  module, not in .kprobes.text: ' + names.get(f, f))
    for s in kbad:
        print('  vmlinux, can be probed: ' + names.get(s, s))
    if bad or kbad:
        sys.exit(1)


main()
