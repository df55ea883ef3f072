#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Cut a kernel's BTF down to what the probe specs of tests/vectors/ need.

    btf-fixture.py RAW_BTF [--module MODULE_BTF]... SPECS... > FIXTURE

RAW_BTF is a kernel's raw BTF (`llvm-objcopy --dump-section .BTF=F vmlinux`,
or /sys/kernel/btf/vmlinux); a MODULE_BTF is a module's (split) BTF on top of
it (the .BTF section of its .ko), whose types continue vmlinux's as the
kernel numbers them; SPECS are spec files (tests/vectors/specs.txt).
The fixture is raw BTF again (the uapi format, little-endian), holding every
function the specs probe (the word after `p`/`r`, without `MOD:` or an
offset), every struct they name (a typecast's `(STRUCT` and, for
`$current`, task_struct) and the types these lead to: every type a parameter or return type
reaches through modifiers, typedefs, arrays, pointers and members, except
that a struct or union more than DEPTH pointers away from a parameter is
kept as an empty one of the same name and size (a named struct counts as
a parameter). The host tests read it as
the kernel reads its own BTF (host/btf_fixture.rs), so what the parser does
with BTF on the host is what it does in the kernel, for these specs.
"""
import re
import struct
import sys

DEPTH = 2  # pointers followed into structs: file->f_path.dentry->d_name.name
# Ids below this keep their number and type: C reads a type's size as a
# type id where it expects a pointer (`dfd:string` on an int looks at
# type 4, char, trace_probe.c:327), so the small ids must be the kernel's.
KEEP_IDS = 64

INT, PTR, ARRAY, STRUCT, UNION, ENUM, FWD, TYPEDEF, VOLATILE, CONST, RESTRICT, \
    FUNC, FUNC_PROTO, VAR, DATASEC, FLOAT, DECL_TAG, TYPE_TAG, ENUM64 = range(1, 20)


def record_words(info):
    kind, vlen = (info >> 24) & 0x1f, info & 0xffff
    if kind in (INT, VAR, DECL_TAG):
        return 3 + 1
    if kind == ARRAY:
        return 3 + 3
    if kind in (STRUCT, UNION, DATASEC, ENUM64):
        return 3 + 3 * vlen
    if kind in (ENUM, FUNC_PROTO):
        return 3 + 2 * vlen
    return 3


def parse(raw, types=None, strings=b''):
    """Types and strings of raw BTF; with the base's `types` and `strings`,
    of split BTF on top of them (ids and string offsets continue the
    base's)."""
    magic, version, flags, hdr_len, type_off, type_len, str_off, str_len = \
        struct.unpack_from('<HBBIIIII', raw, 0)
    assert magic == 0xeB9F, 'not raw BTF (or not little-endian)'
    t0, s0 = hdr_len + type_off, hdr_len + str_off
    strings = strings + raw[s0:s0 + str_len]
    types = list(types or [[0, 0, 0]])  # id 0: void
    pos = t0
    while pos < t0 + type_len:
        info = struct.unpack_from('<I', raw, pos + 4)[0]
        n = record_words(info)
        types.append(list(struct.unpack_from('<%dI' % n, raw, pos)))
        pos += 4 * n
    return types, strings


def name_of(strings, off):
    return strings[off:strings.index(b'\0', off)]


def main():
    args = sys.argv[1:]
    types, strings = parse(open(args.pop(0), 'rb').read())
    while args and args[0] == '--module':
        types, strings = parse(open(args[1], 'rb').read(), types, strings)
        args = args[2:]
    funcs = set()
    structs = set()
    for spec_file in args:
        for line in open(spec_file, 'rb'):
            words = line.split()
            if len(words) < 2 or line.startswith(b'#') or words[0][:1] not in (b'p', b'r'):
                continue
            place = words[1].split(b':')[-1]
            funcs.add(re.split(rb'[+%-]', place)[0])
            for arg in words[2:]:
                # A name after `(` may be a typecast's struct (or a
                # parameter, which no struct is named after).
                structs.update(re.findall(rb'\(([A-Za-z_][A-Za-z_0-9]*)[,)]', arg))
                if b'$current' in arg:
                    structs.add(b'task_struct')
    by_name = {}
    struct_by_name = {}
    for i, t in enumerate(types):
        if (t[1] >> 24) & 0x1f == FUNC:
            by_name.setdefault(name_of(strings, t[0]), i)
        if (t[1] >> 24) & 0x1f == STRUCT:
            # The first of a name, as bpf_find_btf_id() finds it (vmlinux first).
            struct_by_name.setdefault(name_of(strings, t[0]), i)

    # Which types to keep, and whether a struct keeps its members: the
    # smallest pointer depth at which it is reached.
    depth = {}
    work = []

    def reach(tid, d):
        if tid not in depth or d < depth[tid]:
            depth[tid] = d
            work.append((tid, d))

    for tid in range(1, KEEP_IDS):
        reach(tid, DEPTH + 1)
    for f in sorted(funcs):
        if f in by_name:
            reach(by_name[f], 0)
    for name in sorted(structs):
        if name in struct_by_name:
            reach(struct_by_name[name], 0)
    while work:
        tid, d = work.pop()
        if d != depth[tid]:
            continue
        t = types[tid]
        kind, vlen = (t[1] >> 24) & 0x1f, t[1] & 0xffff
        if kind in (PTR,):
            reach(t[2], d + 1)
        elif kind in (TYPEDEF, VOLATILE, CONST, RESTRICT, TYPE_TAG, FUNC):
            reach(t[2], d)
        elif kind == ARRAY:
            reach(t[3], d)
            reach(t[4], d)
        elif kind in (STRUCT, UNION) and d <= DEPTH:
            for m in range(vlen):
                reach(t[3 + 3 * m + 1], d)
        elif kind == FUNC_PROTO:
            reach(t[2], d)
            for p in range(vlen):
                reach(t[3 + 2 * p + 1], d)
    keep = sorted(depth)
    assert keep[:KEEP_IDS] == list(range(KEEP_IDS))
    new_id = {old: new for new, old in enumerate(keep)}
    out_strings = bytearray(b'\0')
    str_at = {b'': 0}

    def s(off):
        n = name_of(strings, off)
        if n not in str_at:
            str_at[n] = len(out_strings)
            out_strings.extend(n + b'\0')
        return str_at[n]

    out_types = bytearray()
    for old in keep[1:]:
        t = list(types[old])
        kind, vlen = (t[1] >> 24) & 0x1f, t[1] & 0xffff
        t[0] = s(t[0])
        if kind in (PTR, TYPEDEF, VOLATILE, CONST, RESTRICT, TYPE_TAG, FUNC):
            t[2] = new_id[t[2]]
        elif kind == ARRAY:
            t[3], t[4] = new_id[t[3]], new_id[t[4]]
        elif kind in (STRUCT, UNION):
            if depth[old] > DEPTH:
                t = [t[0], t[1] & ~0xffff, t[2]]
            else:
                for m in range(vlen):
                    t[3 + 3 * m] = s(t[3 + 3 * m])
                    t[3 + 3 * m + 1] = new_id[t[3 + 3 * m + 1]]
        elif kind in (ENUM, ENUM64):
            step = 2 if kind == ENUM else 3
            for v in range(vlen):
                t[3 + step * v] = s(t[3 + step * v])
        elif kind == FUNC_PROTO:
            t[2] = new_id[t[2]]
            for p in range(vlen):
                t[3 + 2 * p] = s(t[3 + 2 * p])
                t[3 + 2 * p + 1] = new_id[t[3 + 2 * p + 1]]
        out_types.extend(struct.pack('<%dI' % len(t), *t))
    hdr = struct.pack('<HBBIIIII', 0xeB9F, 1, 0, 24, 0, len(out_types),
                      len(out_types), len(out_strings))
    sys.stdout.buffer.write(hdr + out_types + out_strings)
    missing = sorted(f.decode() for f in funcs if f not in by_name)
    print('btf-fixture: %d functions, %d named structs, %d types, %d bytes; without BTF: %s'
          % (len(funcs) - len(missing), len(structs & set(struct_by_name)), len(keep),
             len(hdr) + len(out_types) + len(out_strings), ' '.join(missing) or '-'),
          file=sys.stderr)


main()
