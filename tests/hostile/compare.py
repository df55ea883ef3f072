#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Compares the answers tests/hostile/hostile.c recorded on the ref kernel
# (C, the oracle) and on the test kernel (the module), prints the first
# differences, the classes of all of them and a summary, and fails on any
# difference, a lost sentinel, a broken run or too few lines answered.
# With the serial logs, also counts the kernel's messages during the runs
# (told, not failed on: the console may drop messages under load).
#   compare.py [--min-lines N] [--logs REF.log TEST.log] LINES REF TEST
import argparse
import collections
import os
import re
import sys

# The console timestamp (scripts/kmsg.py); no scripts/__pycache__ in the work tree.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
sys.dont_write_bytecode = True
from kmsg import TIMESTAMP

FIELDS = ("idx", "file", "answer", "sentinel", "log", "listing", "notes")
FILE = {"k": "kprobe_events", "d": "dynamic_events"}
# C names an event on a bare address "p_0x%p" and lists the address as
# " 0x%p": the pointer is hashed with a per-boot key. In each answer the
# hashes become ordinals in order of appearance (#1, #2...), so that the
# name and the address must still agree.
HASHED = re.compile(r"(?<=_0x)[0-9a-f]{16}|(?<= 0x)[0-9a-f]{16}")
# A console line, possibly in the middle of a line of the guest's output.
KMSG = re.compile(TIMESTAMP.pattern + r"(.*)$")


def load(path):
    """The answers of one kernel, by (index, file), and its END line."""
    rows, end = {}, None
    try:
        f = open(path, "rb")
    except FileNotFoundError:
        return rows, end
    with f:
        for raw in f:
            line = raw.decode("latin-1").rstrip("\n")
            if line.startswith("END\t"):
                end = line.split("\t")
                continue
            parts = line.split("\t")
            if len(parts) != len(FIELDS):
                sys.exit(f"compare: {path}: malformed line: {line[:200]}")
            row = dict(zip(FIELDS, parts))
            hashes = {}

            def ordinal(m):
                return "#%d" % hashes.setdefault(m.group(0), len(hashes) + 1)

            for k in ("log", "listing", "notes"):
                row[k] = HASHED.sub(ordinal, row[k])
            rows[(row["idx"], row["file"])] = row
    return rows, end


def kernel_messages(path):
    """Messages the kernel printed while hostile ran, counted by text."""
    count = collections.Counter()
    running = False
    with open(path, "rb") as f:
        for raw in f:
            line = raw.decode("latin-1").rstrip("\n")
            if line.endswith("=== HOSTILE RUN"):
                running = True
            elif "=== HOSTILE BEGIN" in line:
                break
            m = KMSG.search(line)
            if running and m and not m.group(1).startswith("clocksource:"):
                count[m.group(1).replace("rust_kprobe_events: ", "trace_kprobe: ")] += 1
    return count


def message(log):
    """The error_log message without the command and caret."""
    m = re.match(r"(?:\(\d+ entries\) )?([^\\]*?)(\\n|$)", log)
    return m.group(1) if m else log


def short(s, n=160):
    return s if len(s) <= n else s[:n] + "..."


def order(k):
    return (not k[0].isdigit(), int(k[0]) if k[0].isdigit() else 0, k[0], k[1] != "k")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--min-lines", type=int, default=10000)
    ap.add_argument("--known", help="input line numbers whose differences are known (reported, not failed on)")
    ap.add_argument("--logs", nargs=2, metavar=("REF_LOG", "TEST_LOG"))
    ap.add_argument("lines")
    ap.add_argument("ref")
    ap.add_argument("test")
    a = ap.parse_args()

    with open(a.lines, "rb") as f:
        inputs = [line.decode("latin-1") for line in f.read().split(b"\n")]
    ref, ref_end = load(a.ref)
    test, test_end = load(a.test)
    fail = False

    def what(idx):
        return f"line {idx}: {short(inputs[int(idx) - 1], 200)}" if idx.isdigit() else f"special case {idx}"

    def fields(k):
        r, t = ref.get(k), test.get(k)
        if r is None or t is None:
            return ("answered",)
        return tuple(f for f in FIELDS[2:] if r[f] != t[f])

    keys = sorted(set(ref) | set(test), key=order)
    diffs = [k for k in keys if fields(k)]

    for name, rows in (("C (ref)", ref), ("the module (test)", test)):
        if not rows:
            print(f"hostile: no answers from {name}")
            fail = True
    if diffs and ref and test:
        # The first lines that differ, each once with the files it differs in.
        shown = []
        for k in diffs:
            if k[0] not in shown:
                shown.append(k[0])
        print(f"hostile: first differences ({len(diffs)} answers differ), C first:")
        for idx in shown[:10]:
            ks = [k for k in diffs if k[0] == idx]
            if len(ks) == 2 and ref.get(ks[0]) and test.get(ks[0]) and all(
                ref[ks[0]][f] == ref[ks[1]][f] and test[ks[0]][f] == test[ks[1]][f] for f in FIELDS[2:]
            ):
                ks = ks[:1]
                names = "kprobe_events and dynamic_events"
            else:
                names = None
            for k in ks:
                print(f"  {what(idx)}  [{names or FILE[k[1]]}]")
                r, t = ref.get(k), test.get(k)
                if r is None or t is None:
                    print(f"    C {'answered' if r else 'no answer'}, module {'answered' if t else 'no answer'}")
                    continue
                for f in fields(k):
                    print(f"    {f}: C      {short(r[f])}")
                    print(f"    {f}: module {short(t[f])}")
    if diffs:
        classes = collections.Counter()
        example = {}
        for k in diffs:
            r, t = ref.get(k), test.get(k)
            if r is None or t is None:
                c = (FILE[k[1]], "missing")
            else:
                c = (FILE[k[1]], r["answer"], message(r["log"]), t["answer"], message(t["log"]), "+".join(fields(k)))
            classes[c] += 1
            example.setdefault(c, k)
        print("hostile: differences by class (file | C answer, message | module answer, message | fields), count, first:")
        for c, n in classes.most_common():
            print(f"  {n:5d}  {' | '.join(short(x, 60) for x in c)}  -- {short(what(example[c][0]), 120)}")
        known = set()
        if a.known:
            with open(a.known) as f:
                known = {l.split()[0] for l in f if l.strip() and not l.startswith("#")}
        new = [k for k in diffs if k[0] not in known]
        print(f"hostile: {len(diffs) - len(new)} differing answers are known ({a.known}), {len(new)} are not")
        if new:
            fail = True

    for name, rows, end in (("C (ref)", ref, ref_end), ("module (test)", test, test_end)):
        written = {k[0] for k in rows if k[0].isdigit()}
        print(f"hostile: {name}: {len(written)} lines answered")
        for fk in ("k", "d"):
            mine = [r for k, r in rows.items() if k[1] == fk and k[0].isdigit()]
            acc = sum(1 for r in mine if r["answer"] == "OK")
            rej = collections.Counter(r["answer"] for r in mine if r["answer"] != "OK")
            per = ", ".join(f"{e} {n}" for e, n in sorted(rej.items(), key=lambda x: (-x[1], x[0])))
            print(f"  {FILE[fk]}: {len(mine)} written, {acc} accepted, {sum(rej.values())} rejected ({per})")
        lost = [k for k in sorted(rows, key=order) if rows[k]["sentinel"] == "LOST"]
        removed = sum(1 for r in rows.values() if r["sentinel"] == "removed")
        readd = sum(1 for r in rows.values() if "readd=" in r["notes"])
        left = [k for k in sorted(rows, key=order) if "LEFTOVER" in rows[k]["notes"] or "BROKEN" in rows[k]["notes"]]
        print(f"  sentinel: lost {len(lost)}, removed by a line {removed}, put back {readd}; leftovers {len(left)}")
        if lost:
            print(f"  sentinel LOST after {what(lost[0][0])} [{FILE[lost[0][1]]}]")
            fail = True
        if left:
            print(f"  removal left something after {what(left[0][0])}: {short(rows[left[0]]['notes'])}")
            fail = True
        if end is None or end[2] != "sentinel-ok":
            print(f"  the run did not end cleanly: {end}")
            fail = True
        if len(written) < a.min_lines:
            print(f"  only {len(written)} lines answered, fewer than {a.min_lines}")
            fail = True

    print("hostile: special cases (C answer / module answer; error_log message; events listed):")
    for k in keys:
        if k[0].isdigit():
            continue
        cell = []
        for x in (ref.get(k), test.get(k)):
            if x is None:
                cell.append("-")
                continue
            m = message(x["log"])
            n = x["listing"].count("\\n")
            cell.append(x["answer"] + (f" ({m})" if m else "") + (f" +{n} listed" if n else ""))
        print(f"  {k[0]:>16s} {k[1]}: {cell[0]} / {cell[1]}{'   <-- DIFFERENT' if k in diffs else ''}")
    special = [k for k in keys if not k[0].isdigit()]
    print(f"hostile: {len(special)} special answers, {sum(1 for k in special if k in diffs)} differ")

    if a.logs:
        cm, mm = kernel_messages(a.logs[0]), kernel_messages(a.logs[1])
        print("hostile: kernel messages during the runs (C / module), 'rust_kprobe_events:' read as 'trace_kprobe:':")
        for text in sorted(set(cm) | set(mm), key=lambda t: -(cm[t] + mm[t])):
            mark = "" if cm[text] == mm[text] else "   <-- differs"
            print(f"  {cm[text]:6d} / {mm[text]:6d}  {short(text, 100)}{mark}")

    print(f"hostile: {len(diffs)} answers differ between C and the module")
    return 1 if fail else 0


if __name__ == "__main__":
    sys.exit(main())
