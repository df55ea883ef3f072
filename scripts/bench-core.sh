#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make bench-core`: the tracing core's record path with the series' core
# patches against the pristine kernel, C against C: the same rows
# (guest/bench_core.sh: a static event, C kprobe events plain, with
# arguments, with tracing off, a stack trace, filtered, triggered, pid
# filtered, soft-disabled) in one boot of `pristine-7.3` (Debian's 7.3
# without the series, in the ref configuration) and one of `ref-7.3`, under
# QEMU -icount (guest ns = instructions; each boot repeats to the
# instruction). Writes build/results/bench-core-7.3.md.
#   bench-core.sh [--check] [7.3|6.12]   (default 7.3, the last release;
#                                         6.12: `pristine` against `ref`: the
#                                         release's pristine variant and its
#                                         ref partner, scripts/variants.tsv)
# --check: fail unless every row costs the patched kernel at most what it
# costs the pristine one.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
check=0
[ "${1:-}" = --check ] && { check=1; shift; }
k=${1:-$(releases | tail -1)}
table_has release "$k" || die "bench-core.sh: no kernel $k ($(releases | tr '\n' ' '))"
pristine=$(variants release="$k" kind=pristine | head -1)
[ -n "$pristine" ] || die "bench-core.sh: no pristine variant of $k in scripts/variants.tsv"
patched=$(variant_partner "$pristine" ref)
mkdir -p "$ROOT/build/results"
bash "$ROOT/scripts/guest-bins.sh" --arch x86 getppid_loop
for v in "$pristine" "$patched"; do
	bash "$ROOT/scripts/kernel.sh" "$v"
	stage "the record path in the $v VM (-icount)"
	bash "$ROOT/scripts/vm.sh" --icount --timeout 1800 --log "$ROOT/build/results/bench-core-$v.log" \
		"$v" -- "sh /rkpe/guest/bench_core.sh" >/dev/null
	done_stage
done
python3 - "$ROOT/build/results/bench-core-$pristine.log" "$ROOT/build/results/bench-core-$patched.log" \
	"$ROOT/build/results/bench-core-$k.md" "$pristine" "$patched" "$check" <<'PY'
import re, sys
def rows(path):
    d = {}
    for l in open(path, errors='replace'):
        m = re.search(r'CORE\|([^|]*)\|([^|]*)$', l.strip())
        if m:
            d[m.group(1)] = m.group(2)
    if 'done' not in d:
        sys.exit(f'bench-core: FAILED: {path} has no complete run')
    return d
a, b = rows(sys.argv[1]), rows(sys.argv[2])
pn, bn, check = sys.argv[4], sys.argv[5], sys.argv[6] == '1'
base_a, base_b = float(a['none']), float(b['none'])
out = [f'| row | {pn}: instr/call | hit cost | {bn}: instr/call | hit cost | {bn} / {pn} (hit) |',
       '|---|---:|---:|---:|---:|---:|',
       f'| no event | {base_a:.0f} | - | {base_b:.0f} | - | - |']
bad = []
for row in a:
    if row in ('none', 'done'):
        continue
    if row not in b:
        bad.append(f'{row}: not measured on {bn}')
        continue
    x, y = float(a[row]) - base_a, float(b[row]) - base_b
    r = y / x
    out.append(f'| {row} | {float(a[row]):.0f} | {x:.0f} | {float(b[row]):.0f} | {y:.0f} | {r:.3f} |')
    # (Half an instruction of slack: a count per call is a mean.)
    if y > x + 0.5:
        bad.append(f'{row}: {y:.1f} instructions a hit on {bn}, {x:.1f} on {pn}')
open(sys.argv[3], 'w').write('\n'.join(out) + '\n')
print('\n'.join(out))
for m in bad:
    print('bench-core:', m)
sys.exit(1 if bad and check else 0)
PY
