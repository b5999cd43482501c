#!/usr/bin/env python3
"""test_predictor_pipeline.py PREDICTOR_DIR BUILD_DIR - the predictor's host pipeline without a GPU, on
six tiny matrices (four train, two test) and the synthetic runner fake_runner.py (the features are
matxtract-predictor's, the times invented): labels.py --fake (seeds (0,0) and (1,1), then one BO step)
writes one record per matrix with every plan of each crux, the best plan the fastest, the near-optimal
set holding it, the reference the fastest (0,0) time, and skips them on a rerun; train.py (2 folds)
writes a model that matxtract-predictor loads and predicts with, a predicted plan per test matrix among
the model's candidates, and refuses --embed on fake labels; labels.py --plans measures those plans
(--only labels just the matrices a predictions.json names);
report.py writes predictor.csv (regret = predicted / best time) and report.md, marked FAKE. Needs numpy,
scipy and scikit-learn (Debian's python3-sklearn) and matplotlib (report.py's figures): exit 77
(skipped) without them. Exits 1 on a wrong result."""
import csv
import json
import os
import subprocess
import sys
import tempfile

from checks import expect, finish, needs  # beside this file

needs("numpy", "scipy", "sklearn", "matplotlib")

PRED, BUILD = sys.argv[1], sys.argv[2]
TOOL = os.path.join(BUILD, "tuning/predictor/matxtract-predictor")
CORPUS = """# name spec seed family split est_nnz
lap2d_30 lap2d:30 1 lap2d train 4500
kron_9 kron:9:4 2 kron train 3600
rgg_11 rgg:11 3 rgg train 15000
kron_10 kron:10:16 4 kron train 30000
lap2d_40 lap2d:40 1000001 lap2d test 8000
kron_10t kron:10:8 1000002 kron test 15000
"""


def py(script, args):
    p = subprocess.run([sys.executable, os.path.join(PRED, script)] + args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True, timeout=120)
    if p.returncode:
        print(p.stdout)
    return p.returncode, p.stdout


def records(path):
    return [json.loads(l) for l in open(path) if l.strip()]


def check_record(r):
    ev = r["evals"]
    cruxes = {(e["tc"], e["tr"]) for e in ev}
    per_crux = all(sum((e["tc"], e["tr"]) == c for e in ev) == (3 if c[1] == 0 else 6) for c in cruxes)
    expect(r["fake"] and r["mode"] == "bo" and {(0.0, 0.0), (1.0, 1.0)} <= cruxes and len(cruxes) == 3 and per_crux,
           "%s: seeds and one BO crux, every plan of each (%d evaluations)" % (r["name"], len(ev)))
    times = [e["t_us"] for e in ev]
    ref = min(e["t_us"] for e in ev if e["tc"] == 0 and e["tr"] == 0)
    expect(times[r["best"]] == min(times) and r["best"] in r["near_optimal"] and r["t_ref_us"] == ref,
           "%s: best = fastest, in the near-optimal set; reference = fastest (0,0)" % r["name"])


with tempfile.TemporaryDirectory() as tmp:
    corpus = os.path.join(tmp, "corpus.txt")
    with open(corpus, "w") as f:
        f.write(CORPUS)
    lab = os.path.join(tmp, "labels")
    common = ["--corpus", corpus, "--build", BUILD, "--fake", "--gen-jobs", "2"]
    rc, text = py("labels.py", ["-o", lab] + common + ["--budget", "3", "--init", "0"])
    recs = records(os.path.join(lab, "labels.jsonl"))
    expect(rc == 0 and sorted(r["name"] for r in recs) == sorted(l.split()[0] for l in CORPUS.splitlines()[1:]), "labels.py: one record per matrix")
    for r in recs:
        check_record(r)
    lap = [r for r in recs if r["name"] == "lap2d_30"]
    expect(lap and lap[0]["features"]["nnz"] == 4380 and lap[0]["matrix"]["nnz"] == 4380, "lap2d_30's features: 4380 nonzeros")
    rc, text = py("labels.py", ["-o", lab] + common + ["--budget", "3"])
    expect(rc == 0 and "0 matrices (6 done before)" in text and len(records(os.path.join(lab, "labels.jsonl"))) == 6, "a rerun skips the labelled matrices")

    names = os.path.join(tmp, "names.txt")
    with open(names, "w") as f:
        f.write(subprocess.run([TOOL, "names"], stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout)
    train = os.path.join(tmp, "train")
    rc, text = py("train.py", [os.path.join(lab, "labels.jsonl"), "-o", train, "--names", names, "--folds", "2"])
    expect(rc == 0 and "train: 4 matrices, 60 samples; test: 2 matrices" in text, "train.py: 4 train matrices, 60 samples")
    model = os.path.join(train, "model.txt")
    expect(subprocess.run([TOOL, "check", model]).returncode == 0, "matxtract-predictor loads the model (check)")
    p = subprocess.run([TOOL, "predict", "-model", model, "-gen", "lap2d:40"], stdout=subprocess.PIPE, universal_newlines=True)
    expect(p.returncode == 0 and "crux" in p.stdout, "matxtract-predictor predicts with it")
    summary = json.load(open(os.path.join(train, "train_summary.json")))
    preds = json.load(open(os.path.join(train, "predictions.json")))
    expect(summary["fake"] and summary["trained_on"].startswith("FAKE") and sorted(preds) == ["kron_10t", "lap2d_40"],
           "train.py: marked fake, a prediction per test matrix")
    rc, text = py("train.py", [os.path.join(lab, "labels.jsonl"), "-o", os.path.join(tmp, "refused"), "--names", names, "--embed"])
    expect(rc != 0 and "refusing --embed" in text, "train.py --embed refuses fake labels")

    meas = os.path.join(tmp, "measured")
    rc, text = py("labels.py", ["-o", meas, "--split", "test", "--plans", os.path.join(train, "predictions.json")] + common)
    mrecs = records(os.path.join(meas, "labels.jsonl"))
    expect(rc == 0 and len(mrecs) == 2 and all(r["mode"] == "plans" and len(r["evals"]) == 4 for r in mrecs),
           "labels.py --plans: the three (0,0) kernels and the predicted plan of each test matrix")
    rep = os.path.join(tmp, "report")
    rc, text = py("report.py", ["--labels", os.path.join(lab, "labels.jsonl"), "--measured", os.path.join(meas, "labels.jsonl"),
                                "--train", train, "-o", rep, "--command", "test"])
    rows = list(csv.DictReader(open(os.path.join(rep, "predictor.csv"))))
    expect(rc == 0 and sorted(r["name"] for r in rows) == ["kron_10t", "lap2d_40"], "report.py: a row per test matrix")
    for r in rows:
        expect(abs(float(r["regret"]) - float(r["t_pred_us"]) / float(r["t_best_us"])) < 1e-12, "%s: regret = predicted / best" % r["name"])
    md = open(os.path.join(rep, "report.md")).read()
    expect(md.startswith("**FAKE") and "| all | 2 |" in md, "report.md: marked FAKE, the summary of both test matrices")

    # --only: a test row the model has not predicted (added to the corpus since) is not labelled
    with open(corpus, "a") as f:
        f.write("lap2d_50 lap2d:50 1000003 lap2d test 12500\n")
    only = os.path.join(tmp, "only")
    rc, text = py("labels.py", ["-o", only, "--split", "test", "--only", os.path.join(train, "predictions.json"), "--budget", "2"] + common)
    expect(rc == 0 and sorted(r["name"] for r in records(os.path.join(only, "labels.jsonl"))) == ["kron_10t", "lap2d_40"],
           "labels.py --only predictions.json: the predicted test matrices, not the one added since")
finish()
