#!/usr/bin/env python3
"""test_lever_first_use.py LEVER_FIRST_USE - smoke test of matxtract-lever-first-use
(tuning/bench/lever_first_use.cu): with and without the long row, exit status 0 and one line per step
(24), each a time >= 0 and no step's error, the merge kernel's switch and first product among them. Exit 77 (skipped) when the program finds no CUDA device.
Exits 1 on a wrong result."""
import re
import subprocess
import sys

from checks import expect, finish, skip  # beside this file

BIN = sys.argv[1]
STEPS = 24

for args in ([], ["-long"]):
    p = subprocess.run([BIN] + args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, timeout=120)
    if p.returncode == 77 and "no CUDA device" in p.stdout:
        skip("no CUDA device")
    lines = [l for l in p.stdout.splitlines() if re.match(r"^\S.* +[0-9]+\.[0-9]{3} ms$", l)]
    expect(p.returncode == 0 and len(lines) == STEPS and "rc " not in p.stdout,
           "%s: exit status %d, %d of %d steps timed without an error" % (" ".join(args) or "band", p.returncode, len(lines), STEPS))
    expect(any(l.startswith("merge product, first") for l in lines), "%s: the merge kernel's first product timed" % (" ".join(args) or "band"))
    if p.returncode:
        print(p.stdout)
finish()
