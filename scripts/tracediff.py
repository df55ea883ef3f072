#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Compare the trace text of C (cN) and module (rN) probes from
guest/trace_diff.sh output, spec by spec (tests/vectors/trace-specs.txt).
Each block ends with a 'profile: HITS MISSES' line (kprobe_profile over the
trigger). Specs after a '# differs: <why>' line are reported, not compared;
after '# profile differs: <why>', their hit counts are not compared."""
import re
import sys

sys.dont_write_bytecode = True  # no scripts/__pycache__ in the work tree
from kmsg import TIMESTAMP

specs_file, out_file = sys.argv[1], sys.argv[2]
skip = {}
noprofile = {}
n = 0
why = None
pwhy = None
for line in open(specs_file):
    line = line.rstrip('\n')
    if line.startswith('# differs:'):
        why = line[len('# differs:'):].strip()
        continue
    if line.startswith('# profile differs:'):
        pwhy = line[len('# profile differs:'):].strip()
        continue
    if not line or line.startswith('#'):
        continue
    n += 1
    if why:
        skip[n] = why
        why = None
    if pwhy:
        noprofile[n] = pwhy
        pwhy = None

blocks = {}
cur = None
for raw in open(out_file, errors='replace'):
    line = raw.rstrip('\n')
    m = re.match(r'^=== (\d+) (C|RUST)( |$)', line)
    if m:
        cur = (int(m.group(1)), m.group(2))
        blocks.setdefault(cur, [])
        continue
    if line.startswith('=== '):
        cur = None
        continue
    if cur and not TIMESTAMP.match(line):
        blocks[cur].append(line)

bad = 0
compared = 0
for i in range(1, n + 1):
    c, r = blocks.get((i, 'C')), blocks.get((i, 'RUST'))
    if c is None or r is None:
        print(f'tracediff: spec {i}: no output')
        bad += 1
        continue
    if i in skip:
        print(f'tracediff: spec {i} not compared: {skip[i]}')
        continue
    compared += 1
    if i in noprofile:
        print(f'tracediff: spec {i}: hit counts not compared: {noprofile[i]}')
        c = [x for x in c if not x.startswith('profile: ')]
        r = [x for x in r if not x.startswith('profile: ')]
    if not c:
        print(f'tracediff: spec {i}: no trace line from C (the trigger missed?)')
        bad += 1
    elif c != r:
        bad += 1
        print(f'tracediff: spec {i} differs:')
        for a, b in zip(c, r):
            if a != b:
                print(f'  C:    {a}\n  Rust: {b}')
        if len(c) != len(r):
            print(f'  {len(c)} lines from C, {len(r)} from the module')
print(f'tracediff: {compared} specs compared, {bad} differ, {len(skip)} not compared')
sys.exit(1 if bad else 0)
