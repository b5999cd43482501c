#!/usr/bin/env python3
"""plot_readme.py - the README's results table and plot from an end-to-end protocol run.

    python3 tuning/bench/plot_readme.py [PROTOCOL_CSV] [-o docs/speedup-h200.png] [--table]

PROTOCOL_CSV is the protocol.csv of tuning/e2e/protocol.sh (default: the results folder the README
cites). Cases are grouped into matrix families; per family the geometric mean of the ratios
aijcusparse / matxtract (> 1: matxtract faster) for the setup, the steady state per MatMult and the totals after
100, 1000 and 3000 MatMults (setup included). --table prints the markdown table instead of plotting
(matplotlib is needed only for the plot)."""
import argparse
import csv
import math
import os
import sys

DEFAULT_CSV = "tuning/results/h200/seg-early-2026-12-01I/protocol.csv"
COLUMNS = [("setup", "setup"), ("steady", "steady MatMult"), ("total@100", "total, 100 MatMults"),
           ("total@1000", "total, 1000 MatMults"), ("total@3000", "total, 3000 MatMults")]


def family(case, values):
    """The family a protocol case belongs to (its matrix generator or 'real')."""
    if values == "own":
        return "real matrices"
    name = case.split("_")[0]
    if name.startswith("lap"):
        return "stencils, unique values" if values == "unique" else "stencils"
    return {"kron20": "Kronecker graph", "chunglu2m": "Chung-Lu graph", "rgg20": "geometric graph"}.get(name, name)


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def families(path):
    """[(family, cases, {column: geomean})] in the order the families first appear."""
    groups = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            groups.setdefault(family(row["case"], row["values"]), []).append(row)
    out = []
    for fam, rows in groups.items():
        out.append((fam, [r["case"] for r in rows], {c: geomean([float(r[c]) for r in rows]) for c, _ in COLUMNS}))
    return out


def table(fams):
    lines = ["| family (cases) | " + " | ".join(label for _, label in COLUMNS) + " |",
             "|---|" + "---|" * len(COLUMNS)]
    for fam, cases, g in fams:
        lines.append(f"| {fam} ({len(cases)}) | " + " | ".join(f"{g[c]:.2f}x" for c, _ in COLUMNS) + " |")
    return "\n".join(lines)


def plot(fams, out, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    width = 0.8 / len(COLUMNS)
    fig, ax = plt.subplots(figsize=(9, 4.2), dpi=110)
    for k, (col, label) in enumerate(COLUMNS):
        xs = [i + (k - (len(COLUMNS) - 1) / 2) * width for i in range(len(fams))]
        ax.bar(xs, [g[col] for _, _, g in fams], width, label=label)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_yscale("log", base=2)
    ax.set_yticks([0.5, 1, 2, 4])
    ax.set_yticklabels(["0.5x", "1x", "2x", "4x"])
    ax.set_ylabel("speedup over aijcusparse")
    ax.set_xticks(range(len(fams)))
    ax.set_xticklabels([f"{fam}\n({len(c)} cases)" for fam, c, _ in fams], fontsize=8)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, ncol=4, loc="upper right")
    fig.tight_layout()
    fig.savefig(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", nargs="?", default=DEFAULT_CSV)
    ap.add_argument("-o", "--out", default="docs/speedup-h200.png")
    ap.add_argument("--title", default="matxtract vs aijcusparse through PETSc, NVIDIA H200 (geometric mean per family)")
    ap.add_argument("--table", action="store_true", help="print the markdown table, do not plot")
    a = ap.parse_args(argv)
    fams = families(a.csv)
    if not fams:
        sys.exit(f"plot_readme.py: no cases in {a.csv}")
    if a.table:
        print(table(fams))
    else:
        plot(fams, a.out, a.title)
        print(f"wrote {os.path.abspath(a.out)}")


if __name__ == "__main__":
    main()
