#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""What another module reaches through the kernel crate.

    exports-check.py OUT [--all] [--why] [--roots]

Every public function of the kernel crate (rust/kernel.o) and every C
helper (rust/helpers/helpers.o) is exported to all modules (rust/exports.c).
A function the kernel keeps from modules is therefore open to any module
when an exported crate or helper symbol calls it, directly or through
other functions of the crate. This lists those C symbols: the symbols the
two objects reference but do not define whose export, in OUT/Module.symvers,
is not to all modules (none, or a `module:` namespace), reached from a
symbol exported to all modules. The call graph is the objects' relocations
and the branches the assembler resolved (llvm-objdump -d); data the code
points to (vtables, constants) is split at the addresses referenced into
it, so a function pointer in a table counts as reached by whoever
references that table.

Only what the series adds counts (upstream's kernel crate aside): a path
counts when it starts at a root defined in one of the series' kernel-crate
modules or C helpers (SERIES_MODULES, SERIES_HELPERS; --all counts every
root). Prints one line per C symbol, with one path to it with --why; the
exit status is 1 if there is any.
"""
import os
import re
import struct
import subprocess
import sys
from bisect import bisect_right
from collections import defaultdict, deque

# The kernel-crate modules the series adds or extends (v0 mangling spells a
# module under the crate root as `_6kernel<len><name>`), and its helper files.
SERIES_MODULES = ["kallsyms", "btf", "nofault", "tracefs", "ptrace", "module_notifier",
                  "kprobes", "trace_event", "module_param", "seq_file"]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def series_helpers():
    names = set()
    for d in ("rust/helpers", "rust/6.12/helpers"):
        p = os.path.join(ROOT, d)
        for f in os.listdir(p) if os.path.isdir(p) else []:
            with open(os.path.join(p, f)) as fh:
                names.update(re.findall(r"\brust_helper_(\w+)\s*\(", fh.read()))
    return {"rust_helper_" + n for n in names}


def ours(sym, helpers):
    if sym in helpers:
        return True
    return any(f"_6kernel{len(m)}{m}" in sym for m in SERIES_MODULES)


class Elf:
    """The sections, symbols and relocations of an ELF64 little-endian relocatable object."""

    def __init__(self, path):
        self.path = path
        with open(path, "rb") as f:
            d = f.read()
        assert d[:4] == b"\x7fELF" and d[4] == 2 and d[5] == 1, f"{path}: not ELF64 LE"
        shoff, = struct.unpack_from("<Q", d, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", d, 0x3A)
        sh = []
        for i in range(shnum):
            name, typ, flags, addr, off, size, link, info, align, entsize = struct.unpack_from(
                "<IIQQQQIIQQ", d, shoff + i * shentsize)
            sh.append(dict(name=name, type=typ, flags=flags, off=off, size=size, link=link, info=info))
        strtab = sh[shstrndx]

        def cstr(tab, o):
            s = tab["off"] + o
            return d[s:d.index(b"\0", s)].decode()
        for s in sh:
            s["name"] = cstr(strtab, s["name"])
        self.sections = sh
        self.symbols = []  # (name, shndx, value, size, type, bind)
        symtab = next(s for s in sh if s["type"] == 2)
        symstr = sh[symtab["link"]]
        for i in range(symtab["size"] // 24):
            name, info, other, shndx, value, size = struct.unpack_from(
                "<IBBHQQ", d, symtab["off"] + i * 24)
            nm = cstr(symstr, name) if name else ""
            if info & 0xF == 3:  # STT_SECTION
                nm = sh[shndx]["name"]
            self.symbols.append((nm, shndx, value, size, info & 0xF, info >> 4))
        self.relocs = defaultdict(list)  # target section index -> [(offset, sym index, addend, type)]
        for s in sh:
            if s["type"] != 4:  # SHT_RELA
                continue
            for i in range(s["size"] // 24):
                off, info, addend = struct.unpack_from("<QQq", d, s["off"] + i * 24)
                self.relocs[s["info"]].append((off, info >> 32, addend, info & 0xFFFFFFFF))


def analyse(objs):
    """The graph of nodes (NAME, or (SECTION, START) for anonymous data) over the objects."""
    defined = {}  # global name -> node
    edges = defaultdict(set)
    undefined = set()
    for path in objs:
        e = Elf(path)
        tag = os.path.basename(path)
        # Each section's cut points: the named symbols in it, and every address referenced.
        cuts = defaultdict(dict)  # shndx -> {start: node}
        for nm, shndx, value, size, typ, bind in e.symbols:
            if 0 < shndx < 0xFF00 and typ in (1, 2) and nm:  # OBJECT, FUNC
                node = nm if bind != 0 else f"{nm}@{tag}"
                cuts[shndx][value] = node
                if bind != 0:
                    defined[nm] = node
            elif shndx == 0 and nm and typ != 4:  # an undefined symbol (not FILE)
                undefined.add(nm)

        refs = []  # (from shndx, from offset, to node or (shndx, off))
        for shndx, rels in e.relocs.items():
            sec = e.sections[shndx]
            if sec["name"].startswith((".debug", ".BTF", "__", ".discard", ".rela", ".note",
                                       ".llvm", ".comment", ".eh_frame", ".orc")) \
                    or sec["name"] in (".altinstructions", ".retpoline_sites", ".return_sites",
                                       ".call_sites", ".ibt_endbr_seal"):
                continue
            for off, si, addend, rtyp in rels:
                nm, tshndx, value, size, typ, bind = e.symbols[si]
                if tshndx == 0:
                    refs.append((shndx, off, nm))
                    continue
                if not (0 < tshndx < 0xFF00):
                    continue
                if typ == 3:  # a section: the address it points to
                    tgt = value + addend
                    # PC-relative x86 relocations carry -4 for the instruction's end.
                    if e.sections[shndx]["flags"] & 4 and rtyp in (2, 4):  # R_X86_64_PC32, PLT32
                        tgt += 4
                    cuts[tshndx].setdefault(tgt, (e.sections[tshndx]["name"] + "@" + tag, tgt))
                    refs.append((shndx, off, ("sec", tshndx, tgt)))
                else:
                    refs.append((shndx, off, nm if bind != 0 else f"{nm}@{tag}"))
        # Branches the assembler resolved inside a section: from the disassembly.
        out = subprocess.run(["llvm-objdump-19", "-d", "--no-show-raw-insn", path],
                             capture_output=True, text=True, check=True).stdout
        secidx = {s["name"]: i for i, s in enumerate(e.sections)}
        cur = None
        line_re = re.compile(r"^\s*([0-9a-f]+):\s+(\S+)\s.*?\b([0-9a-f]+) <([^>]+)>")
        for line in out.splitlines():
            if line.startswith("Disassembly of section "):
                cur = secidx.get(line[len("Disassembly of section "):].rstrip(":"))
                continue
            m = line_re.match(line)
            if m and cur is not None:
                tgt = int(m.group(3), 16)
                cuts[cur].setdefault(tgt, (e.sections[cur]["name"] + "@" + tag, tgt))
                refs.append((cur, int(m.group(1), 16), ("sec", cur, tgt)))
        # The node that contains each address, by the section's sorted cut points.
        starts = {s: sorted(c) for s, c in cuts.items()}

        def node_at(shndx, off):
            st = starts.get(shndx)
            if not st:
                return (e.sections[shndx]["name"] + "@" + tag, 0)
            i = bisect_right(st, off) - 1
            if i < 0:
                return (e.sections[shndx]["name"] + "@" + tag, 0)
            return cuts[shndx][st[i]]
        for shndx, off, to in refs:
            src = node_at(shndx, off)
            if isinstance(to, tuple):
                to = node_at(to[1], to[2])
            if src != to:
                edges[src].add(to)
    return defined, edges, undefined - set(defined)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 1:
        sys.exit(__doc__)
    out = args[0]
    objs = [os.path.join(out, p) for p in ("rust/kernel.o", "rust/helpers/helpers.o")]
    symvers = {}
    with open(os.path.join(out, "Module.symvers")) as f:
        for line in f:
            crc, name, mod, kind, *ns = line.rstrip("\n").split("\t")
            symvers[name] = (mod, ns[0] if ns else "")

    def to_all(name):
        return name in symvers and not symvers[name][1].startswith("module:")
    defined, edges, undefined = analyse(objs)
    helpers = series_helpers()
    roots = [n for n in defined if to_all(n) and ("--all" in sys.argv or ours(n, helpers))]
    # Breadth first from the roots, keeping one parent per node for --why.
    parent = {r: None for r in roots}
    q = deque(roots)
    while q:
        n = q.popleft()
        if isinstance(n, str) and n in undefined:
            continue
        for m in edges.get(n, ()):
            if m not in parent:
                parent[m] = n
                q.append(m)
    # Linker-made and per-CPU symbols are not functions a module calls.
    skip = re.compile(r"^(__kcfi_typeid_|__start_|__stop_|__UNIQUE_ID|_GLOBAL_OFFSET_TABLE_$)")
    bad = sorted(n for n in parent if isinstance(n, str) and n in undefined
                 and not to_all(n) and not skip.match(n))
    for n in bad:
        where = "not exported" if n not in symvers else f"exported in {symvers[n][1]}"
        print(f"{n}: {where}")
        if "--why" in sys.argv:
            p = parent[n]
            while p is not None:
                print(f"    from {p if isinstance(p, str) else p[0] + '+' + hex(p[1])}")
                p = parent[p]
    if "--roots" in sys.argv:
        # Every exported root that reaches one of them, by the reversed graph.
        rev = defaultdict(set)
        for a, bs in edges.items():
            for b in bs:
                rev[b].add(a)
        seen = set(bad)
        q = deque(bad)
        while q:
            n = q.popleft()
            for m in rev.get(n, ()):
                if m not in seen:
                    seen.add(m)
                    q.append(m)
        for r in sorted(r for r in roots if r in seen):
            print(f"root {r}")
    print(f"exports-check: {len(bad)} C symbols reachable through {len(roots)} exported "
          f"symbols of the series' kernel-crate modules and helpers", file=sys.stderr)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
