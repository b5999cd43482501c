#!/usr/bin/env python3
"""test_matxtract_bench.py MATXTRACT_BENCH - smoke test of matxtract-bench (tuning/bench/matxtract_bench.cu):
an unknown option is refused with the usage (exit status 2, before any device is looked for); then, on
a GPU, a tiny generated matrix at (0,0) and one crux: one row in spmv_kernels.csv with the matrix's
size and positive times, every variant of spmv_cruxes.csv checked (rel_err <= 1e-12), the environment
file. Exit 77 (skipped) when the program finds no CUDA device. Exits 1 on a wrong result."""
import csv
import os
import subprocess
import sys
import tempfile

from checks import expect, finish, skip  # beside this file

BIN = sys.argv[1]
SPEC = "lap2d:40"  # 1,600 rows, 7,840 nonzeros


def run(args):
    p = subprocess.run([BIN] + args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, timeout=240)
    return p.returncode, p.stdout


rc, text = run(["-no_such_option"])
expect(rc == 2 and "usage: matxtract-bench" in text, "an unknown option: the usage, exit status 2 (%d)" % rc)
with tempfile.TemporaryDirectory() as tmp:
    rc, text = run(["-gen", SPEC, "-crux", "0.7,0.5", "-o", tmp])
    if rc == 77 and "no CUDA device" in text:
        skip("no CUDA device")
    expect(rc == 0, "-gen %s runs (exit status %d)" % (SPEC, rc))
    if rc:
        print(text)
    kernels = list(csv.DictReader(open(os.path.join(tmp, "spmv_kernels.csv"))))
    expect(len(kernels) == 1, "spmv_kernels.csv: one row (%d)" % len(kernels))
    r = kernels[0]
    expect((r["matrix"], r["rows"], r["cols"], r["nnz"]) == (SPEC, "1600", "1600", "7840"), "the row's matrix and size")
    for c in ("t_ours_us", "t_cold_only_us", "t_default_us", "t_pred_us", "t_cusparse_alg1_us", "t_cusparse_alg2_us"):
        expect(float(r[c]) > 0, "%s > 0 (%s)" % (c, r[c]))
    cruxes = list(csv.DictReader(open(os.path.join(tmp, "spmv_cruxes.csv"))))
    variants = {v["variant"] for v in cruxes}
    expect({"seg00", "merge00", "crux", "pred", "cusparse_alg1", "cusparse_alg2"} <= variants, "the variants timed: %s" % sorted(variants))
    expect(all(float(v["rel_err"]) <= 1e-12 for v in cruxes), "every variant checked against the CPU reference (rel_err <= 1e-12)")
    env = open(os.path.join(tmp, "spmv_kernels_env.txt")).read()
    expect("gpu_name=" in env and "command=" in env, "spmv_kernels_env.txt names the GPU and the command")
finish()
