#!/usr/bin/env python3
"""test_refeature.py PREDICTOR_DIR BUILD_DIR - refeature.py on three labels records whose features are
stale (one name): every record comes back with this build's features, in the order of
`matxtract-predictor names`, equal to what `matxtract-predictor features` gives for its matrix, the
other fields kept; the value features tell 1.0 values from column constants from unique values; a
record naming a missing file stops the run."""
import gzip
import json
import os
import subprocess
import sys
import tempfile

from checks import expect, finish  # beside this file

pred_dir, build = sys.argv[1:3]
tool = os.path.join(build, "tuning/predictor/matxtract-predictor")
script = os.path.join(pred_dir, "refeature.py")
names = subprocess.run([tool, "names"], capture_output=True, text=True, check=True).stdout.split()[:-4]
recs = [{"name": "k_ones", "spec": "kron:8:4", "seed": 3, "features": {"nrows": 1}, "best": 7},
        {"name": "k_pr", "spec": "kron:8:4@pagerank", "seed": 3, "features": {"nrows": 1}},
        {"name": "k_unique", "spec": "kron:8:4@unique", "seed": 3, "features": {"nrows": 1}}]
with tempfile.TemporaryDirectory() as tmp:
    src, out = os.path.join(tmp, "labels.jsonl.gz"), os.path.join(tmp, "out.jsonl")
    with gzip.open(src, "wt") as f:
        f.write("".join(json.dumps(r) + "\n" for r in recs))
    p = subprocess.run([sys.executable, script, src, "-o", out, "--build", build, "--jobs", "2"], capture_output=True, text=True)
    expect(p.returncode == 0, "refeature runs (%s)" % p.stderr.strip()[-200:])
    got = [json.loads(l) for l in open(out)] if os.path.exists(out) else []
    expect([r["name"] for r in got] == [r["name"] for r in recs] and got and got[0].get("best") == 7, "records kept, in order")
    expect(all(list(r["features"]) == names for r in got) and got, "this build's features, in its order")
    ref = [json.loads(subprocess.run([tool, "features", "-gen", r["spec"], "-seed", "3"], capture_output=True, text=True).stdout)
           for r in recs]
    expect(all(g["features"] == f for g, f in zip(got, ref)) and got, "equal to matxtract-predictor features")
    if len(got) == 3:
        v = [(r["features"]["val_row_eq_frac"], r["features"]["val_col_eq_frac"]) for r in got]
        expect(v[0] == (1.0, 1.0), "1.0 values: every entry equals its row's and column's first (%s)" % (v[0],))
        expect(v[1][1] == 1.0 and v[1][0] < 0.5, "PageRank scaling: column constants (%s)" % (v[1],))
        expect(v[2][0] < 0.5 and v[2][1] < 0.5, "unique values: few equal (%s)" % (v[2],))
    bad = os.path.join(tmp, "bad.jsonl")
    with open(bad, "w") as f:
        f.write(json.dumps({"name": "gone", "spec": "file:/nonexistent/x.mtx", "seed": 0, "features": {}}) + "\n")
    p = subprocess.run([sys.executable, script, bad, "-o", os.path.join(tmp, "o2.jsonl"), "--build", build], capture_output=True, text=True)
    expect(p.returncode != 0 and "gone" in p.stderr, "a missing matrix stops the run, naming the record")
finish()
