#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Rewrites one file's hunks across a series when the lines each patch adds
to it change hands: a line moves to another patch, or a new patch adds a
line. Every later patch's hunk of that file is recomputed (context and line
numbers), so that each applies exactly, as `git am` wants.

Only for files the series only adds lines to (bindings_helper.h,
helpers.c, lib.rs).

    series-rehunk.py [--kver 7.3] FILE [--move 'TEXT=>KEY']... [--add 'KEY:AFTER=>TEXT']...

KEY is a patch's number as the series names it (`0012d`); a patch given
only by --add must already be in the series file (its hunk of FILE is
appended). TEXT and AFTER are whole lines; AFTER must be unique in the
file once the series is applied.
"""
import argparse
import difflib
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kver", default="6.12")
    ap.add_argument("file")
    ap.add_argument("--move", action="append", default=[])
    ap.add_argument("--add", action="append", default=[])
    a = ap.parse_args()

    env = dict(os.environ, RKPE_KVER=a.kver)
    lib = f". {ROOT}/scripts/lib.sh; "
    pristine = subprocess.run(["bash", "-c", lib + f"pristine_dir {a.kver}"], env=env,
                              check=True, capture_output=True, text=True).stdout.split()[-1]
    series = subprocess.run(["bash", "-c", lib + f"series_list {a.kver}"], env=env,
                            check=True, capture_output=True, text=True).stdout.strip()
    entries = [l.split()[0] for l in open(series) if l.strip() and not l.startswith("#")]

    def patch_path(name):
        return subprocess.run(["bash", "-c", lib + f"series_patch {name} {a.kver}"], env=env,
                              check=True, capture_output=True, text=True).stdout.strip()

    esc = re.escape(a.file)
    part = re.compile(r"(^\+\+\+ b/" + esc + r"\n)(.*?)(?=^diff |^--- a/|^-- \n|\Z)", re.S | re.M)
    new_keys = {m.split("=>")[1] for m in a.move} | {x.split(":", 1)[0] for x in a.add}

    # Tag each line of the file with the patch that adds it, applying the
    # series' hunks in order (all insertions).
    lines = open(os.path.join(pristine, a.file)).read().split("\n")
    tags = ["pristine"] * len(lines)
    order = []
    with tempfile.TemporaryDirectory() as tmp:
        target = os.path.join(tmp, a.file)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        for name in entries:
            key = name.split("-")[0]
            p = patch_path(name)
            txt = open(p).read()
            m = part.search(txt)
            if m or key in new_keys:
                order.append((key, p))
            if not m:
                continue
            open(target, "w").write("\n".join(lines))
            diff = f"--- a/{a.file}\n+++ b/{a.file}\n" + m.group(2)
            subprocess.run(["patch", "-s", "-p1", "-d", tmp, "--no-backup-if-mismatch"],
                           input=diff, text=True, check=True)
            after = open(target).read().split("\n")
            new_tags = []
            for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, lines, after, autojunk=False).get_opcodes():
                if op == "equal":
                    new_tags += tags[i1:i2]
                elif op == "insert":
                    new_tags += [key] * (j2 - j1)
                else:
                    sys.exit(f"{name}: removes or changes lines of {a.file}; only additions are handled")
            lines, tags = after, new_tags

    for mv in a.move:
        text, key = mv.split("=>")
        idx = [i for i, l in enumerate(lines) if l == text and tags[i] != "pristine"]
        if len(idx) != 1:
            sys.exit(f"--move {text!r}: {len(idx)} added lines match")
        tags[idx[0]] = key
    for ad in a.add:
        key, rest = ad.split(":", 1)
        anchor, text = rest.split("=>")
        idx = [i for i, l in enumerate(lines) if l == anchor]
        if len(idx) != 1:
            sys.exit(f"--add after {anchor!r}: {len(idx)} lines match")
        lines.insert(idx[0] + 1, text)
        tags.insert(idx[0] + 1, key)

    keys = [k for k, _ in order]
    prev = [l for l, t in zip(lines, tags) if t == "pristine"]
    with tempfile.TemporaryDirectory() as tmp:
        fa, fb = os.path.join(tmp, "a"), os.path.join(tmp, "b")
        for i, (key, p) in enumerate(order):
            upto = set(keys[: i + 1])
            cur = [l for l, t in zip(lines, tags) if t == "pristine" or t in upto]
            open(fa, "w").write("\n".join(prev))
            open(fb, "w").write("\n".join(cur))
            d = subprocess.run(["diff", "-u", fa, fb], capture_output=True, text=True).stdout
            hunk = d.split("\n", 2)[2].rstrip("\n") + "\n" if d else ""
            prev = cur
            txt = open(p).read()
            m = part.search(txt)
            if m:
                if m.group(2) == hunk:
                    continue
                txt = txt[: m.start(2)] + hunk + txt[m.end(2):]
                print(f"{key}: hunk of {a.file} rewritten")
            elif hunk:
                txt = txt.rstrip("\n") + "\n" + f"--- a/{a.file}\n+++ b/{a.file}\n" + hunk
                print(f"{key}: hunk of {a.file} added")
            open(p, "w").write(txt)


if __name__ == "__main__":
    main()
