#!/usr/bin/env python3
"""test_e2e_run.py ROOT BUILD_DIR [--gpu] - smoke test of the end-to-end study tuning/e2e/run.sh and its
summariser tuning/e2e/summarise.py. Host part (label petsc): E2E_CPU=1 (aij vs matxtract, host vectors)
on PageRank of kron16 and CG on lap3d_40, 20 and 100 iterations, one repetition: exit status 0; runs.tsv
one line per run, each exit status 0; e2e.csv one row per (matrix, example, type, N) with exactly N
iterations done, the matrix's nonzeros, setup + solve = total, matxtract's final plan; e2e.md the
issue's PageRank criterion with a verdict at 100 iterations. A filter that matches nothing fails (exit
status 1). --gpu (label gpu): the GPU mode (aijcusparse vs matxtract, device vectors) on lap3d_100, 20
iterations; exit 77 (skipped) when nvidia-smi names no GPU. Exits 1 on a wrong result."""
import csv
import os
import subprocess
import sys
import tempfile

from checks import expect, finish, skip  # beside this file

ROOT, BUILD = sys.argv[1], sys.argv[2]
GPU = "--gpu" in sys.argv[3:]
NNZ = {"kron16": None, "lap3d_40": "438400", "lap3d_100": "6940000"}  # lap3d:N: N^3 + 6 (N-1) N^2


def run(out, env_extra):
    env = dict(os.environ, E2E_REPS="1", E2E_PROFILE="0", E2E_CACHE=os.path.join(os.path.dirname(out), "cache"), **env_extra)
    p = subprocess.run(["bash", os.path.join(ROOT, "tuning/e2e/run.sh"), out, BUILD], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True, timeout=280, env=env)
    return p.returncode, p.stdout


def check_rows(out, cases, its, base):
    rows = list(csv.DictReader(open(os.path.join(out, "e2e.csv"))))
    got = sorted((r["matrix"], r["example"], r["mat_type"], r["iterations"]) for r in rows)
    want = sorted((m, ex, t, str(n)) for m, ex in cases for t in (base, "matxtract") for n in its)
    expect(got == want, "e2e.csv: one row per matrix, example, type and N (%d rows)" % len(rows))
    nnz = {}
    for r in rows:
        what = "%s %s %s" % (r["matrix"], r["mat_type"], r["iterations"])
        expect(r["iterations_done"] == r["iterations"], what + ": exactly N iterations done")
        # e2e.csv prints each median to 6 significant digits (%.6g): each of the three carries a rounding of
        # up to 5e-6 of itself (a fixed 2e-6 s failed once a run took over a second, under ASan)
        s, v, t = float(r["setup_s"]), float(r["solve_s"]), float(r["total_s"])
        expect(abs(s + v - t) <= 5e-6 * (abs(s) + abs(v) + abs(t)) + 1e-12 and s > 0,
               what + ": setup + solve = total, setup > 0")
        if r["mat_type"] == "matxtract":
            expect(r["final_plan"].startswith("("), what + ": the plan matxtract ended on (%s)" % r["final_plan"])
        nnz.setdefault(r["matrix"], set()).add(r["nnz"])
    for m, values in nnz.items():
        expect(len(values) == 1 and (NNZ[m] is None or values == {NNZ[m]}), "%s: the same nonzeros in every run %s" % (m, sorted(values)))
    runs = list(csv.DictReader(open(os.path.join(out, "runs.tsv")), delimiter="\t"))
    expect(len(runs) == len(want) and all(r["rc"] == "0" for r in runs), "runs.tsv: every run listed, exit status 0")


with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "e2e")
    if GPU:
        rc, text = run(out, {"E2E_ONLY": "^lap3d_100$", "E2E_ITS": "20"})
        if "gpu=\n" in open(os.path.join(out, "env.txt")).read():
            skip("nvidia-smi names no GPU")
        expect(rc == 0, "run.sh runs on the GPU (exit status %d)" % rc)
        if rc:
            print(text)
        check_rows(out, [("lap3d_100", "cg")], [20], "aijcusparse")
        finish()
    rc, text = run(out, {"E2E_CPU": "1", "E2E_ONLY": "^(kron16|lap3d_40)$", "E2E_ITS": "20 100"})
    expect(rc == 0, "E2E_CPU=1 run.sh runs (exit status %d)" % rc)
    if rc:
        print(text)
    check_rows(out, [("kron16", "pagerank"), ("lap3d_40", "cg")], [20, 100], "aij")
    md = open(os.path.join(out, "e2e.md")).read()
    crit = [l for l in md.splitlines() if l.startswith("| kron16 | 100 |")]
    expect(len(crit) == 1 and "not run" not in crit[0] and "no slower" in crit[0], "e2e.md: the PageRank criterion at 100 iterations has a verdict")
    expect("## CG (ksp_solve, no preconditioner)" in md and "| lap3d_40 | 438,400 | 20 |" in md, "e2e.md: the CG table")
    rc, text = run(os.path.join(tmp, "none"), {"E2E_CPU": "1", "E2E_ONLY": "^nothing$"})
    expect(rc == 1 and "no matrix matches" in text, "a filter that matches nothing fails (exit status %d)" % rc)
finish()
