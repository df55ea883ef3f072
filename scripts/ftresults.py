#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn an ftracetest console log into one line per test file and compare it
with an expectations file.

Expectations: one line per test, `<path relative to selftests/ftrace> RESULT`,
then for anything but PASS `# why`. Every test found under the given test
directories must have a line, and every line must name an existing test.
Exit status 0 only if each result is the expected one.
"""
import argparse
import os
import re
import sys

RESULT = re.compile(r'^\[(\d+)\]\s*(\(instance\))?\s*(.*?)\s*\[(PASS|FAIL|UNRESOLVED|UNTESTED|UNSUPPORTED|XFAIL|UNDEFINED)\]\s*$')
ANSI = re.compile(r'\x1b\[[0-9;]*m')


def descriptions(ftrace_dir, dirs):
    out = {}
    for d in dirs:
        base = os.path.join(ftrace_dir, d)
        # (test.d/trigger has its tests in subdirectories too.)
        names = sorted(os.path.relpath(os.path.join(r, n), base)
                       for r, _, ns in os.walk(base) for n in ns)
        for name in names:
            if not name.endswith('.tc'):
                continue
            rel = os.path.join(d, name)
            with open(os.path.join(base, name), errors='replace') as f:
                for line in f:
                    if line.startswith('# description:'):
                        out[line.split(':', 1)[1].strip().replace('%%', '%')] = rel
                        break
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--ftrace-dir', required=True)
    ap.add_argument('--log', required=True)
    ap.add_argument('--expect', required=True)
    ap.add_argument('--out', required=True)
    ap.add_argument('--only', help='the tests run (space-separated paths), when only a share of the directories ran')
    ap.add_argument('dirs', nargs='+')
    a = ap.parse_args()

    by_desc = descriptions(a.ftrace_dir, a.dirs)
    got = {}
    with open(a.log, errors='replace') as f:
        for raw in f:
            m = RESULT.match(ANSI.sub('', raw.rstrip('\n')))
            if not m:
                continue
            desc = m.group(3)
            name = by_desc.get(desc)
            if name is None:
                print(f'ftresults: unknown test description {desc!r}', file=sys.stderr)
                return 2
            if m.group(2):
                name += ' (instance)'
            got[name] = m.group(4)
    with open(a.out, 'w') as f:
        for name in sorted(got):
            f.write(f'{name} {got[name]}\n')

    expect = {}
    with open(a.expect) as f:
        for n, line in enumerate(f, 1):
            body = line.split('#', 1)[0].strip() if not line.lstrip().startswith('#') else ''
            if not body:
                continue
            parts = body.rsplit(' ', 1)
            if len(parts) != 2:
                print(f'{a.expect}:{n}: expected "<test> <RESULT>"', file=sys.stderr)
                return 2
            test, result = parts[0].strip(), parts[1]
            if result != 'PASS' and '#' not in line:
                print(f'{a.expect}:{n}: {test} is {result}: say why after a #', file=sys.stderr)
                return 2
            expect[test] = result
    if a.only is not None:
        only = set(a.only.split())
        expect = {t: r for t, r in expect.items() if t.removesuffix(' (instance)') in only}

    bad = 0
    for name in sorted(set(expect) | set(got)):
        e, g = expect.get(name), got.get(name)
        if e != g:
            bad += 1
            print(f'  {name}: expected {e or "(no line)"}, got {g or "(not run)"}', file=sys.stderr)
    counts = {}
    for r in got.values():
        counts[r] = counts.get(r, 0) + 1
    summary = ', '.join(f'{counts[k]} {k}' for k in sorted(counts))
    print(f'ftracetest: {len(got)} tests ({summary}); {len(got) - bad if bad <= len(got) else 0} as expected, {bad} unexpected')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
