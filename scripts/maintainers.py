#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Adds paths to the project's MAINTAINERS section (scripts/series.sh).

    maintainers.py MAINTAINERS PATH...

The section is made the first time, before "RUST [ALLOC]" (the sections are
in alphabetical order); its F: lines are kept sorted, as checkpatch wants.
A patch that adds files updates MAINTAINERS with them, so that checkpatch
finds nothing to ask.
"""
import os
import sys

TITLE = "RUST KPROBE EVENTS"
# The maintainer: the series' identity (scripts/series.sh), a placeholder
# unless a poster gives theirs.
MAINTAINER = os.environ.get(
    "RKPE_MAINTAINER",
    "rust-kprobe-events developers <rust-kprobe-events@users.noreply.example.org>",
)
HEAD = [
    TITLE,
    "M:\t" + MAINTAINER,
    "L:\tlinux-trace-kernel@vger.kernel.org",
    "L:\trust-for-linux@vger.kernel.org",
    "S:\tMaintained",
]
AFTER = "RUST [ALLOC]"


def main():
    path, new = sys.argv[1], sys.argv[2:]
    lines = open(path, encoding="utf-8").read().split("\n")
    if TITLE not in lines:
        at = lines.index(AFTER)
        lines[at:at] = HEAD + [""]
    start = lines.index(TITLE)
    end = start
    while lines[end] != "":
        end += 1
    files = {l for l in lines[start:end] if l.startswith("F:\t")}
    files |= {"F:\t" + p for p in new}
    # A file under a listed directory is covered by it.
    dirs = [f for f in files if f.endswith("/")]
    files = {f for f in files if not any(f != d and f.startswith(d) for d in dirs)}
    rest = [l for l in lines[start:end] if not l.startswith("F:\t")]
    lines[start:end] = rest + sorted(files)
    open(path, "w", encoding="utf-8").write("\n".join(lines))


main()
