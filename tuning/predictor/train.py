"""train.py - the plan surrogate: random forest vs gradient boosting vs AdaBoost, chosen by grouped
cross-validation (groups = matrices) on the train split, exported as a model file and as the
embedded C source.

    python3 tuning/predictor/train.py LABELS.jsonl... -o OUTDIR [--names NAMES.txt] [--embed]
    python3 tuning/predictor/train.py --placeholder        (rewrite the placeholder C source)

Samples: every measured plan of every train matrix; inputs = the C feature vector (as the runner
printed it) + (tau_c, tau_r, mode 0/1/2 = auto/du/se, cold 1/2/3 = segment/merge/cusparse); target =
log(t_plan / t_ref), t_ref = the matrix's time at crux (0,0) with its best cold kernel.
Model choice: 5-fold GroupKFold; score = mean over held-out matrices of log(regret), regret = time of
the plan the model ranks first among the matrix's measured plans / the best measured time (what
users feel; MSE is reported beside it). Small grids (model size bounds the prediction cost).
Candidates stored in the model: (0,0) with each cold kernel, plus every plan of the grid
tau in {0.1, ..., 1}, tau_r <= tau_c, du/se, 3 cold kernels that lies nearest to a plan of some
train matrix's near-optimal set. Setup model: least squares of the measured extra setup per nonzero
(build + upload of the plan minus the matrix's fastest (0,0) build after its first) on (1, tau_c, tau_r).

Writes OUTDIR/model.txt, OUTDIR/cv.csv, OUTDIR/train_summary.json, OUTDIR/predictions.json (the
predicted plan of every test matrix, for labels.py --plans) and, with --embed,
src/core/mx_model_default.c. Records marked "fake" (fake_runner.py) are refused by --embed.
"""
import argparse
import json
import math
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import model_export as me  # noqa: E402

MODE_CODE = {"auto": 0, "du": 1, "se": 2}
COLD_CODE = {"auto": 0, "segment": 1, "merge": 2, "cusparse": 3}
DEFAULT_C = os.path.join(ROOT, "src/core/mx_model_default.c")
GRID = [round(0.1 * k, 1) for k in range(11)]


def load(paths):
    recs = []
    for p in paths:
        with open(p) as f:
            recs += [json.loads(l) for l in f if l.strip()]
    return [r for r in recs if r.get("t_ref_us")]


def plan_key(e):
    return (e["tc"], e["tr"], e["mode_req"], e["cold"])


def samples(recs, names):
    """X rows (features + plan), y, group index, per-row plan, per-row time."""
    X, y, g, plans, times = [], [], [], [], []
    for k, r in enumerate(recs):
        if list(r["features"].keys()) != names[:-4]:
            raise SystemExit("%s: feature names differ from this build's (rerun labels with this build)" % r["name"])
        f = [r["features"][n] for n in names[:-4]]
        for e in r["evals"]:
            if not e.get("ok"):
                continue
            X.append(f + [e["tc"], e["tr"], MODE_CODE[e["mode_req"]], COLD_CODE[e["cold"]]])
            y.append(math.log(e["t_us"] / r["t_ref_us"]))
            g.append(k)
            plans.append(plan_key(e))
            times.append(e["t_us"])
    return X, y, g, plans, times


def candidate_grid():
    plans = [(0.0, 0.0, "auto", c) for c in ("segment", "merge", "cusparse")]
    for tc in GRID[1:]:
        for tr in GRID[1:]:
            if tr <= tc:
                plans += [(tc, tr, m, c) for m in ("du", "se") for c in ("segment", "merge", "cusparse")]
    return plans


def nearest_grid(p):
    tc = min(GRID, key=lambda v: abs(v - p[0]))
    tr = min((v for v in GRID if v <= tc), key=lambda v: abs(v - p[1]))
    if tr == 0:
        return (0.0, 0.0, "auto", p[3])
    return (tc, tr, p[2] if p[2] != "auto" else "du", p[3])


def candidates(recs):
    keep = {(0.0, 0.0, "auto", c) for c in ("segment", "merge", "cusparse")}
    for r in recs:
        for k in r["near_optimal"]:
            keep.add(nearest_grid(plan_key(r["evals"][k])))
    return [p for p in candidate_grid() if p in keep]


SETUP_MIN_NNZ = 1_000_000


def setup_model(recs):
    """ns per nnz of (build + upload) over (0,0), fitted on (1, tc, tr) by least squares over the
    matrices of >= SETUP_MIN_NNZ nonzeros: below that the extra setup is a fixed few ms that a
    per-nonzero model cannot hold (fitted on every matrix, the small ones made the constant -1079
    ns/nnz on the H100 labels of 2026-11-23). The base is a matrix's fastest (0,0) build after its
    first evaluation: the first build of each matrix pays first-use costs (median +10.4 ms over the
    129 matrices >= 1M nnz of the H100 labels of 2026-11-25), which as a per-kernel base made the
    constant negative (-0.19 ns/nnz); every cold kernel's (0,0) build is the same format."""
    import numpy as np
    A, b = [], []
    for r in recs:
        if r["matrix"]["nnz"] < SETUP_MIN_NNZ:
            continue
        ok = [e for e in r["evals"] if e.get("ok")]
        later = [e["build_ms"] + e["upload_ms"] for e in ok[1:] if e["tr"] == 0]
        if not later:
            continue
        base = min(later)
        for e in ok:  # every evaluation is a whole GPU build (CSR upload included)
            if e["tr"] == 0:
                continue
            A.append([1.0, e["tc"], e["tr"]])
            b.append(1e6 * (e["build_ms"] + e["upload_ms"] - base) / r["matrix"]["nnz"])
    if len(b) < 3:
        return (0.0, 0.0, 0.0), 0
    coef = np.linalg.lstsq(np.array(A), np.array(b), rcond=None)[0]
    return tuple(float(c) for c in coef), len(b)


def model_grid():
    from sklearn.ensemble import AdaBoostRegressor, GradientBoostingRegressor, RandomForestRegressor
    from sklearn.tree import DecisionTreeRegressor
    grid = []
    for n in (100, 300):
        for d in (8, 12):
            for leaf in (2, 5):
                grid.append(("random_forest", dict(n_estimators=n, max_depth=d, min_samples_leaf=leaf),
                             lambda n=n, d=d, leaf=leaf: RandomForestRegressor(n_estimators=n, max_depth=d, min_samples_leaf=leaf,
                                                                                 random_state=0, n_jobs=1)))
    for n in (200, 400):
        for lr in (0.05, 0.1):
            for d in (3, 5):
                grid.append(("gradient_boosting", dict(n_estimators=n, learning_rate=lr, max_depth=d),
                             lambda n=n, lr=lr, d=d: GradientBoostingRegressor(n_estimators=n, learning_rate=lr, max_depth=d,
                                                                                 random_state=0)))
    for n in (50, 100):
        for d in (6, 10):
            grid.append(("adaboost", dict(n_estimators=n, max_depth=d),
                         lambda n=n, d=d: AdaBoostRegressor(DecisionTreeRegressor(max_depth=d), n_estimators=n, random_state=0)))
    return grid


def fold_scores(make, X, y, g, times, tr_idx, te_idx):
    """One grid entry on one fold: the squared errors and the held-out matrices' log regrets, in order."""
    import numpy as np
    m = make().fit(X[tr_idx], y[tr_idx])
    pred = m.predict(X[te_idx])
    se = list((pred - y[te_idx]) ** 2)
    logreg = []
    for grp in np.unique(g[te_idx]):
        sel = g[te_idx] == grp
        t = times[te_idx][sel]
        logreg.append(math.log(t[np.argmin(pred[sel])] / t.min()))
    return se, logreg


def cross_validate(X, y, g, times, folds, jobs):
    """Per grid entry: mean log regret over held-out matrices (argmin among measured plans) and MSE.
    The (entry, fold) fits run on `jobs` processes (joblib); every fit has its fixed random_state and
    the scores are gathered in (entry, fold) order, so the result does not depend on `jobs`."""
    import numpy as np
    from joblib import Parallel, delayed
    from sklearn.model_selection import GroupKFold
    X, y, g, times = np.array(X), np.array(y), np.array(g), np.array(times)
    splits = list(GroupKFold(n_splits=folds).split(X, y, g))
    grid = model_grid()
    done = Parallel(n_jobs=jobs)(delayed(fold_scores)(make, X, y, g, times, tr, te) for _, _, make in grid for tr, te in splits)
    rows = []
    for i, (kind, params, make) in enumerate(grid):
        logreg, se = [], []
        for f_se, f_logreg in done[i * len(splits):(i + 1) * len(splits)]:
            se += f_se
            logreg += f_logreg
        rows.append(dict(model=kind, params=params, mean_log_regret=float(np.mean(logreg)),
                         p90_regret=float(np.exp(np.percentile(logreg, 90))), mse=float(np.mean(se)), make=make))
    return rows


def input_names(path):
    if path:
        return [l.strip() for l in open(path) if l.strip()]
    tool = os.path.join(ROOT, "build-gpu/tuning/predictor/matxtract-predictor")
    return subprocess.run([tool, "names"], check=True, capture_output=True, text=True).stdout.split()


def write_placeholder():
    m = me.placeholder(None, "run tuning/predictor/run_labels.sh on the GPU host, then train.py")
    me.write_c_source(m, DEFAULT_C, "python3 tuning/predictor/train.py --placeholder")
    print("wrote", DEFAULT_C)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("labels", nargs="*")
    ap.add_argument("-o", "--out")
    ap.add_argument("--names", help="file with the model's input names (default: matxtract-predictor names)")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=-1, help="processes for the cross-validation's fits (-1: every core)")
    ap.add_argument("--embed", action="store_true", help="also write src/core/mx_model_default.c")
    ap.add_argument("--placeholder", action="store_true")
    a = ap.parse_args()
    if a.placeholder:
        return write_placeholder()
    if not a.labels or not a.out:
        ap.error("LABELS and -o are required")
    recs = load(a.labels)
    fake = any(r.get("fake") for r in recs)
    if a.embed and fake:
        raise SystemExit("refusing --embed: the labels contain fake_runner records (synthetic times)")
    compress = sorted({r.get("compress", "off") for r in recs})  # records before the option were plain ("off")
    if len(compress) > 1:
        raise SystemExit("the labels mix cold regions packed and plain (compress %s): relabel into a fresh folder" % "/".join(compress))
    names = input_names(a.names)
    train = [r for r in recs if r["split"] == "train"]
    test = [r for r in recs if r["split"] == "test"]
    X, y, g, plans, times = samples(train, names)
    folds = min(a.folds, len(train))
    print("train: %d matrices, %d samples; test: %d matrices" % (len(train), len(X), len(test)))
    rows = cross_validate(X, y, g, times, folds, a.jobs)
    best = min(rows, key=lambda r: r["mean_log_regret"])
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "cv.csv"), "w") as f:
        f.write("model,params,mean_log_regret,p90_regret,mse\n")
        for r in rows:
            f.write('%s,"%s",%.6f,%.4f,%.6f\n' % (r["model"], json.dumps(r["params"]), r["mean_log_regret"], r["p90_regret"], r["mse"]))
    est = best["make"]().fit(X, y)
    gpus = sorted({r["matrix"].get("gpu", "?") for r in recs})
    trained_on = "%s%d train matrices, %d samples, %s; %s %s; CV mean log regret %.4f" % (
        "FAKE synthetic times: " if fake else "", len(train), len(X), "/".join(gpus), best["model"],
        json.dumps(best["params"], separators=(",", ":")), best["mean_log_regret"])
    setup, nsetup = setup_model(train)
    cands = candidates(train)
    model = me.from_sklearn(est, trained_on[:255], cands, setup, names)
    check = list(range(0, len(X), max(1, len(X) // 500)))  # the export must reproduce scikit-learn exactly
    sk = est.predict([X[i] for i in check])
    worst = max(abs(model.predict(X[i]) - v) for i, v in zip(check, sk))
    if worst > 1e-12:
        raise SystemExit("export differs from scikit-learn by %g" % worst)
    me.write_model_file(model, os.path.join(a.out, "model.txt"))
    preds = {}
    for r in test:
        f = [r["features"][n] for n in names[:-4]]
        ys = [model.predict(f + [tc, tr, MODE_CODE[m], COLD_CODE[c]]) for tc, tr, m, c in cands]
        k = min(range(len(cands)), key=lambda i: (ys[i], i))
        preds[r["name"]] = [list(cands[k])]
    json.dump(preds, open(os.path.join(a.out, "predictions.json"), "w"), indent=0)
    summary = dict(trained_on=trained_on, chosen=best["model"], params=best["params"], candidates=len(cands),
                   setup_ns_per_nnz=setup, setup_samples=nsetup, fake=fake, compress=compress[0] if compress else "off",
                   trees=len(model.trees), nodes=sum(len(n) for _, n in model.trees))
    json.dump(summary, open(os.path.join(a.out, "train_summary.json"), "w"), indent=1)
    if a.embed:
        me.write_c_source(model, DEFAULT_C, "python3 tuning/predictor/train.py %s -o %s --embed" % (" ".join(a.labels), a.out))
    for r in sorted(rows, key=lambda r: r["mean_log_regret"])[:5]:
        print("  %-18s %-55s log regret %.4f  p90 %.3f  mse %.5f" % (r["model"], json.dumps(r["params"]),
                                                                   r["mean_log_regret"], r["p90_regret"], r["mse"]))
    print("chose %s; %d candidates; setup %s ns/nnz from %d builds; wrote %s" % (best["model"], len(cands), setup, nsetup, a.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
