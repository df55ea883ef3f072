# SPDX-License-Identifier: GPL-2.0
"""The kernel's console lines in a serial log, for the Python scripts.

A console line starts with printk's timestamp, "[   12.345678] ": TIMESTAMP
matches it (KMSG_TS in scripts/lib.sh, the same regex). TIMESTAMP.match()
tells a console line; TIMESTAMP.search() also finds a console message that
the console wrote into the middle of a line of the guest's output.
"""
import re

TIMESTAMP = re.compile(r"\[ *[0-9]+\.[0-9]+\] ")
