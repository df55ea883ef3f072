#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make bench-vm`: the C kprobe events and the module side by side in one
# boot of the ref kernel under QEMU -icount (guest ns = instructions), a
# probe on __x64_sys_getppid per spec. Writes build/results/bench-vm.md.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
mkdir -p "$ROOT/build/bin" "$ROOT/build/results"
gcc -O2 -static -o "$ROOT/build/bin/getppid_loop" "$ROOT/tests/bench/getppid_loop.c"
bash "$ROOT/scripts/kernel.sh" ref
log=$ROOT/build/results/bench-vm.log
stage "benchmark in the ref VM (-icount)"
bash "$ROOT/scripts/vm.sh" --icount --timeout 1200 --log "$log" ref -- 'sh /rkpe/guest/bench.sh 200000' >/dev/null
done_stage
python3 - "$log" "$ROOT/build/results/bench-vm.md" <<'PY'
import sys
rows = [l.strip().split('|') for l in open(sys.argv[1], errors='replace') if l.count('|') == 2 and not l.startswith('[')]
base = next(float(r[2]) for r in rows if r[0] == 'none')
by = {}
for impl, spec, ns in rows:
    by.setdefault(spec, {})[impl] = ns
out = ['| spec | C: instr/call | C: hit cost | module: instr/call | module: hit cost | module / C (hit) |', '|---|---:|---:|---:|---:|---:|']
out.append(f'| no probe | {base:.0f} | - | {base:.0f} | - | - |')
for spec, d in by.items():
    if spec == '-' or 'C' not in d or 'RUST' not in d:
        continue
    c, r = float(d['C']), float(d['RUST'])
    out.append(f'| `{spec}` | {c:.0f} | {c - base:.0f} | {r:.0f} | {r - base:.0f} | {(r - base) / (c - base):.2f} |')
open(sys.argv[2], 'w').write('\n'.join(out) + '\n')
print('\n'.join(out))
PY
