#!/usr/bin/env python3
"""setup_table.py CSV [CSV ...] - issue 12's setup table from matxtract-petsc-bench's spmv_petsc.csv
files (run with --petsc-crux 0.7,0.5,1,1): per matrix, aijcusparse's setup (MatConvert + first MatMult
- one MatMult, median of -setup_reps) and matxtract's at (0,0) and at each fixed crux, their ratios,
and the counts the issue asks for (matrices >= 1M nonzeros: (0,0) <= 1.0x, every crux <= 1.2x);
then the amortization table: per matrix and plan, the MatMults after which matxtract's total
(setup + N x its time per MatMult, t_med_us) is below aijcusparse's; then issue 11's cost bound: the
default plan's features + prediction (predict_ms, paid inside the solve) as a share of aijcusparse's
setup (at most 5% wanted). Markdown on stdout. Standard library only."""
import csv
import math
import sys
from collections import OrderedDict


def main(paths):
    rows = OrderedDict()
    cruxes = []
    for p in paths:
        for r in csv.DictReader(open(p)):
            if not r.get("setup_ms"):
                continue
            d = rows.setdefault(r["matrix"], {"nnz": int(r["nnz"])})
            v = r["variant"]
            d[v] = float(r["setup_ms"])
            d["t_" + v] = float(r["t_med_us"])
            if v == "matxtract" and r.get("predict_ms"):
                d["predict_ms"] = float(r["predict_ms"])
            if v.startswith("matxtract_") and v not in cruxes:
                cruxes.append(v)
    base = "aijcusparse" if any("aijcusparse" in d for d in rows.values()) else "aij"  # CPU runs: aij
    cols = ["matxtract"] + cruxes
    names = ["(0,0)"] + ["(%s)" % c[len("matxtract_"):].replace("_", ",") for c in cruxes]
    print("| matrix | nnz (M) | %s setup (ms) | %s | %s |" % (base, " | ".join("matxtract " + n for n in names),
                                                              " | ".join("ratio " + n for n in names)))
    print("|---|---|---|" + "---|" * (2 * len(cols)))
    n = ok00 = ok_all = 0
    worst = []
    for m, d in rows.items():
        if base not in d or any(c not in d for c in cols):
            continue
        r = [d[c] / d[base] for c in cols]
        print("| %s | %.1f | %.1f | %s | %s |" % (m, d["nnz"] / 1e6, d[base], " | ".join("%.1f" % d[c] for c in cols),
                                                 " | ".join("%.2f" % x for x in r)))
        if d["nnz"] >= 1000000:
            n += 1
            ok00 += r[0] <= 1.0
            ok_all += max(r) <= 1.2
            worst.append((max(r), m))
    worst.sort(reverse=True)
    print("\nmatrices >= 1M nonzeros: %d; (0,0) <= 1.0x: %d; every crux <= 1.2x: %d" % (n, ok00, ok_all))
    print("largest ratio over the cruxes: " + ", ".join("%s %.2f" % (m, w) for w, m in worst[:8]))
    breakeven_table(rows, base, cols, names)
    predict_cost(rows, base)


def breakeven(setup_mx, t_mx, setup_base, t_base):
    """When matxtract's total (setup ms + N MatMults of t us) drops below the base's: "0" (never
    behind), "N" (behind until N MatMults), "ahead < N" (ahead until N, then behind), "never"."""
    ds, dt = setup_mx - setup_base, 1e-3 * (t_base - t_mx)  # ms more to set up, ms saved per MatMult
    if ds <= 0 and dt >= 0:
        return "0"
    if ds > 0 and dt > 0:
        return "%d" % math.ceil(ds / dt - 1e-9)  # (the tolerance: 2 / 0.01 is 199.99... in binary)
    if ds < 0:
        return "ahead < %d" % math.floor(ds / dt + 1e-9)
    return "never"


def breakeven_table(rows, base, cols, names):
    print("\n## Amortization: MatMults after which matxtract (setup + MatMults) is ahead of %s\n" % base)
    print("(\"0\": never behind; \"ahead < N\": ahead until N MatMults, then behind; \"never\": slower to set up and per MatMult. "
          "Setup as above, time per MatMult t_med_us of the same run; the default plan's prediction, paid inside the solve, is not counted.)\n")
    print("| matrix | %s (us) | %s |" % (base, " | ".join("%s (us) | break-even" % n for n in names)))
    print("|---|---|" + "---|---|" * len(cols))
    for m, d in rows.items():
        if base not in d or any(c not in d for c in cols):
            continue
        cells = ["%.1f | %s" % (d["t_" + c], breakeven(d[c], d["t_" + c], d[base], d["t_" + base])) for c in cols]
        print("| %s | %.1f | %s |" % (m, d["t_" + base], " | ".join(cells)))


def predict_cost(rows, base, bound=0.05):
    """Issue 11: features + prediction of the default plan over the base's setup, per matrix that has
    both (a prediction of 0 ms, none made, is skipped): the median share and those above bound."""
    shares = sorted((d["predict_ms"] / d[base], m, d["predict_ms"], d[base]) for m, d in rows.items()
                    if d.get("predict_ms", 0) > 0 and d.get(base, 0) > 0)
    if not shares:
        return
    k = len(shares)
    med = shares[k // 2][0] if k % 2 else 0.5 * (shares[k // 2 - 1][0] + shares[k // 2][0])
    over = [s for s in reversed(shares) if s[0] > bound]
    print("\n## Features + prediction (default plan, paid inside the solve) vs %s's setup\n" % base)
    print("matrices: %d; median share %.1f%%; above %.0f%%: %d%s" % (
        k, 100 * med, 100 * bound, len(over),
        "".join(("; " if i == 0 else ", ") + "%s %.1f%% (%.2f of %.1f ms)" % (m, 100 * s, p, b) for i, (s, m, p, b) in enumerate(over))))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
