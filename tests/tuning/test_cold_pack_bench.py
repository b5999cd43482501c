#!/usr/bin/env python3
"""test_cold_pack_bench.py ROOT BUILD_DIR - smoke test of cold-pack-bench (tuning/bench/cold_pack_bench.cu)
through tuning/bench/cold_pack_run.sh: two tiny matrices, a stencil and an unweighted Kronecker graph.
The script writes its command file before the program runs; on a GPU, cold_pack.csv has one row per
matrix with its size, the plain and packed products checked (err <= 1e-12) and bitwise equal, and
cold_pack.md its table. Exit 77 (skipped) when the program finds no CUDA device. Exits 1 on a wrong
result."""
import csv
import os
import subprocess
import sys
import tempfile

from checks import expect, finish, skip  # beside this file

ROOT, BUILD = sys.argv[1], sys.argv[2]
SPECS = {"lap3d:12": ("1728", "11232"), "kron:10:8@ones": None}  # lap3d:12: 12^3 rows, n^3 + 6 (n-1) n^2 nonzeros

with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "compress")
    p = subprocess.run(["bash", os.path.join(ROOT, "tuning/bench/cold_pack_run.sh"), out, BUILD] + list(SPECS),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, timeout=300)
    command = open(os.path.join(out, "command.txt")).read()
    expect(command.startswith("command: %s/tuning/bench/cold-pack-bench -o %s lap3d:12 kron:10:8@ones" % (BUILD, out)),
           "command.txt: the program, OUTDIR and the specs (%s)" % command.strip())
    if p.returncode == 77 and "no CUDA device" in p.stdout:
        skip("no CUDA device")
    expect(p.returncode == 0 and "all variants correct" in p.stdout, "cold_pack_run.sh runs, every variant correct (exit status %d)" % p.returncode)
    if p.returncode:
        print(p.stdout)
    rows = list(csv.DictReader(open(os.path.join(out, "cold_pack.csv"))))
    expect([r["matrix"] for r in rows] == list(SPECS), "one row per matrix, in order")
    for r in rows:
        size = SPECS[r["matrix"]]
        if size:
            expect((r["rows"], r["nnz"]) == size, "%s: rows and nonzeros %s" % (r["matrix"], size))
        expect(float(r["err_plain"]) <= 1e-12 and float(r["err_packed"]) <= 1e-12 and r["bitwise_equal"] == "1",
               "%s: plain and packed checked, bitwise equal" % r["matrix"])
        expect(float(r["plain_us"]) > 0 and float(r["packed_us"]) > 0 and float(r["bytes_per_nnz_packed"]) > 0,
               "%s: times and bytes per nonzero > 0" % r["matrix"])
    md = open(os.path.join(out, "cold_pack.md")).read()
    expect(md.count("\n| lap3d:12 |") == 1 and md.count("\n| kron:10:8@ones |") == 1, "cold_pack.md: one table row per matrix")
finish()
