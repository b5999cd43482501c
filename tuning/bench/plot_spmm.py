#!/usr/bin/env python3
"""plot_spmm.py - speedup against k per matrix family from spmm-kernel-bench's CSV (issue 43).

    python3 tuning/bench/plot_spmm.py SPMM_KERNEL_CSV [-o PNG] [--table]

Two panels, x = k (log 2): the best cusparseSpMM time / ours, and k of our SpMVs / ours, one line per
matrix, coloured by family (stencils: lap*; power-law graphs: kron, chunglu; real matrices: files).
--table prints, per family and k, the geometric mean of both ratios as markdown instead of plotting
(matplotlib is needed only for the plot). --criteria prints issue 43's kernel-level criteria on the
matrices of >= 1M nonzeros, each PASS / FAIL (n/a without data): the geometric mean over the best
cusparseSpMM at k = 8..64 >= 2.0x, no product slower than it at any k, and every product of k >= 2
faster than k of our SpMVs (a product that ran as k SpMVs, way "columns", is not), plus the distance
from the memory-traffic bound at k = 8..64 (no verdict)."""
import argparse
import csv
import math
import sys

FAMILIES = ["stencils", "power-law graphs", "real matrices", "other generated"]


def family(matrix):
    """The family of a matrix name as spmm-kernel-bench writes it (a generator spec or a file name)."""
    if matrix.endswith(".mtx") or matrix.endswith(".mtx.gz"):
        return "real matrices"
    gen = matrix.split(":")[0]
    if gen.startswith("lap"):
        return "stencils"
    if gen in ("kron", "chunglu", "chunglu-dir", "rmat"):
        return "power-law graphs"
    return "other generated"


def read_rows(path):
    """(matrix, k, speedup vs cuSPARSE or None, speedup vs k SpMVs) per CSV row."""
    rows = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            sp = float(r["speedup"]) if r["speedup"] else None
            rows.append((r["matrix"], int(r["k"]), sp, float(r["vs_kspmv"])))
    return rows


def geomean(values):
    values = [v for v in values if v is not None and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def table(rows):
    """{(family, k): (geomean vs cuSPARSE, geomean vs k SpMVs, matrices)}"""
    out = {}
    for fam in FAMILIES:
        for k in sorted({r[1] for r in rows}):
            sel = [r for r in rows if family(r[0]) == fam and r[1] == k]
            if sel:
                out[(fam, k)] = (geomean([r[2] for r in sel]), geomean([r[3] for r in sel]), len(sel))
    return out


def print_table(rows):
    t = table(rows)
    ks = sorted({k for _, k in t})
    print("| family | " + " | ".join(f"k={k}" for k in ks) + " |")
    print("|---|" + "---|" * len(ks))
    for fam in FAMILIES:
        cells = [t.get((fam, k)) for k in ks]
        if any(cells):
            fmt = [f"{c[0]:.2f}x / {c[1]:.2f}x" if c and c[0] else "" for c in cells]
            print(f"| {fam} | " + " | ".join(fmt) + " |")


MIN_NNZ = 1_000_000


def criteria(path):
    """Issue 43's criteria from one spmm_kernel.csv: [(criterion, PASS/FAIL/n/a, detail)]."""
    with open(path, newline="") as f:
        rows = [r for r in csv.DictReader(f) if int(r["nnz"]) >= MIN_NNZ]

    def val(r, col):
        return float(r[col]) if r.get(col) not in (None, "") else None

    def name(r):
        return f"{r['matrix']} k = {r['k']}"

    def verdict(have, ok):
        return "n/a" if not have else ("PASS" if ok else "FAIL")

    out = []
    mid = [r for r in rows if 8 <= int(r["k"]) <= 64 and val(r, "speedup")]
    g = geomean([val(r, "speedup") for r in mid])
    out.append(("geomean >= 2.0x the best cusparseSpMM, k = 8..64", verdict(g, g is not None and g >= 2.0),
                f"{g:.2f}x over {len(mid)} products" if g else "no products"))
    timed = [r for r in rows if val(r, "speedup")]
    worst = min(timed, key=lambda r: val(r, "speedup")) if timed else None
    out.append(("never slower than the best cusparseSpMM", verdict(worst, worst is not None and val(worst, "speedup") >= 1.0),
                f"lowest {val(worst, 'speedup'):.3f}x ({name(worst)})" if worst else "no products"))
    multi = [r for r in rows if int(r["k"]) >= 2]
    slow = [r for r in multi if r.get("way") == "columns" or val(r, "vs_kspmv") <= 1.0]
    lowest = min(multi, key=lambda r: val(r, "vs_kspmv")) if multi else None
    detail = (f"{len(slow)} of {len(multi)} not faster: " + ", ".join(f"{name(r)} ({val(r, 'vs_kspmv'):.3f}x, {r.get('way') or '-'})" for r in slow)
              if slow else f"lowest {val(lowest, 'vs_kspmv'):.3f}x ({name(lowest)})" if lowest else "no products")
    out.append(("every k >= 2 faster than k of our SpMVs", verdict(multi, not slow), detail))
    xb = [val(r, "x_bound") for r in rows if 8 <= int(r["k"]) <= 64 and val(r, "x_bound")]
    out.append(("distance from the memory-traffic bound, k = 8..64", "-", f"{min(xb):.1f}x to {max(xb):.1f}x" if xb else "no bound"))
    return out


def print_criteria(path):
    print(f"| criterion (>= {MIN_NNZ:,} nonzeros) | verdict | detail |")
    print("|---|---|---|")
    for c, v, d in criteria(path):
        print(f"| {c} | {v} | {d} |")


def plot(rows, png):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    colors = dict(zip(FAMILIES, ["tab:blue", "tab:red", "tab:green", "tab:gray"]))
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharex=True)
    for ax, col, title in ((axes[0], 2, "best cusparseSpMM / matxtract"), (axes[1], 3, "k of our SpMVs / matxtract")):
        for m in dict.fromkeys(r[0] for r in rows):
            pts = sorted((r[1], r[col]) for r in rows if r[0] == m and r[col] is not None)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3, color=colors[family(m)], label=m)
        ax.axhline(1.0, color="black", lw=0.8)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("k (dense columns)")
        ax.set_title(title)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("speedup")
    axes[1].legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    fig.savefig(png, dpi=90)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("csv")
    ap.add_argument("-o", "--output", default="spmm_speedup.png")
    ap.add_argument("--table", action="store_true")
    ap.add_argument("--criteria", action="store_true")
    a = ap.parse_args(argv)
    if a.criteria:
        print_criteria(a.csv)
        return 0
    rows = read_rows(a.csv)
    if a.table:
        print_table(rows)
    else:
        plot(rows, a.output)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
