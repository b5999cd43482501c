#!/usr/bin/env python3
"""gain_prior.py LABELS.jsonl[.gz] [--min-nnz N] - the mean fraction of a MatMult that predicting a plan
saves, from a label run: per matrix of >= N nonzeros (default 1M), 1 - t(fastest plan measured) /
t(the default plan), the default being crux (0,0) with the cold kernel of the row-length rule
(src/cuda/mx_device.cu: merge when the longest row has more than MX_SEG_NNZ = 2048 nonzeros or the
row-length coefficient of variation exceeds 2.0, else segment). Prints n, mean, median, p75, p90, max.
The mean is MATXTRACT_PREDICT_GAIN in src/petsc/matxtract_plan.c (upgrade auto predicts once the
MatMult time spent, saving that fraction, would pay for the prediction)."""
import argparse
import gzip
import json
import statistics

SEG_NNZ = 2048  # MX_SEG_THREADS * MX_SEG_PER_THREAD (src/cuda/mx_tuning.h), MX_AUTO_MAX_ROW_SEGS = 1
AUTO_CV = 2.0   # MX_AUTO_CV


def rule_kernel(features):
    """the cold kernel the row-length rule gives a matrix at crux (0,0)"""
    return "merge" if features["row_max"] > SEG_NNZ or features["row_cv"] > AUTO_CV else "segment"


def gain(label):
    """1 - best / default for one label record, or None when its default plan was not measured"""
    ok = [e for e in label["evals"] if e.get("ok")]
    kernel = rule_kernel(label["features"])
    default = [e["t_us"] for e in ok if e["tc"] == 0 and e["tr"] == 0 and e["cold"] == kernel]
    if not default:
        return None
    return 1.0 - min(e["t_us"] for e in ok) / min(default)


def summary(labels, min_nnz):
    """(n, mean, median, p75, p90, max) of the gains of the labels of >= min_nnz nonzeros"""
    gains = sorted(g for g in (gain(r) for r in labels if r["matrix"]["nnz"] >= min_nnz) if g is not None)
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
    n, mean, med, p75, p90, mx = summary(read_labels(a.labels), a.min_nnz)
    print("matrices %d (>= %d nonzeros): gain of the fastest plan over the default: mean %.3f median %.3f p75 %.3f p90 %.3f max %.3f"
          % (n, a.min_nnz, mean, med, p75, p90, mx))


if __name__ == "__main__":
    main()
