#!/usr/bin/env python3
"""test_petsc_bench.py MATXTRACT_PETSC_BENCH - the GPU part of matxtract-petsc-bench
(tuning/bench/matxtract_petsc_bench.c; its CPU part is tuning_petsc_bench_cpu): a tiny stencil without
-cpu, so that aijcusparse and matxtract run with VECCUDA vectors: the environment file says mode=gpu,
spmv_petsc.csv has both variants with the matrix's size, the product checked (rel_err <= 1e-12),
device vectors (vec_type "cuda": the program writes VECCUDA, not the seqcuda it resolves to) and, for
matxtract, the product on the device. Exit 77 (skipped) when the program fell back to the CPU (PETSc
without CUDA, or no GPU). Exits 1 on a wrong result."""
import csv
import os
import subprocess
import sys
import tempfile

from checks import expect, finish, skip  # beside this file

BIN = sys.argv[1]

with tempfile.TemporaryDirectory() as tmp:
    p = subprocess.run([BIN, "-gen", "lap2d:30", "-setup_reps", "1", "-settle_max", "50", "-o", tmp], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, universal_newlines=True, timeout=240)
    env = open(os.path.join(tmp, "spmv_petsc_env.txt")).read() if os.path.exists(os.path.join(tmp, "spmv_petsc_env.txt")) else ""
    if "mode=cpu" in env:
        skip("the program ran on the CPU (PETSc without CUDA, or no GPU)")
    expect(p.returncode == 0 and "mode=gpu" in env, "runs on the GPU (exit status %d)" % p.returncode)
    if p.returncode:
        print(p.stdout)
    rows = list(csv.DictReader(open(os.path.join(tmp, "spmv_petsc.csv"))))
    expect([r["variant"] for r in rows] == ["aijcusparse", "matxtract"], "both variants, in order")
    for r in rows:
        what = r["variant"]
        expect((r["rows"], r["nnz"]) == ("900", "4380") and float(r["rel_err"]) <= 1e-12, what + ": size, product checked")
        expect(r["vec_type"] == "cuda" and float(r["t_med_us"]) > 0, what + ": device vectors, time > 0")
    expect(rows[-1]["on_device"] == "1", "matxtract multiplies on the device")
finish()
