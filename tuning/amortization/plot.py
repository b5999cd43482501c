"""Amortization plots: total time T(N) = setup + N * per_it for each Mat type, per matrix, and the
break-even iteration count k* = (setup_ours - setup_base) / (t_base - t_ours) against aijcusparse.
usage: plot.py amortization.csv OUTDIR  -> amortization_<matrix>.png, amortization.md"""
import sys, csv, collections
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

rows = list(csv.DictReader(open(sys.argv[1])))
out = sys.argv[2]
by = collections.OrderedDict()
for r in rows:
    by.setdefault(r["matrix"], []).append(r)
lines = ["| matrix | solver | type | setup (ms) | per iteration (us) | vs aijcusparse | break-even its |",
         "| --- | --- | --- | --- | --- | --- | --- |"]
for m, rs in by.items():
    base = next((r for r in rs if r["type"] == "aijcusparse"), None)
    plt.figure(figsize=(5, 3.5))
    nmax = 2000
    for r in rs:
        s, t = float(r["setup_s"]), float(r["per_it_s"])
        label = r["type"] + ("" if r["type"] == "aijcusparse" else f" ({r['crux_tc']},{r['crux_tr']})")
        plt.plot([0, nmax], [s * 1e3, (s + nmax * t) * 1e3], label=label)
        ratio, k = "", ""
        if base is not None and r is not base:
            sb, tb = float(base["setup_s"]), float(base["per_it_s"])
            ratio = f"{tb / t:.2f}x"
            if t < tb:
                k = f"{max(0.0, (s - sb) / (tb - t)):.1f}"
            else:
                k = "never (slower per iteration)"
        lines.append(f"| {m} | {r['solver']} | {label} | {s * 1e3:.2f} | {t * 1e6:.1f} | {ratio} | {k} |")
    plt.xlabel("iterations")
    plt.ylabel("total time (ms)")
    plt.title(f"{m} ({rs[0]['solver']})")
    plt.legend(fontsize=7)
    plt.tight_layout()
    plt.savefig(f"{out}/amortization_{m}.png", dpi=110)
    plt.close()
open(f"{out}/amortization.md", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
