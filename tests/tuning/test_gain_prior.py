#!/usr/bin/env python3
"""test_gain_prior.py PREDICTOR_DIR - tuning/predictor/gain_prior.py on known labels: the rule's default
kernel, the gain per matrix (a hot plan faster, the default the best, the default not measured), the
nonzero cut and the summary; the default plan vs cuSPARSE ALG2, plain and packed, and its summary.
Exits 1 if a result is wrong."""
import math
import sys

sys.path.insert(0, sys.argv[1])
import gain_prior  # noqa: E402
from checks import expect, finish  # noqa: E402 (beside this file)


def ev(tc, tr, cold, t):
    return {"ok": 1, "tc": tc, "tr": tr, "cold": cold, "t_us": t}


def feats(row_max, row_cv, nrows=1000, nnz=10000):
    return {"row_max": row_max, "row_cv": row_cv, "nrows": nrows, "nnz": nnz}


def label(nnz, row_max, row_cv, evals, name="m", split="train"):
    return {"name": name, "split": split, "matrix": {"nnz": nnz}, "features": feats(row_max, row_cv, nnz // 10, nnz), "evals": evals}


def packed_ev(cold, t, t_plain):
    e = ev(0, 0, cold, t)
    e["t_plain_us"] = t_plain
    return e


# the default (segment) is 103 us plain, 90 us once packed; ALG2 100 us; a hot plan ALG2 would not count
PACKED = label(2000000, 7, 0.1, [packed_ev("segment", 90.0, 103.0), ev(0, 0, "cusparse", 100.0), ev(1, 1, "cusparse", 50.0)], "packed")
# the default (merge) is 101 us and was not packed (no t_plain_us); ALG2 100 us
PLAIN = label(3000000, 10000, 9.0, [ev(0, 0, "merge", 101.0), ev(0, 0, "cusparse", 100.0)], "plain")
NO_ALG2 = label(1000, 7, 0.1, [ev(0, 0, "segment", 10.0)], "no alg2")


STENCIL = label(2000000, 7, 0.1, [ev(0, 0, "segment", 100.0), ev(0, 0, "merge", 120.0), ev(1, 1, "segment", 80.0)])
SKEWED = label(3000000, 10000, 9.0, [ev(0, 0, "segment", 50.0), ev(0, 0, "merge", 40.0), ev(1, 1, "merge", 45.0)])
NO_DEFAULT = label(4000000, 7, 0.1, [ev(0, 0, "merge", 10.0)])
SMALL = label(1000, 7, 0.1, [ev(0, 0, "segment", 10.0), ev(1, 1, "segment", 5.0)])


def main():
    big = {"nrows": 1000000, "nnz": 30000000}  # 24,220 merge tiles: a large grid
    expect(gain_prior.rule_kernel(feats(8192, 8.0, **big)) == "segment", "rule: 8192 nonzeros and cv 8.0 stay segment on a large grid")
    expect(gain_prior.rule_kernel(feats(8193, 0.0, **big)) == "merge", "rule: a row past four segments is merge")
    expect(gain_prior.rule_kernel(feats(10, 8.5, **big)) == "merge", "rule: cv > 8 is merge")
    expect(gain_prior.rule_kernel(feats(10, 1.5, **big)) == "segment", "rule: cv 1.5 is segment on a large grid")
    expect(gain_prior.rule_kernel(feats(10, 1.5)) == "merge", "rule: cv 1.5 > 1 is merge on a small grid")
    expect(gain_prior.rule_kernel(feats(10, 0.9)) == "segment", "rule: cv 0.9 is segment on a small grid")
    edge = 2 * 8 * 132 * 1280  # 2 waves of 8 tiles per SM on 132 SMs, 1280 merge items a tile
    expect(gain_prior.small_grid({"nrows": 1000, "nnz": edge - 1000}), "small grid: exactly 2 waves of tiles")
    expect(not gain_prior.small_grid({"nrows": 1001, "nnz": edge - 1000}), "small grid: one item more is a larger grid")
    skew = label(100000, 50, 1.5, [ev(0, 0, "segment", 10.0), ev(0, 0, "merge", 8.0)])
    n, loss = gain_prior.rule_loss([skew, STENCIL], "train", True, 1.0)
    expect(n == 2 and loss == 0.0, "rule loss on small grids, cv 1: merge picked where it is faster, segment on the stencil (%s)" % ((n, loss),))
    n, loss = gain_prior.rule_loss([skew, STENCIL], "train", True, 8.0)
    expect(n == 2 and abs(loss - math.log(10.0 / 8.0) / 2) < 1e-12, "rule loss on small grids, cv 8: segment on the skewed one (%s)" % ((n, loss),))
    expect(gain_prior.rule_loss([skew], "test", True, 1.0) == (0, 0.0), "rule loss: another split's labels left out")
    expect(abs(gain_prior.gain(STENCIL) - 0.2) < 1e-12, "a hot plan 80 us vs the default segment 100 us: gain 0.2")
    expect(gain_prior.gain(SKEWED) == 0.0, "the default (merge) is the fastest: gain 0")
    expect(gain_prior.gain(NO_DEFAULT) is None, "default kernel not measured: no gain")
    n, mean, med, p75, p90, mx = gain_prior.summary([STENCIL, SKEWED, NO_DEFAULT, SMALL], 1000000)
    expect(n == 2, "summary: the small matrix and the one without a default left out (n %d)" % n)
    expect(abs(mean - 0.1) < 1e-12 and abs(mx - 0.2) < 1e-12 and med == mx, "summary: mean 0.1, median (upper) and max 0.2")
    expect(gain_prior.summary([], 1)[0] == 0, "summary of nothing: n 0")
    n, mean, _, _, _, mx = gain_prior.summary([STENCIL, SKEWED, NO_DEFAULT, SMALL], 1000000, "segment")
    expect(n == 1 and abs(mean - 0.2) < 1e-12, "summary of the rule's segment matrices: the stencil alone, gain 0.2")
    n, mean, _, _, _, mx = gain_prior.summary([STENCIL, SKEWED, NO_DEFAULT, SMALL], 1000000, "merge")
    expect(n == 1 and mean == 0.0, "summary of the rule's merge matrices: the skewed one alone, gain 0")
    expect(abs(gain_prior.vs_alg2(PACKED, False) - 1.03) < 1e-12, "default plain 103 us vs ALG2 100 us: 1.03")
    expect(abs(gain_prior.vs_alg2(PACKED, True) - 0.9) < 1e-12, "default packed 90 us vs ALG2 100 us: 0.9 (a hot ALG2 plan not counted)")
    expect(abs(gain_prior.vs_alg2(PLAIN, False) - 1.01) < 1e-12 and abs(gain_prior.vs_alg2(PLAIN, True) - 1.01) < 1e-12,
           "no pack timed: plain and packed both 1.01")
    expect(gain_prior.vs_alg2(NO_ALG2, True) is None, "ALG2 not measured: no ratio")
    n, above, worst, name = gain_prior.alg2_summary([PACKED, PLAIN, NO_ALG2], False)
    expect((n, above, name) == (2, 1, "packed") and abs(worst - 1.03) < 1e-12, "plain: 2 matrices, 1 more than 2%% slower, worst 1.03 packed (%s)" % ((n, above, worst, name),))
    n, above, worst, name = gain_prior.alg2_summary([PACKED, PLAIN, NO_ALG2], True)
    expect((n, above, name) == (2, 0, "plain") and abs(worst - 1.01) < 1e-12, "packed: none more than 2%% slower, worst 1.01 plain (%s)" % ((n, above, worst, name),))
    expect(gain_prior.alg2_summary([], True) == (0, 0, 0.0, ""), "ALG2 summary of nothing")
    finish()


main()
