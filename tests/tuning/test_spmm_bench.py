#!/usr/bin/env python3
"""test_spmm_bench.py MATXTRACT_SPMM_BENCH [--gpu] - smoke test of matxtract-spmm-bench
(tuning/bench/spmm_petsc_bench.c): two tiny matrices, k = 1, 3, 8, 3 repetitions. Host part (-cpu): exit 0,
the environment file says mode=cpu, spmm_petsc.csv holds one row per matrix, type (aij, matxtract) and k with
the product checked (rel_err <= 1e-12) and times > 0; then the same with -transpose (A' B, product=AtB in the
environment file); then A B after -mults 5 single-vector products (mults=5 in the environment file).
--gpu: the same without -cpu, aijcusparse vs matxtract
on device columns; exit 77 (skipped) when the program ran on the CPU (PETSc without CUDA, or no GPU)."""
import csv
import os
import subprocess
import sys
import tempfile

from checks import expect, finish, skip  # beside this file

BIN, GPU = sys.argv[1], "--gpu" in sys.argv[2:]

def run(extra, product, mults=0):
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [BIN, "-gen", "lap2d:20", "-gen", "kron:8:8@unique", "-k", "1,3,8", "-reps", "3", "-o", tmp] + extra
        if not GPU:
            cmd.append("-cpu")
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, timeout=240)
        envf = os.path.join(tmp, "spmm_petsc_env.txt")
        env = open(envf).read() if os.path.exists(envf) else ""
        if GPU and "mode=cpu" in env:
            skip("the program ran on the CPU (PETSc without CUDA, or no GPU)")
        want_mode, base = ("mode=gpu", "aijcusparse") if GPU else ("mode=cpu", "aij")
        expect(p.returncode == 0 and want_mode in env and "product=" + product in env, "%s runs (%s, exit status %d)" % (product, want_mode, p.returncode))
        expect("mults=%d\n" % mults in env, "%s: the environment file says mults=%d" % (product, mults))
        if p.returncode:
            print(p.stdout)
        rows = list(csv.DictReader(open(os.path.join(tmp, "spmm_petsc.csv")))) if os.path.exists(os.path.join(tmp, "spmm_petsc.csv")) else []
        keys = [(r["matrix"], r["type"], r["k"]) for r in rows]
        want = [(m, t, k) for m in ("lap2d:20", "kron:8:8@unique") for k in ("1", "3", "8") for t in (base, "matxtract")]
        expect(keys == want, "%s: one row per matrix, k and type, in order (%d rows)" % (product, len(rows)))
        expect(all(float(r["rel_err"]) <= 1e-12 for r in rows) and rows, "%s: every product checked against AIJ (rel_err <= 1e-12)" % product)
        expect(all(float(r[c]) > 0 for r in rows for c in ("setup_ms", "spmm_us", "kspmv_us")) and rows, "%s: setup, SpMM and k-SpMV times > 0" % product)
        expect("ratio" in p.stdout, "%s: prints the table" % product)


run([], "AB")
run(["-transpose"], "AtB")
run(["-mults", "5"], "AB", mults=5)
finish()
