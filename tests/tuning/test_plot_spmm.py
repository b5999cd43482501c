#!/usr/bin/env python3
"""test_plot_spmm.py BENCH_DIR - tuning/bench/plot_spmm.py on known numbers: the family of each matrix
name and the per-family, per-k geometric means of a small spmm_kernel.csv written here (no plot:
matplotlib is not needed). Exits 1 on the first wrong result."""
import csv
import os
import sys
import tempfile

sys.path.insert(0, sys.argv[1])
import plot_spmm  # noqa: E402
from checks import expect, finish  # noqa: E402 (beside this file)

COLS = ["matrix", "k", "speedup", "vs_kspmv"]
ROWS = [("lap3d:150", 8, 2.0, 1.0), ("lap2d:2000", 8, 0.5, 4.0), ("kron:20:16", 8, 1.5, 1.0),
        ("G3_circuit.mtx", 8, "", 2.0), ("G3_circuit.mtx", 16, 3.0, 2.0)]


def main():
    expect(plot_spmm.family("lap3d:150") == "stencils", "a stencil")
    expect(plot_spmm.family("chunglu:2000000:16:2.1") == "power-law graphs", "a Chung-Lu graph")
    expect(plot_spmm.family("nemsemm1.mtx") == "real matrices", "a file")
    expect(plot_spmm.family("rgg:18") == "other generated", "another generator")
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "spmm_kernel.csv")
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(COLS)
            w.writerows(ROWS)
        t = plot_spmm.table(plot_spmm.read_rows(path))
    expect(abs(t[("stencils", 8)][0] - 1.0) < 1e-12 and abs(t[("stencils", 8)][1] - 2.0) < 1e-12,
           f"stencils at k = 8: geomeans of (2, 0.5) and (1, 4): {t[('stencils', 8)]}")
    expect(t[("power-law graphs", 8)][2] == 1, "one power-law matrix at k = 8")
    expect(t[("real matrices", 8)][0] is None and abs(t[("real matrices", 16)][0] - 3.0) < 1e-12,
           "a missing cuSPARSE time leaves no mean; k = 16 has one")
    expect(("power-law graphs", 16) not in t, "no cell without matrices")
    return finish()


if __name__ == "__main__":
    sys.exit(main())
