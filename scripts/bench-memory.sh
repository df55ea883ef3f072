#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make bench-memory`: memory per probe and bulk create/remove times, C and
# the module side by side in one boot of `ref` (guest/bench_memory.sh, each
# measured twice, alternating). Writes build/results/bench-memory.md.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
n=${1:-1000}
mkdir -p "$ROOT/build/results"
bash "$ROOT/scripts/kernel.sh" ref
log=$ROOT/build/results/bench-memory.log
stage "memory benchmark in the ref VM ($n probes)"
bash "$ROOT/scripts/vm.sh" --timeout 1800 --log "$log" ref -- "sh /rkpe/guest/bench_memory.sh $n" >/dev/null
done_stage
python3 - "$log" "$ROOT/build/results/bench-memory.md" "$n" <<'PY'
import sys
n = int(sys.argv[3])
rows = [l.strip().split('|') for l in open(sys.argv[1], errors='replace') if l.count('|') == 2 and not l.startswith('[')]
errs = [r for r in rows if r[1] == 'error']
vals = {}
for impl, what, v in rows:
    if what != 'error':
        vals.setdefault((impl, what), []).append(float(v))
names = {'slab_kb': 'slab growth, KB', 'percpu_kb': 'per-CPU growth, KB', 'memavailable_drop_kb': 'MemAvailable drop, KB',
         'create_s': f'create {n} in one write, s', 'truncate_s': f'remove {n} by truncation, s',
         'minus_s': f'remove {n} by one write of `-:` lines, s', 'dyn_truncate_s': f'remove {n} by truncating dynamic_events, s',
         'btf_create_s': f'create {n} BTF probes `p vfs_read file->f_path.dentry->d_name.name:string count $arg4` in one write, s'}
out = [f'| {n} probes `p vfs_read a=%di b=+0(%si):u64` | C (runs) | module (runs) | module / C |', '|---|---:|---:|---:|']
for k, label in names.items():
    c, r = vals.get(('C', k), []), vals.get(('RUST', k), [])
    if not c or not r:
        continue
    cm, rm = sum(c) / len(c), sum(r) / len(r)
    ratio = f'{rm / cm:.2f}' if cm else '-'
    out.append(f'| {label} | {cm:.1f} ({", ".join(f"{x:g}" for x in c)}) | {rm:.1f} ({", ".join(f"{x:g}" for x in r)}) | {ratio} |')
out += [f'error: {e[0]}: {e[2]}' for e in errs]
open(sys.argv[2], 'w').write('\n'.join(out) + '\n')
print('\n'.join(out))
sys.exit(1 if errs else 0)
PY
