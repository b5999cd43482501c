#!/usr/bin/env python3
"""gain_prior.py LABELS.jsonl[.gz] [--min-nnz N] - the mean fraction of a MatMult that predicting a plan
saves, from a label run: per matrix of >= N nonzeros (default 1M), 1 - t(fastest plan measured) /
t(the default plan), the default being crux (0,0) with the cold kernel of the row-length rule
(src/cuda/mx_device.cu: merge when the longest row has more than MX_AUTO_MAX_ROW_SEGS x MX_SEG_NNZ =
8192 nonzeros or the row-length coefficient of variation exceeds MX_AUTO_CV = 8.0, or MX_AUTO_CV_SMALL
= 1.0 where the merge grid is small (at most 2 waves of 8 tiles per SM, 132 SMs), else segment). Prints n, mean, median, p75, p90, max,
over all of them and per kernel of the rule (its verdict is known for free at upload).
Also issue 11's check of the default plan against cuSPARSE CSR ALG2 (the "cusparse" cold kernel) at
(0,0) on every label: the default's time over ALG2's, as the default runs first (plain) and once the
pack has paid (the faster of packed and plain, which the pack guard keeps); how many are more than 2%
slower, and the worst. And the rule's own loss at (0,0): mean log(t(its kernel) / t(the faster of
segment and merge)) per split, on small merge grids (with MX_AUTO_CV_SMALL and, for comparison,
MX_AUTO_CV there) and on the others.
The means are MATXTRACT_PREDICT_GAIN, _MERGE and _SEGMENT in src/petsc/matxtract_plan.c (upgrade auto predicts once the
MatMult time spent, saving that fraction, would pay for the prediction)."""
import argparse
import gzip
import json
import math
import statistics

SEG_NNZ = 2048 * 4  # MX_SEG_THREADS * MX_SEG_PER_THREAD x MX_AUTO_MAX_ROW_SEGS (src/cuda/mx_tuning.h)
AUTO_CV = 8.0       # MX_AUTO_CV
AUTO_CV_SMALL = 1.0  # MX_AUTO_CV_SMALL, where the merge grid is small
MERGE_TILE = 256 * 5                    # MX_MERGE_THREADS * MX_MERGE_ITEMS
SMALL_TILES_PER_SM = 2 * 8              # MX_MERGE_INLINE_WAVES * MX_MERGE_MIN_BLOCKS
SMS = 132                               # H100 SXM and H200


def small_grid(features, sms=SMS):
    """whether the merge grid at crux (0,0) is small (mx_merge_grid_small)"""
    tiles = (features["nrows"] + features["nnz"] + MERGE_TILE - 1) // MERGE_TILE
    return tiles <= SMALL_TILES_PER_SM * sms


def rule_kernel(features, cv_small=AUTO_CV_SMALL):
    """the cold kernel the row-length rule gives a matrix at crux (0,0)"""
    cv = cv_small if small_grid(features) else AUTO_CV
    return "merge" if features["row_max"] > SEG_NNZ or features["row_cv"] > cv else "segment"


def rule_loss(labels, split, small, cv_small):
    """(n, mean log(t(rule's kernel) / t(faster of segment and merge))) at (0,0) over the labels of a
    split on small grids (small) or the others, with AUTO_CV_SMALL = cv_small"""
    loss = []
    for r in labels:
        if r["split"] != split or small_grid(r["features"]) != small:
            continue
        t = {k: min((e["t_us"] for e in origin_evals(r, k)), default=None) for k in ("segment", "merge")}
        if None in t.values():
            continue
        loss.append(math.log(t[rule_kernel(r["features"], cv_small)] / min(t.values())))
    return (len(loss), statistics.mean(loss) if loss else 0.0)


def origin_evals(label, cold):
    """the measured evaluations of one label record at crux (0,0) with cold kernel cold"""
    return [e for e in label["evals"] if e.get("ok") and e["tc"] == 0 and e["tr"] == 0 and e["cold"] == cold]


def gain(label):
    """1 - best / default for one label record, or None when its default plan was not measured"""
    default = [e["t_us"] for e in origin_evals(label, rule_kernel(label["features"]))]
    if not default:
        return None
    return 1.0 - min(e["t_us"] for e in label["evals"] if e.get("ok")) / min(default)


def vs_alg2(label, packed):
    """t(default plan) / t(cuSPARSE ALG2) at (0,0) for one label record: the default plain (its
    t_plain_us where the runner timed a pack too) or, packed, as the guard keeps it (t_us); None when
    either plan was not measured"""
    default = [e["t_us"] if packed else e.get("t_plain_us") or e["t_us"] for e in origin_evals(label, rule_kernel(label["features"]))]
    alg2 = [e["t_us"] for e in origin_evals(label, "cusparse")]
    if not default or not alg2:
        return None
    return min(default) / min(alg2)


def alg2_summary(labels, packed, slower=1.02):
    """(n, how many above slower, worst ratio, its name) of vs_alg2 over the labels"""
    got = sorted((x, r["name"]) for r in labels for x in [vs_alg2(r, packed)] if x is not None)
    if not got:
        return (0, 0, 0.0, "")
    return (len(got), sum(1 for x, _ in got if x > slower), got[-1][0], got[-1][1])


def summary(labels, min_nnz, kernel=None):
    """(n, mean, median, p75, p90, max) of the gains of the labels of >= min_nnz nonzeros (those the
    rule sends to kernel, if given)"""
    kept = [r for r in labels if r["matrix"]["nnz"] >= min_nnz and (kernel is None or rule_kernel(r["features"]) == kernel)]
    gains = sorted(g for g in (gain(r) for r in kept) if g is not None)
    n = len(gains)
    if n == 0:
        return (0, 0.0, 0.0, 0.0, 0.0, 0.0)
    return (n, statistics.mean(gains), gains[n // 2], gains[3 * n // 4], gains[9 * n // 10], gains[-1])


def read_labels(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return [json.loads(line) for line in f if line.strip()]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("labels")
    ap.add_argument("--min-nnz", type=int, default=1000000)
    a = ap.parse_args()
    labels = read_labels(a.labels)
    for kernel in (None, "merge", "segment"):
        n, mean, med, p75, p90, mx = summary(labels, a.min_nnz, kernel)
        print("matrices %d (>= %d nonzeros%s): gain of the fastest plan over the default: mean %.3f median %.3f p75 %.3f p90 %.3f max %.3f"
              % (n, a.min_nnz, ", rule: " + kernel if kernel else "", mean, med, p75, p90, mx))
    for small in (True, False):
        for cv_small in ((AUTO_CV_SMALL, AUTO_CV) if small else (AUTO_CV,)):
            got = ["%s n %d loss %.4f" % ((split,) + rule_loss(labels, split, small, cv_small)) for split in ("train", "test")]
            print("the row-length rule at (0,0), %s grids, cv threshold %g: mean log loss against the faster of segment and merge: %s"
                  % ("small" if small else "larger", cv_small if small else AUTO_CV, ", ".join(got)))
    for packed in (False, True):
        n, above, worst, name = alg2_summary(labels, packed)
        print("default plan %s vs cuSPARSE ALG2 at (0,0), all %d matrices: %d more than 2%% slower, worst %.3f (%s)"
              % ("packed as the guard keeps it" if packed else "plain (before the pack)", n, above, worst, name))


if __name__ == "__main__":
    main()
