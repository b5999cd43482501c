#!/usr/bin/env python3
"""label_regret.py - the regret of predicted plans read off BO labels, without a GPU: for each matrix of
PREDICTIONS that LABELS holds, the time of its predicted plan (the fastest BO evaluation at the same crux,
hot mode where tau_r > 0, and cold kernel) over the fastest plan BO timed. Used to ask how a model does
on another GPU kind's labels (a model trained on one kind's labels, checked on the other's).

    python3 tuning/predictor/label_regret.py LABELS.jsonl[.gz] PREDICTIONS.json [PREDICTIONS.json ...]

PREDICTIONS: {matrix name: [[tau_c, tau_r, mode, cold], ...]} (train.py's predictions.json; the first plan
counts). Prints per file: matrices found, plans the labels never timed, regret median, p90, max, and each
matrix whose regret is above 1.05."""
import argparse
import gzip
import json
import math


def read_labels(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return {r["name"]: r for r in (json.loads(line) for line in f if line.strip())}


def plan_time(record, plan):
    """the fastest OK evaluation of plan (tau_c, tau_r, mode, cold) in record, or None"""
    tc, tr, mode, cold = plan
    times = [e["t_us"] for e in record["evals"]
             if e.get("ok") and abs(e["tc"] - tc) < 1e-9 and abs(e["tr"] - tr) < 1e-9 and e["cold"] == cold
             and (tr == 0 or e.get("mode_req") == mode)]
    return min(times) if times else None


def best_time(record):
    return min(e["t_us"] for e in record["evals"] if e.get("ok"))


def percentile(values, q):
    """linear interpolation between order statistics (numpy's default)"""
    v = sorted(values)
    at = q * (len(v) - 1)
    lo = math.floor(at)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (at - lo)


def regrets(labels, predictions):
    """({name: regret}, [names whose predicted plan the labels never timed])"""
    found, untimed = {}, []
    for name, plans in predictions.items():
        if name not in labels or not plans:
            continue
        t = plan_time(labels[name], plans[0])
        if t is None:
            untimed.append(name)
        else:
            found[name] = t / best_time(labels[name])
    return found, untimed


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("labels")
    ap.add_argument("predictions", nargs="+")
    a = ap.parse_args(argv)
    labels = read_labels(a.labels)
    for path in a.predictions:
        with open(path) as f:
            found, untimed = regrets(labels, json.load(f))
        if not found:
            print("%s: no matrix of the labels" % path)
            continue
        v = list(found.values())
        print("%s: %d matrices, %d plans never timed; regret median %.3f p90 %.3f max %.3f"
              % (path, len(v), len(untimed), percentile(v, 0.5), percentile(v, 0.9), max(v)))
        for name in sorted(found, key=found.get, reverse=True):
            if found[name] > 1.05:
                print("  %-44s %.3f" % (name, found[name]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
