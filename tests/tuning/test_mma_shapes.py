#!/usr/bin/env python3
"""test_mma_shapes.py MMA_SHAPES - smoke test of matxtract-mma-shapes (tuning/bench/mma_shapes.cu): sizes
that break the tiling are refused (exit status 2, before any device is looked for); then, on an sm_90
GPU, a small dense tile (1024 x 128): one table row per FP64 mma shape, each tile product checked
against the CPU reference ("ok", rel err <= 1e-12), positive rates. Exit 77 (skipped) when the program
finds no CUDA device or no sm_90. Exits 1 on a wrong result."""
import re
import subprocess
import sys

from checks import expect, finish, skip  # beside this file

BIN = sys.argv[1]
SHAPES = ["m8n8k4", "m16n8k4", "m16n8k8", "m16n8k16"]


def run(args):
    p = subprocess.run([BIN] + args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, timeout=240)
    return p.returncode, p.stdout


rc, text = run(["1000", "128"])
expect(rc == 2 and "ROWS a multiple of 16" in text, "1000 rows (not a multiple of 16) refused, exit status 2 (%d)" % rc)
rc, text = run(["1024", "128"])
if rc == 77 and ("no CUDA device" in text or "needs sm_90" in text):
    skip(text.strip())
expect(rc == 0, "1024 x 128 runs (exit status %d)" % rc)
rows = {m.group(1): m.group(0) for m in re.finditer(r"^\| (m\d+n\d+k\d+) \|.*$", text, re.M)}
expect(sorted(rows) == sorted(SHAPES), "one row per shape: %s" % sorted(rows))
for shape, line in rows.items():
    cells = [c.strip() for c in line.strip("|").split("|")]
    expect(cells[-1] == "ok" and float(cells[-2]) <= 1e-12, "%s: the tile product checked (%s, rel err %s)" % (shape, cells[-1], cells[-2]))
    expect(all(float(c) > 0 for c in cells[1:6]), "%s: issue rate, TFLOP/s, values/s, latency and time > 0" % shape)
if rc:
    print(text)
finish()
