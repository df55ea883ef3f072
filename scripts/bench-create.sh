#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make bench-create`: the instructions it takes to define a probe, C and the
# module side by side in one boot of `ref` under -icount
# (guest/bench_create.sh: 200 probes `p vfs_read a=%di b=+0(%si):u64` in one
# write, and 200 with BTF arguments, each twice, alternating). Writes
# build/results/bench-create.md.
#   bench-create.sh [--check] [VARIANT]   --check (make check): fails when
#                               the module takes more instructions than C on
#                               a row, or a row is missing; VARIANT: a ref variant
#                               with BTF, ref (the default) or ref-7.3
set -euo pipefail
. "$(dirname "$0")/lib.sh"
check=0
[ "${1:-}" = --check ] && { check=1; shift; }
variant=${1:-$(variants kind=ref | head -1)}
[ "$(variant_kind "$variant")" = ref ] || die "bench-create.sh: $variant is not a ref variant ($(variants kind=ref | tr '\n' ' '))"
sfx=$(variant_suffix "$variant")
mkdir -p "$ROOT/build/results"
# (make check has built it, and its stage must not wait for the build lock
# while the main sequence builds another kernel.)
[ $check = 1 ] || bash "$ROOT/scripts/kernel.sh" "$variant" >/dev/null
bash "$ROOT/scripts/guest-bins.sh" timed_write
log=$ROOT/build/results/bench-create$sfx.log
stage "definition instructions in the $variant VM (-icount)"
bash "$ROOT/scripts/vm.sh" --icount --timeout 900 --log "$log" "$variant" -- "sh /rkpe/guest/bench_create.sh 200" >/dev/null
done_stage
python3 - "$log" "$ROOT/build/results/bench-create$sfx.md" "$check" <<'PY'
import re
import sys
# A row is "IMPL|WHAT|VALUE" (a console message may precede it on its line).
rows = [list(m.group(1, 2, 3)) for m in (re.search(r'(C|RUST)\|([^|]*)\|([^|]*)$', l.strip())
                                         for l in open(sys.argv[1], errors='replace') if not l.startswith('['))
        if m]
errs = [f'error: {r[0]}: {r[2]}' for r in rows if r[1] == 'error']
vals = {}
for impl, what, v in rows:
    if what != 'error':
        vals.setdefault((impl, what), []).append(int(v))
names = {'create_insn': 'p vfs_read a=%di b=+0(%si):u64',
         'btf_create_insn': 'p vfs_read file->f_path.dentry->d_name.name:string count $arg4 (BTF)'}
out = ['| instructions to define one probe (200 in one write) | C (runs) | module (runs) | module / C |', '|---|---:|---:|---:|']
for k, label in names.items():
    c, r = vals.get(('C', k), []), vals.get(('RUST', k), [])
    if not c or not r:
        # The BTF rows need a kernel with BTF arguments, as `ref` is: make
        # check asks for every row.
        if k == 'create_insn' or sys.argv[3] == '1':
            errs.append(f'error: no {k} rows')
        continue
    cm, rm = sum(c) / len(c), sum(r) / len(r)
    out.append(f'| `{label}` | {cm:.0f} ({", ".join(map(str, c))}) | {rm:.0f} ({", ".join(map(str, r))}) | {rm / cm:.2f} |')
    if sys.argv[3] == '1' and rm > cm:
        errs.append(f'error: defining `{label}` takes the module {rm:.0f} instructions, more than C ({cm:.0f})')
out += errs
open(sys.argv[2], 'w').write('\n'.join(out) + '\n')
print('\n'.join(out))
sys.exit(1 if errs else 0)
PY
