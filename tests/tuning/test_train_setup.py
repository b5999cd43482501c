#!/usr/bin/env python3
"""test_train_setup.py PREDICTOR_DIR - tuning/predictor/train.py's setup model on known labels: builds
that cost exactly 1e-9 * nnz * (0.3 + 0.2 tau_c + 0.8 tau_r) s over (0,0), with each matrix's first
build inflated by 10 ms (the first-use costs the label runs show) and the (0,0) builds of the cold
kernels differing; the fit must recover the coefficients, and leave out small matrices. Needs numpy
(Debian's python3-numpy, which python3-petsc4py brings): exit 77 (skipped) without it. Exits 1 if a
result is wrong."""
import sys

from checks import expect, finish, needs  # beside this file

needs("numpy")
sys.path.insert(0, sys.argv[1])
import train  # noqa: E402

TRUE = (0.3, 0.2, 0.8)


def ev(tc, tr, cold, build_ms):
    return {"ok": 1, "tc": tc, "tr": tr, "cold": cold, "build_ms": build_ms, "upload_ms": 0.0}


def label(nnz, base_ms):
    extra = lambda tc, tr: 1e-6 * nnz * (TRUE[0] + TRUE[1] * tc + TRUE[2] * tr)  # ms
    evals = [ev(0, 0, "segment", base_ms + 10.0), ev(0, 0, "merge", base_ms + 0.5), ev(0, 0, "cusparse", base_ms)]
    for tc, tr in ((1, 1), (0.5, 0.2), (0.8, 0.8), (0.3, 0.1)):
        for cold in ("segment", "merge"):
            evals.append(ev(tc, tr, cold, base_ms + extra(tc, tr)))
    return {"matrix": {"nnz": nnz}, "evals": evals}


def main():
    recs = [label(2_000_000, 5.0), label(5_000_000, 9.0), label(30_000_000, 40.0)]
    coef, n = train.setup_model(recs)
    expect(n == 24, "24 hot builds fitted (%d)" % n)
    expect(all(abs(c - t) < 1e-9 for c, t in zip(coef, TRUE)), "coefficients %s, expected %s" % (coef, TRUE))
    small = label(500_000, 1.0)
    small["evals"][-1]["build_ms"] += 1e3
    coef2, n2 = train.setup_model(recs + [small])
    expect(n2 == 24 and all(abs(c - t) < 1e-9 for c, t in zip(coef2, TRUE)), "a matrix < 1M nnz is left out")
    expect(train.setup_model([small]) == ((0.0, 0.0, 0.0), 0), "nothing to fit: zeros")
    finish()


main()
