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


CRIT_COLS = ["matrix", "nnz", "k", "speedup", "vs_kspmv", "way", "x_bound"]
# >= 1M nonzeros except "small" (left out); geomean at k = 8..64 of (4, 1.5, 2) = 12^(1/3) = 2.29 (k = 2, 128 not in it)
CRIT_ROWS = [("a", 2000000, 1, 1.5, 1.0, "columns", 2.0), ("a", 2000000, 2, 3.0, 1.2, "kernel", 3.0),
             ("a", 2000000, 8, 4.0, 2.0, "kernel", 5.0), ("b", 1000000, 16, 1.5, 1.5, "panels", 7.0),
             ("b", 1000000, 64, 2.0, 3.0, "panels", 9.0), ("b", 1000000, 128, 9.0, 3.0, "panels", 20.0),
             ("small", 999999, 8, 0.5, 0.5, "columns", 1.0)]


def write_csv(d, cols, rows):
    path = os.path.join(d, "spmm_kernel.csv")
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        w.writerows(rows)
    return path


def check_criteria(d):
    """the criteria: the three verdicts on the rows above, then each criterion failing"""
    c = plot_spmm.criteria(write_csv(d, CRIT_COLS, CRIT_ROWS))
    expect([v for _, v, _ in c] == ["PASS", "PASS", "PASS", "-"], f"all pass, the small matrix left out: {c}")
    expect("2.29x over 3 products" in c[0][2] and "5.0x to 9.0x" in c[3][2], f"geomean and bound range: {c}")
    slow = [r if r[2] != 16 else ("b", 1000000, 16, 0.99, 1.5, "panels", 7.0) for r in CRIT_ROWS]
    c = plot_spmm.criteria(write_csv(d, CRIT_COLS, slow))
    expect(c[0][1] == "FAIL" and c[1][1] == "FAIL" and "b k = 16" in c[1][2], f"0.99x: geomean below 2.0, one slower: {c}")
    cols = [r if r[2] != 2 else ("a", 2000000, 2, 3.0, 1.01, "columns", 3.0) for r in CRIT_ROWS]
    c = plot_spmm.criteria(write_csv(d, CRIT_COLS, cols))
    expect(c[2][1] == "FAIL" and "1 of 5 not faster: a k = 2" in c[2][2], f"k = 2 run as two SpMVs is not faster: {c}")
    c = plot_spmm.criteria(write_csv(d, CRIT_COLS, [CRIT_ROWS[-1]]))
    expect([v for _, v, _ in c][:3] == ["n/a"] * 3, f"no matrix of >= 1M nonzeros: n/a: {c}")


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
    with tempfile.TemporaryDirectory() as d:
        check_criteria(d)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
