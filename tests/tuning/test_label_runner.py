#!/usr/bin/env python3
"""test_label_runner.py LABEL_RUNNER PREDICTOR_TOOL - smoke test of matxtract-label-runner
(tuning/predictor/label_runner.cu), the GPU server of labels.py: options below the protocol's minimums
are refused (exit status 2, before any device is looked for); then, on a GPU, a tiny stencil with
-compress auto: the features line equals matxtract-predictor's features of the same matrix, the matrix
line its size, and three requests (all cold, a DU crux on the merge kernel, an SE crux on cuSPARSE) are
answered ok with the product checked (rel_err <= 1e-12) and a median inside its repeats' spread.
Exit 77 (skipped) when the program finds no CUDA device. Exits 1 on a wrong result."""
import json
import subprocess
import sys

from checks import expect, finish, skip  # beside this file

BIN, TOOL = sys.argv[1], sys.argv[2]
SPEC = "lap2d:30"  # 900 rows, 4,380 nonzeros
REQUESTS = [(0.0, 0.0, "auto", "segment"), (0.7, 0.5, "du", "merge"), (1.0, 1.0, "se", "cusparse")]

p = subprocess.run([BIN, "-gen", SPEC, "-warmup", "5"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, timeout=60)
expect(p.returncode == 2 and "usage: matxtract-label-runner" in p.stdout, "-warmup 5 (< 20) refused with the usage (exit status %d)" % p.returncode)
requests = "".join("%r %r %s %s\n" % r for r in REQUESTS) + "quit\n"
p = subprocess.run([BIN, "-gen", SPEC, "-compress", "auto"], input=requests, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                   universal_newlines=True, timeout=240)
if p.returncode == 77 and "no CUDA device" in p.stderr:
    skip("no CUDA device")
expect(p.returncode == 0, "the runner serves the requests and ends on quit (exit status %d)" % p.returncode)
lines = p.stdout.splitlines()
expect(len(lines) == 3 + len(REQUESTS) and lines[2] == "ready", "features, matrix, ready, then one answer per request (%d lines)" % len(lines))
if len(lines) == 3 + len(REQUESTS):
    features = json.loads(lines[0][len("features "):])
    host = json.loads(subprocess.run([TOOL, "features", "-gen", SPEC], stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout)
    expect(features == host, "the features equal matxtract-predictor's of the same matrix")
    matrix = json.loads(lines[1][len("matrix "):])
    expect((matrix["nrows"], matrix["ncols"], matrix["nnz"]) == (900, 900, 4380), "the matrix line: 900 x 900, 4380 nonzeros")
    for req, line in zip(REQUESTS, lines[3:]):
        a = json.loads(line)
        what = "request %s" % (req,)
        expect(a.get("ok") == 1 and (a["tc"], a["tr"], a["mode_req"], a["cold"]) == req, what + ": answered ok for that plan")
        expect(a.get("rel_err", 1) <= 1e-12, what + ": product checked (rel_err %s)" % a.get("rel_err"))
        expect(0 < a.get("rep_min_us", 0) <= a.get("t_us", 0) <= a.get("rep_max_us", 0), what + ": median inside the repeats' spread")
if p.returncode:
    print(p.stdout, p.stderr)
finish()
