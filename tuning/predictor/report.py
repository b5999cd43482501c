"""report.py - what users feel from the predictor, on the test split: regret distribution (time at the
predicted plan / BO-best), hit rate in the near-optimal set, speedups over the best cuSPARSE cold
kernel at the predicted plan / BO-best / (0,0), how often a hot crux is chosen and what it gains,
per family and for the unique-valued twins apart (issue 42), with plots.

    python3 tuning/predictor/report.py --labels LABELS.jsonl --measured PLANS.jsonl --train TRAINDIR -o RESULTDIR

LABELS: labels.py's BO records; PLANS: labels.py --plans records of the predicted plans (their
measured time); TRAINDIR: train.py's output (predictions.json, train_summary.json).
"cuSPARSE" = our runner's cusparse cold kernel at (0,0): cusparseSpMV CSR ALG2 (bitwise
reproducible), i.e. the best reproducible cuSPARSE; ALG1 is not measured here (matxtract-bench does).
Writes RESULTDIR/predictor.csv, report.md and regret_cdf.png, speedup_vs_nnz.png (the plots only where
matplotlib imports; it says so otherwise).
"""
import argparse
import csv
import json
import math
import os
import statistics
import sys


def load(path):
    with open(path) as f:
        return {r["name"]: r for r in (json.loads(l) for l in f if l.strip())}


def values_of(name):
    """The corpus's @unique twins (corpus.py: NAME_unique) against the generators' own values."""
    return "unique values" if name.endswith("_unique") else "generator values"


def row(bo, meas, pred):
    ok = [e for e in bo["evals"] if e.get("ok")]
    best = min(ok, key=lambda e: e["t_us"])
    t_ref = bo["t_ref_us"]
    cus = [e["t_us"] for e in ok + [e for e in meas["evals"] if e.get("ok")] if e["cold"] == "cusparse" and e["tr"] == 0]
    p = pred[0]
    got = [e for e in meas["evals"] if e.get("ok") and [e["tc"], e["tr"], e["mode_req"], e["cold"]] == p]
    if not got:
        return None
    t_pred = got[0]["t_us"]
    limit = best["t_us"] + best["rep_max_us"] - best["rep_min_us"]
    return dict(name=bo["name"], family=bo["family"], values=values_of(bo["name"]), nnz=bo["matrix"]["nnz"], plan="%g,%g %s %s" % tuple(p),
                hot=p[1] > 0, t_pred_us=t_pred, t_best_us=best["t_us"], t_00_us=t_ref, t_cusparse_us=min(cus),
                regret=t_pred / best["t_us"], hit=t_pred <= limit, sp_pred=min(cus) / t_pred, sp_best=min(cus) / best["t_us"],
                sp_00=min(cus) / t_ref, gain_hot=t_ref / t_pred if p[1] > 0 else float("nan"))


def quantile(v, q):
    s = sorted(v)
    return s[min(len(s) - 1, max(0, math.ceil(q * len(s)) - 1))]


def gmean(v):
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v else float("nan")


def table(rows, key):
    groups = {}
    for r in rows:
        groups.setdefault(key(r), []).append(r)
    lines = ["| group | n | regret median | regret p90 | hit | vs cuSPARSE: predicted | BO-best | (0,0) | hot chosen |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for k in sorted(groups):
        g = groups[k]
        lines.append("| %s | %d | %.3f | %.3f | %.0f%% | %.3fx | %.3fx | %.3fx | %d |" % (
            k, len(g), statistics.median(r["regret"] for r in g), quantile([r["regret"] for r in g], 0.9),
            100.0 * sum(r["hit"] for r in g) / len(g), gmean([r["sp_pred"] for r in g]), gmean([r["sp_best"] for r in g]),
            gmean([r["sp_00"] for r in g]), sum(r["hot"] for r in g)))
    return "\n".join(lines)


def plots(rows, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    reg = sorted(r["regret"] for r in rows)
    plt.figure(figsize=(5, 3.5))
    plt.step(reg, [(k + 1) / len(reg) for k in range(len(reg))], where="post")
    plt.axvline(1.03, ls=":", c="gray"), plt.axvline(1.10, ls="--", c="gray")
    plt.xlabel("regret = t(predicted plan) / t(BO-best)"), plt.ylabel("fraction of test matrices")
    plt.tight_layout(), plt.savefig(os.path.join(out, "regret_cdf.png"), dpi=120), plt.close()
    plt.figure(figsize=(6, 4))
    for fam in sorted({r["family"] for r in rows}):
        g = [r for r in rows if r["family"] == fam]
        plt.scatter([r["nnz"] for r in g], [r["sp_pred"] for r in g], s=12, label=fam)
    plt.xscale("log"), plt.axhline(1.0, c="gray", lw=0.8)
    plt.xlabel("nnz"), plt.ylabel("speedup over cuSPARSE ALG2 (predicted plan)")
    plt.legend(fontsize=6, ncol=2), plt.tight_layout(), plt.savefig(os.path.join(out, "speedup_vs_nnz.png"), dpi=120), plt.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--labels", required=True)
    ap.add_argument("--measured", required=True)
    ap.add_argument("--train", required=True)
    ap.add_argument("-o", "--out", required=True)
    ap.add_argument("--command", default=" ".join(sys.argv))
    a = ap.parse_args()
    bo, meas = load(a.labels), load(a.measured)
    preds = json.load(open(os.path.join(a.train, "predictions.json")))
    summary = json.load(open(os.path.join(a.train, "train_summary.json")))
    rows = [r for r in (row(bo[n], meas[n], preds[n]) for n in preds if n in bo and n in meas) if r]
    if not rows:
        raise SystemExit("no test matrix has both BO labels and a measured predicted plan")
    os.makedirs(a.out, exist_ok=True)
    cols = list(rows[0].keys())
    with open(os.path.join(a.out, "predictor.csv"), "w", newline="") as f:  # csv: the plan holds commas
        w = csv.writer(f)
        w.writerow(cols)
        for r in rows:
            w.writerow([r[c] for c in cols])
    fake = summary.get("fake") or any(bo[n].get("fake") for n in bo)
    with open(os.path.join(a.out, "report.md"), "w") as f:
        if fake:
            f.write("**FAKE: synthetic times from fake_runner.py (plumbing test), not measurements.**\n\n")
        f.write("# Predictor on the held-out test split\n\nModel: %s\n\nCommand: `%s`\n\n" % (summary["trained_on"], a.command))
        f.write("Done-when targets (issue 11): regret median <= 1.03, p90 <= 1.10; issue 42: the same on the "
                "unique-valued matrices alone.\n\n")
        f.write(table(rows, lambda r: "all") + "\n\n" + table(rows, lambda r: r["values"]) + "\n\n" +
                table(rows, lambda r: r["family"]) + "\n\n")
        f.write("Regret = measured time of the predicted plan / fastest plan BO measured; hit = within the best's "
                "repeat spread. Speedups are geometric means of t(cuSPARSE ALG2 at (0,0)) / t. Hot chosen = "
                "test matrices whose predicted plan has tau_r > 0.\n")
    try:
        plots(rows, a.out)
    except ImportError as e:  # the GPU host's python may lack matplotlib: the tables are the result
        print("report.py: plots not drawn (%s); report.md and predictor.csv are written" % e, file=sys.stderr)
    print(open(os.path.join(a.out, "report.md")).read())
    return 0


if __name__ == "__main__":
    sys.exit(main())
