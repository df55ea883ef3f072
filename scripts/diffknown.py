#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Compare C's and the module's answers spec by spec (differential.sh).

    diffknown.py C.txt RUST.txt DIFF [KNOWN]

Each file is a sequence of blocks, each starting with "=== SPEC". Every
block must be identical, except those whose SPEC is listed in KNOWN (one
per line, then " # why"; '#' lines and blank lines are comments): those
must differ, so that the list cannot outlive what it explains. Writes a
unified diff of the blocks that differ to DIFF and prints a summary; exits
1 on an unexpected difference, a listed spec that no longer differs, or a
listed spec that is not asked at all.
"""
import difflib
import sys


def blocks(path):
    out = []
    with open(path, encoding="latin-1") as f:
        for line in f:
            if line.startswith("=== "):
                out.append([line[4:].rstrip("\n"), []])
            elif out:
                out[-1][1].append(line)
    return out


def known_specs(path):
    known = set()
    if not path:
        return known
    with open(path, encoding="latin-1") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            known.add(line.split(" # ", 1)[0])
    return known


def main():
    c_path, rust_path, diff_path = sys.argv[1:4]
    known = known_specs(sys.argv[4] if len(sys.argv) > 4 else None)
    c, rust = blocks(c_path), blocks(rust_path)
    if [s for s, _ in c] != [s for s, _ in rust]:
        print("differential: C and the module did not answer the same specs")
        return 1
    unexpected, expected, seen, differing = [], 0, set(), set()
    with open(diff_path, "w", encoding="latin-1") as d:
        for (spec, cb), (_, rb) in zip(c, rust):
            seen.add(spec)
            if cb == rb:
                continue
            differing.add(spec)
            d.writelines(difflib.unified_diff(cb, rb, "C: " + spec, "module: " + spec))
            if spec in known:
                expected += 1
            else:
                unexpected.append(spec)
    stale = sorted(s for s in known if s in seen and s not in differing)
    missing = sorted(known - seen)
    for s in unexpected:
        print(f"differential: differs from C: {s}")
    for s in stale:
        print(f"differential: listed as differing, but the same as C now: {s}")
    for s in missing:
        print(f"differential: listed, but not among the specs: {s}")
    print(
        f"differential: {len(c)} specs, {len(c) - len(differing)} answered as C,"
        f" {expected} known differences, {len(unexpected)} unexpected"
    )
    return 1 if unexpected or stale or missing else 0


if __name__ == "__main__":
    sys.exit(main())
