#!/usr/bin/env python3
"""test_coverage.py PREDICTOR_DIR BUILD_DIR - coverage.py on three labelled matrices (features from this
build's matxtract-predictor, times invented): a query equal to one of them is at distance 0 from it,
listed first with its segment/merge ratio and best plan, the others farther; --features reads the
tool's JSON; labels whose features lack one of the query's names, or no query, stop the run."""
import json
import os
import subprocess
import sys
import tempfile

from checks import expect, finish  # beside this file

pred_dir, build = sys.argv[1:3]
tool = os.path.join(build, "tuning/predictor/matxtract-predictor")
script = os.path.join(pred_dir, "coverage.py")


def feats(spec):
    return json.loads(subprocess.run([tool, "features", "-gen", spec, "-seed", "3"], capture_output=True, text=True, check=True).stdout)


def evals(seg, merge):
    return [{"ok": 1, "tc": 0.0, "tr": 0.0, "mode": "none", "cold": "segment", "cold_run": "segment", "t_us": seg},
            {"ok": 1, "tc": 0.0, "tr": 0.0, "mode": "none", "cold": "merge", "cold_run": "merge", "t_us": merge}]


specs = {"g_kron": ("kron:8:4", 2.0, 1.0), "g_lap": ("lap2d:12", 1.0, 2.0), "g_rand": ("rand:300:5", 3.0, 3.0)}
recs = [{"name": n, "family": s.split(":")[0], "split": "train", "features": feats(s), "evals": evals(a, b), "best": 0 if a <= b else 1}
        for n, (s, a, b) in specs.items()]


def run(labels, args):
    p = subprocess.run([sys.executable, script, "--labels", labels, "--build", build, "-k", "3"] + args, capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


with tempfile.TemporaryDirectory() as tmp:
    lab = os.path.join(tmp, "labels.jsonl")
    with open(lab, "w") as f:
        f.write("".join(json.dumps(r) + "\n" for r in recs))
    rc, out = run(lab, ["-gen", "lap2d:12", "-seed", "3"])
    lines = out.splitlines()
    expect(rc == 0 and len(lines) == 5 and lines[1].split()[:2] == ["0.00", "g_lap"], "the same matrix first, at 0: " + out)
    if len(lines) == 5:
        expect("segment/merge 0.500" in lines[1] and "best (0,0) none/segment" in lines[1], "its ratio and best plan: " + lines[1])
        d = [float(l.split()[0]) for l in lines[1:4]]
        expect(d == sorted(d) and d[1] > 0, "the others farther, in order: %s" % d)
        expect(lines[4].startswith("  farthest from the nearest:"), "the features that differ most are named")
    js = os.path.join(tmp, "q.json")
    with open(js, "w") as f:
        json.dump(feats("kron:8:4"), f)
    rc, out = run(lab, ["--features", js])
    expect(rc == 0 and out.splitlines()[1].split()[:2] == ["0.00", "g_kron"] and "segment/merge 2.000" in out, "--features: " + out)
    short = os.path.join(tmp, "short.jsonl")
    with open(short, "w") as f:
        f.write(json.dumps(dict(recs[0], features=dict(recs[0]["features"], extra_feature=1.0))) + "\n")
    rc, out = run(short, ["-gen", "lap2d:12"])
    expect(rc != 0 and "extra_feature" in out, "a feature the query lacks stops the run: " + out.strip()[-120:])
    rc, out = run(lab, [])
    expect(rc != 0 and "at least one" in out, "no query: refused")
finish()
