#!/usr/bin/env python3
"""test_plot_readme.py BENCH_DIR - tuning/bench/plot_readme.py on known numbers: the family of each
protocol case and the per-family geometric means of a small protocol.csv written here (no plot:
matplotlib is not needed). Exits 1 on the first wrong result."""
import contextlib
import csv
import io
import os
import sys
import tempfile

sys.path.insert(0, sys.argv[1])
import plot_readme  # noqa: E402
from checks import expect, finish  # noqa: E402 (beside this file)

COLS = ["case", "values", "setup", "steady", "total@100", "total@1000", "total@3000"]
ROWS = [
    ("lap2d_2000", "stencil", 1.0, 4.0, 1.0, 1.0, 2.0),
    ("lap3d_100", "stencil", 4.0, 1.0, 1.0, 4.0, 2.0),
    ("lap3d_100_unique", "unique", 1.0, 1.5, 1.0, 1.0, 1.0),
    ("kron20_ones", "ones", 1.0, 2.0, 0.5, 1.0, 1.0),
    ("kron20_pagerank", "pagerank", 1.0, 0.5, 2.0, 1.0, 1.0),
    ("G3_circuit", "own", 0.8, 1.2, 1.1, 1.0, 0.9),
]


def main():
    expect(plot_readme.family("lap2d_2000", "stencil") == "stencils", "stencil values")
    expect(plot_readme.family("lap3d_150_unique", "unique") == "stencils, unique values", "unique values")
    expect(plot_readme.family("rgg20_pagerank", "pagerank") == "geometric graph", "rgg")
    expect(plot_readme.family("nemsemm1", "own") == "real matrices", "a real matrix")
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "protocol.csv")
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(COLS)
            w.writerows(ROWS)
        fams = {fam: (cases, g) for fam, cases, g in plot_readme.families(path)}
        expect(list(fams) == ["stencils", "stencils, unique values", "Kronecker graph", "real matrices"],
               f"families in order of appearance: {list(fams)}")
        cases, g = fams["stencils"]
        expect(cases == ["lap2d_2000", "lap3d_100"], "two stencil cases")
        expect(abs(g["setup"] - 2.0) < 1e-12 and abs(g["steady"] - 2.0) < 1e-12 and abs(g["total@1000"] - 2.0) < 1e-12,
               "geomean of 4 and 1 is 2")
        expect(abs(fams["Kronecker graph"][1]["steady"] - 1.0) < 1e-12, "geomean of 2 and 0.5 is 1")
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            plot_readme.main([path, "--table"])
        text = out.getvalue()
        expect("| stencils (2) | 2.00x | 2.00x | 1.00x | 2.00x | 2.00x |" in text, f"table row: {text}")
        expect("| real matrices (1) | 0.80x | 1.20x | 1.10x | 1.00x | 0.90x |" in text, "the real matrix's row")
    finish()


if __name__ == "__main__":
    main()
