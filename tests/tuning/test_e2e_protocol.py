#!/usr/bin/env python3
"""test_e2e_protocol.py ROOT BUILD_DIR [--gpu] - smoke test of the end-to-end protocol driver
tuning/e2e/protocol.sh (matxtract-e2e per case and type, then protocol_summary.py). Host part (label
petsc): E2E_CPU=1 on a stencil, a PageRank graph, one real Matrix Market file (a folder holding
bcsstk13 from tests/data) and one xz-compressed in real-large/ (LFAT5.mtx.xz, as tuning/gpu_deps.sh
leaves them), 200 MatMults, one repetition: exit status 0; runs.tsv one line per case and
type, each exit status 0; e2e_protocol.csv one row per run with the product checked; protocol.csv one
row per case with the values label and ratios; protocol.md the criteria table. A run past the time
budget is listed as skipped and fails the script (exit status 1). E2E_SMALL_REPS=2 with E2E_SMALL_NNZ
100000: bcsstk13 runs twice per type, lap2d_300 once, and protocol.csv counts 2 runs for it. --gpu (label gpu): the GPU mode
(aijcusparse vs matxtract) on lap3d_100; exit 77 (skipped) when nvidia-smi names no GPU. Exits 1 on a
wrong result."""
import csv
import lzma
import os
import shutil
import subprocess
import sys
import tempfile

from checks import expect, finish, skip  # beside this file

ROOT, BUILD = sys.argv[1], sys.argv[2]
GPU = "--gpu" in sys.argv[3:]


def run(out, tmp, env_extra):
    env = dict(os.environ, E2E_REPS="1", E2E_ITS="200", E2E_CACHE=os.path.join(tmp, "cache"), E2E_MATRICES=os.path.join(tmp, "matrices"),
               **env_extra)
    p = subprocess.run(["bash", os.path.join(ROOT, "tuning/e2e/protocol.sh"), out, BUILD], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, universal_newlines=True, timeout=280, env=env)
    return p.returncode, p.stdout


def check(out, cases, base):
    runs = list(csv.DictReader(open(os.path.join(out, "runs.tsv")), delimiter="\t"))
    expect(sorted((r["case"], r["type"]) for r in runs) == sorted((c, t) for c in cases for t in (base, "matxtract"))
           and all(r["rc"] == "0" for r in runs), "runs.tsv: each case and type once, exit status 0")
    rows = list(csv.DictReader(open(os.path.join(out, "e2e_protocol.csv"))))
    expect(len(rows) == 2 * len(cases) and all(r["check"] == "ok" and float(r["rel_err"]) <= 1e-12 for r in rows),
           "e2e_protocol.csv: one row per run, every product checked")
    table = {r["case"]: r for r in csv.DictReader(open(os.path.join(out, "protocol.csv")))}
    expect(sorted(table) == sorted(cases), "protocol.csv: one row per case (%s)" % sorted(table))
    for c, values in cases.items():
        r = table.get(c, {})
        expect(r.get("values") == values and float(r.get("setup") or 0) > 0 and float(r.get("total@100") or 0) > 0,
               "%s: values %s, setup and total@100 ratios" % (c, values))
    md = open(os.path.join(out, "protocol.md")).read()
    expect("| criterion | verdict | detail |" in md, "protocol.md: the criteria table")


with tempfile.TemporaryDirectory() as tmp:
    os.makedirs(os.path.join(tmp, "matrices", "real"))
    out = os.path.join(tmp, "out")
    if GPU:
        rc, text = run(out, tmp, {"E2E_ONLY": "^lap3d_100$"})
        if "gpu=\n" in open(os.path.join(out, "env.txt")).read():
            skip("nvidia-smi names no GPU")
        expect(rc == 0, "protocol.sh runs on the GPU (exit status %d)" % rc)
        if rc:
            print(text)
        check(out, {"lap3d_100": "stencil"}, "aijcusparse")
        finish()
    shutil.copy(os.path.join(ROOT, "tests/data/matrices/real/bcsstk13.mtx"), os.path.join(tmp, "matrices", "real"))
    os.makedirs(os.path.join(tmp, "matrices", "real-large"))
    with open(os.path.join(ROOT, "tests/data/matrices/real/LFAT5.mtx"), "rb") as src, \
            lzma.open(os.path.join(tmp, "matrices", "real-large", "LFAT5.mtx.xz"), "wb") as dst:
        shutil.copyfileobj(src, dst)
    rc, text = run(out, tmp, {"E2E_CPU": "1", "E2E_ONLY": "^(lap2d_300|kron15_pagerank|bcsstk13|LFAT5)$"})
    expect(rc == 0, "E2E_CPU=1 protocol.sh runs (exit status %d)" % rc)
    if rc:
        print(text)
    check(out, {"lap2d_300": "stencil", "kron15_pagerank": "pagerank", "bcsstk13": "own", "LFAT5": "own"}, "aij")
    small = os.path.join(tmp, "small")
    rc, text = run(small, tmp, {"E2E_CPU": "1", "E2E_ONLY": "^(lap2d_300|bcsstk13)$", "E2E_SMALL_REPS": "2", "E2E_SMALL_NNZ": "100000"})
    runs = list(csv.DictReader(open(os.path.join(small, "runs.tsv")), delimiter="\t")) if os.path.exists(os.path.join(small, "runs.tsv")) else []
    count = {(c, t): sum(1 for r in runs if (r["case"], r["type"]) == (c, t)) for c in ("lap2d_300", "bcsstk13") for t in ("aij", "matxtract")}
    table = {r["case"]: r for r in csv.DictReader(open(os.path.join(small, "protocol.csv")))} if os.path.exists(os.path.join(small, "protocol.csv")) else {}
    expect(rc == 0 and count == {("lap2d_300", "aij"): 1, ("lap2d_300", "matxtract"): 1, ("bcsstk13", "aij"): 2, ("bcsstk13", "matxtract"): 2},
           "E2E_SMALL_REPS=2: the case under E2E_SMALL_NNZ runs twice per type, the other once (%s)" % count)
    expect(table.get("bcsstk13", {}).get("mx_n") == "2" and table.get("lap2d_300", {}).get("mx_n") == "1", "protocol.csv: the small case's median over its 2 runs")
    late = os.path.join(tmp, "late")
    rc, text = run(late, tmp, {"E2E_CPU": "1", "E2E_ONLY": "^lap2d_300$", "E2E_BUDGET_S": "0"})
    runs = list(csv.DictReader(open(os.path.join(late, "runs.tsv")), delimiter="\t"))
    expect(rc == 1 and len(runs) == 2 and all(r["rc"] == "skipped" for r in runs), "past the time budget: runs skipped, exit status 1")
finish()
