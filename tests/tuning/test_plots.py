#!/usr/bin/env python3
"""test_plots.py BENCH_DIR - tuning/bench/plots.py (the corpus harness's merge, summary and figures) on two
known matrices: a stencil where our kernels beat cuSPARSE (t_ours 10 us vs ALG1 12 / ALG2 15: 1.2x,
break-even after (5 - 3) ms / 2 us = 1000 MatMults; the predicted plan 8 us: 1.5x; through PETSc 14 vs
10 us: 1.4x, break-even (6 - 4) ms / 4 us = 500) and a graph where they lose (20 vs 18 / 16 us: 0.8x,
no break-even). spmv.csv must carry those ratios; summary.md the geometric mean (0.98x), one win and one
loss with the worst and best matrix and the per-matrix rows; the three figures must be written. Needs
numpy, pandas and matplotlib (Debian's python3-pandas, python3-matplotlib): exit 77 (skipped) without
them. Exits 1 on a wrong result."""
import csv
import math
import os
import subprocess
import sys
import tempfile

from checks import expect, finish, needs  # beside this file

needs("numpy", "pandas", "matplotlib")

BENCH_DIR = sys.argv[1]
KERNEL_COLS = ["matrix", "family", "rows", "cols", "nnz", "crux_tc", "crux_tr", "hot_nnz_share", "hot_mode", "format_bytes", "csr_bytes",
               "t_ours_us", "t_cold_only_us", "t_default_us", "t_pred_us", "crux_pred_tc", "crux_pred_tr", "pred_hot_mode", "pred_cold_kernel",
               "t_cusparse_alg1_us", "t_cusparse_alg2_us", "bw_frac_ours", "bw_frac_cusparse", "setup_ours_ms", "setup_cusparse_ms",
               "matrix_bytes_over_l2"]
KERNELS = [
    ["lap", "stencil", 1000, 1000, 5000, 0.7, 0.5, 0.3, "du", 60000, 64000, 10, 11, 11, 8, 0.7, 0.5, "du", "segment", 12, 15, 0.8, 0.7, 5, 3, 4.0],
    ["kron", "graph", 2000, 2000, 30000, 0, 0, 0, "none", 360000, 368000, 20, 20, 21, 22, 0, 0, "auto", "merge", 18, 16, 0.5, 0.6, 7, 2, 8.0],
]
PETSC_COLS = ["matrix", "variant", "t_med_us", "t_min_us", "t_max_us", "t_loop_us", "setup_ms", "convert_ms", "rel_err", "on_device", "petsc_mode"]
PETSC = [["lap", "aijcusparse", 14, 13, 15, 14, 4, 3, 0, "", "gpu"], ["lap", "matxtract", 10, 9, 11, 10, 6, 5, 0, 1, "gpu"],
         ["kron", "aijcusparse", 17, 16, 18, 17, 3, 2, 0, "", "gpu"], ["kron", "matxtract", 21, 20, 22, 21, 8, 7, 0, 1, "gpu"]]


def write(path, cols, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        w.writerows(rows)


def near(a, b):
    return abs(float(a) - b) <= 1e-4 * abs(b)


with tempfile.TemporaryDirectory() as d:
    write(os.path.join(d, "spmv_kernels.csv"), KERNEL_COLS, KERNELS)
    write(os.path.join(d, "spmv_petsc.csv"), PETSC_COLS, PETSC)
    with open(os.path.join(d, "spmv_kernels_env.txt"), "w") as f:
        f.write("gpu_name=Test GPU\nsms=132\nl2_bytes=52428800\ndate=2026-01-01\ncommand=matxtract-bench -test\nreps=100\nwarmup=20\n")
    p = subprocess.run([sys.executable, os.path.join(BENCH_DIR, "plots.py"), d, "--command", "test command"], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, universal_newlines=True, timeout=120)
    expect(p.returncode == 0 and "plots.py: 2 matrices" in p.stdout, "plots.py runs (exit status %d)" % p.returncode)
    if p.returncode:
        print(p.stdout)
        finish()
    rows = {r["matrix"]: r for r in csv.DictReader(open(os.path.join(d, "spmv.csv")))}
    lap, kron = rows["lap"], rows["kron"]
    expect(near(lap["t_cusparse_best_us"], 12) and near(lap["speedup_vs_cusparse"], 1.2) and near(lap["speedup_vs_alg2"], 1.5),
           "lap: best cuSPARSE ALG1 12 us, 1.2x (1.5x vs ALG2)")
    expect(near(lap["speedup_pred_vs_cusparse"], 1.5) and near(lap["pred_vs_ours"], 0.8), "lap: the predicted plan 1.5x, 0.8 of ours")
    expect(near(lap["breakeven_its"], 1000) and kron["breakeven_its"] == "", "break-even: 1000 MatMults for lap, none for kron")
    expect(near(lap["speedup_petsc"], 1.4) and near(lap["breakeven_its_petsc"], 500) and near(lap["plugin_overhead_us"], -1),
           "lap through PETSc: 1.4x, break-even 500, overhead 10 - 11 us")
    expect(near(kron["speedup_vs_cusparse"], 0.8) and near(kron["format_vs_csr"], 360000 / 368000), "kron: 0.8x, format / CSR bytes")
    expect(lap["fits_2x_l2"] == "False" and lap["petsc_mode"] == "gpu", "lap does not fit 2x L2; PETSc mode gpu")
    md = open(os.path.join(d, "summary.md")).read()
    gm = math.sqrt(1.2 * 0.8)
    expect(("| **all** | 2 | %.2f | %.2f |" % (math.sqrt(1.5 * 16 / 22), gm)) in md, "summary.md: the geometric means of all")
    expect("| ours (oracle crux) vs best cuSPARSE | 1 | 0 | 1 | 0.80x (kron) | 1.20x (lap) |" in md, "summary.md: one win, one loss, worst and best")
    expect("Command: `test command`" in md and "| lap | stencil | 5000 | 0.7,0.5 |" in md, "summary.md: the command and the per-matrix rows")
    for png in ("speedup_vs_nnz.png", "bandwidth_fraction.png", "setup_vs_gain.png"):
        expect(os.path.getsize(os.path.join(d, png)) > 1000, png + " written")
    os.remove(os.path.join(d, "spmv_kernels.csv"))
    p = subprocess.run([sys.executable, os.path.join(BENCH_DIR, "plots.py"), d], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True, timeout=60)
    expect(p.returncode != 0 and "no " in p.stdout and "spmv_kernels.csv" in p.stdout, "without spmv_kernels.csv: refused")
finish()
