#!/usr/bin/env python3
"""test_hub_split_bench.py HUB_SPLIT_BENCH - smoke test of hub-split-bench (tuning/bench/hub_split_bench.cu)
on a tiny unweighted Kronecker graph with a hub split of K = 64 columns: exit status 0, the matrix line,
the hub part's line, the split product with both cold kernels, and no product flagged WRONG (every
checked product's relative error is printed). Exit 77 (skipped) when the program finds no CUDA device.
Exits 1 on a wrong result."""
import re
import subprocess
import sys

from checks import expect, finish, skip  # beside this file

BIN = sys.argv[1]
SPEC = "kron:10:8@ones"

p = subprocess.run([BIN, "-warmup", "5", "-reps", "20", "-K", "64", SPEC], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                   universal_newlines=True, timeout=240)
if p.returncode == 77 and "no CUDA device" in p.stdout:
    skip("no CUDA device")
text = p.stdout
expect(p.returncode == 0, "hub-split-bench runs (exit status %d)" % p.returncode)
expect(re.search(r"^  %s: 1024 rows, \d+ nnz$" % re.escape(SPEC), text, re.M) is not None, "the matrix line: 1024 rows")
expect(re.search(r"^  K 64: hub part \d+ nnz \(", text, re.M) is not None, "the hub part of K 64")
for kernel in ("merge", "segment"):
    expect(re.search(r"split \(%s\) vs best cuSPARSE [0-9.]+x" % kernel, text) is not None, "the split product with the %s kernel" % kernel)
errors = [float(e) for e in re.findall(r"  err ([0-9.e+-]+)", text)]
expect(len(errors) >= 5 and max(errors) < 1e-12, "%d products checked, errors < 1e-12" % len(errors))
expect("WRONG" not in text, "no product flagged WRONG")
if p.returncode:
    print(text)
finish()
