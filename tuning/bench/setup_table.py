#!/usr/bin/env python3
"""setup_table.py CSV [CSV ...] - issue 12's setup table from matxtract-petsc-bench's spmv_petsc.csv
files (run with --petsc-crux 0.7,0.5,1,1): per matrix, aijcusparse's setup (MatConvert + first MatMult
- one MatMult, median of -setup_reps) and matxtract's at (0,0) and at each fixed crux, their ratios,
and the counts the issue asks for (matrices >= 1M nonzeros: (0,0) <= 1.0x, every crux <= 1.2x).
Markdown on stdout. Standard library only."""
import csv
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


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
