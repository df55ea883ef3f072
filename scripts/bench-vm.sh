#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make bench-vm`: the C kprobe events and the module side by side in one
# boot of the ref kernel under QEMU -icount (guest ns = instructions), a
# probe on __x64_sys_getppid per spec. Writes build/results/bench-vm.md and
# the module/C hit-cost ratios into tests/bench/ratios.txt (commit them:
# they are the baseline of the check below).
#   bench-vm.sh [VARIANT]   measure, write the table and the ratios
#   bench-vm.sh --check [VARIANT]   measure six rows, fail if a ratio is more
#                         than 2% above tests/bench/ratios.txt (make check).
#                         Under -icount a run repeats to the instruction, and
#                         TCG's `-cpu max` does not depend on the host CPU.
# VARIANT: a ref variant, `ref` by default; on another one the files end
# with its suffix (arm64-ref: ratios-arm64.txt; ref-7.3: ratios-7.3.txt).
# `--arch arm64` and `--arch 7.3` still name arm64-ref and ref-7.3.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
check=0
[ "${1:-}" = --check ] && { check=1; shift; }
variant=$(variants kind=ref | head -1)
if [ "${1:-}" = --arch ]; then
	# An architecture's ref kernel on the first release, or a release's
	# on the first architecture.
	if table_has arch "$2"; then
		variant=$(variants arch="$2" release="$(releases | head -1)" kind=ref | head -1)
	else
		variant=$(variants arch="$(arches | head -1)" release="$2" kind=ref | head -1)
	fi
	[ -n "$variant" ] || die "bench-vm.sh: no ref variant for --arch $2"
	shift 2
elif [ $# -gt 0 ]; then
	variant=$1
fi
[ "$(variant_kind "$variant")" = ref ] || die "bench-vm.sh: $variant is not a ref variant ($(variants kind=ref | tr '\n' ' '))"
arch=$(variant_arch "$variant")
sfx=$(variant_suffix "$variant")
mkdir -p "$ROOT/build/results"
bash "$ROOT/scripts/guest-bins.sh" --arch "$arch" getppid_loop
# (make check has built it.)
[ $check = 1 ] || bash "$ROOT/scripts/kernel.sh" "$variant"
log=$ROOT/build/results/bench-vm$sfx.log
stage "benchmark in the $variant VM (-icount)"
# The check measures six rows with fewer calls (a count per call does not
# depend on it beyond the loop's setup, amortised).
args='200000'
[ $check = 0 ] || args='50000 quick'
# The offsets of the rows written by hand as the BTF rows' programs, from
# the kernel's BTF (a kernel without BTF, as arm64's here, has neither:
# guest/bench.sh leaves both out).
offs=
if variant_btf "$variant"; then
	# awk reads to the end: leaving early would let pahole die of SIGPIPE
	# when it writes after, and pipefail then fail the assignment below,
	# silently (it did once, in make check).
	toff() { # FIELD (as pahole writes it, e.g. comm[16])
		pahole -C task_struct "$ROOT/build/$variant/out/vmlinux" | awk -v f="$1;" '
			o == "" { for (i = 1; i < NF; i++) if ($i == f) for (j = i; j < NF; j++) if ($j == "/*") { o = $(j + 1); break } }
			END { print o }'
	}
	offs="PID_OFF=$(toff pid) PARENT_OFF=$(toff real_parent) COMM_OFF=$(toff 'comm[16]')"
	case "$offs" in *=\ * | *= | *=[!0-9]*) die "bench-vm.sh: task_struct offsets not found in $variant's BTF ($offs)" ;; esac
fi
bash "$ROOT/scripts/vm.sh" --icount --timeout 1800 --log "$log" "$variant" -- "$offs sh /rkpe/guest/bench.sh $args" >/dev/null
done_stage
# (The command the ratios' header names: the variant unless the default.)
[ "$variant" = "$(variants kind=ref | head -1)" ] && how= || how=" $variant"
python3 - "$log" "$ROOT/build/results/bench-vm$sfx.md" "$ROOT/tests/bench/ratios$sfx.txt" "$check" "$how" <<'PY'
import sys
ratios_file, check = sys.argv[3], sys.argv[4] == '1'
import re
# A row is "IMPL|SPEC|VALUE" (a console message may precede it on its line).
rows = [m.group(1, 2, 3) for m in (re.search(r'(none|C|RUST)\|([^|]*)\|([^|]*)$', l.strip())
                                   for l in open(sys.argv[1], errors='replace') if not l.startswith('['))
        if m]
# guest/bench.sh checks that the soft-disabled (floor) row wrote nothing.
recorded = [l.strip() for l in open(sys.argv[1], errors='replace') if 'soft-disabled event recorded' in l]
if recorded:
    print('bench: FAILED: the floor row is not a floor:', '; '.join(recorded))
    sys.exit(1)
base = next(float(r[2]) for r in rows if r[0] == 'none')
by = {}
for impl, spec, ns in rows:
    by.setdefault(spec, {})[impl] = ns
out = ['| spec | C: instr/call | C: hit cost | module: instr/call | module: hit cost | module / C (hit) |', '|---|---:|---:|---:|---:|---:|']
out.append(f'| no probe | {base:.0f} | - | {base:.0f} | - | - |')
def num(v):
    try:
        return float(v)
    except ValueError:
        return None
for spec, d in by.items():
    if spec == '-' or 'RUST' not in d:
        continue
    c, r = num(d.get('C', '')), float(d['RUST'])
    if c is None:
        # Every row measures both (guest/bench.sh).
        print(f'bench: FAILED: no count of C for `{spec}`: {d.get("C", "none")}')
        sys.exit(1)
    out.append(f'| `{spec}` | {c:.0f} | {c - base:.0f} | {r:.0f} | {r - base:.0f} | {(r - base) / (c - base):.2f} |')
open(sys.argv[2], 'w').write('\n'.join(out) + '\n')
print('\n'.join(out))
now = {spec: (float(d['RUST']) - base) / (float(d['C']) - base)
       for spec, d in by.items() if spec != '-' and 'RUST' in d}
if not check:
    vals = sorted(now.values())
    med = vals[len(vals) // 2] if len(vals) % 2 else (vals[len(vals) // 2 - 1] + vals[len(vals) // 2]) / 2
    print(f'rows {len(vals)}, median module/C {med:.2f}, max {max(vals):.2f}, rows above 1.0: {sum(v > 1.0 for v in vals)}')
if not check:
    with open(ratios_file, 'w') as f:
        f.write('# module/C hit cost per spec, from `make bench-vm` (scripts/bench-vm.sh%s);\n'
                % sys.argv[5] +
                '# make check fails when one is more than 2% above. Commit after a change\n'
                '# that moves them.\n')
        for spec, v in now.items():
            f.write(f'{spec}|{v:.4f}\n')
    print(f'wrote {len(now)} ratios to {ratios_file}')
    sys.exit(0)
base_ratios = {}
for l in open(ratios_file):
    if l.startswith('#') or '|' not in l:
        continue
    spec, v = l.rstrip('\n').rsplit('|', 1)
    base_ratios[spec] = float(v)
bad = 0 if now else 1
for spec, v in now.items():
    if spec not in base_ratios:
        print(f'bench: FAILED: `{spec}` has no committed ratio'); bad += 1
    elif v > base_ratios[spec] * 1.02:
        print(f'bench: FAILED: `{spec}`: module/C {v:.4f}, more than 2% above {base_ratios[spec]:.4f}'); bad += 1
    else:
        print(f'bench: `{spec}`: module/C {v:.4f} (committed {base_ratios[spec]:.4f})')
sys.exit(1 if bad else 0)
PY
