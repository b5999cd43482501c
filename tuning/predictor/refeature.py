"""refeature.py - labels.py's records with their features computed again by this build's
matxtract-predictor, from the matrix each record names (-gen SPEC -seed SEED, or its file): labels
timed before a feature was added (val_row_eq_frac and val_col_eq_frac, 2026-11-29) then train a
model of this build without timing them again. The features are the host's (mx_features_compute),
as the label runner records them; every other field of a record is kept.

    python3 tuning/predictor/refeature.py LABELS.jsonl[.gz]... -o OUT.jsonl [--build DIR] [--jobs N]

A record whose matrix cannot be made (a file that is gone) stops the run with its name."""
import argparse
import concurrent.futures as cf
import gzip
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def records(paths):
    for p in paths:
        with (gzip.open(p, "rt") if p.endswith(".gz") else open(p)) as f:
            for line in f:
                if line.strip():
                    yield json.loads(line)


def matrix_args(rec):
    """matxtract-predictor's MATRIX arguments for the record's matrix."""
    spec = rec["spec"]
    if spec.startswith("file:"):
        path = spec[5:]
        return ["-f", path if os.path.isabs(path) else os.path.join(ROOT, path)]
    return ["-gen", spec, "-seed", str(rec["seed"])]


def features(tool, rec):
    r = subprocess.run([tool, "features"] + matrix_args(rec), capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError("%s: matxtract-predictor features failed: %s" % (rec["name"], r.stderr.strip()))
    return json.loads(r.stdout)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("labels", nargs="+")
    ap.add_argument("-o", "--out", required=True)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    a = ap.parse_args(argv)
    tool = os.path.join(a.build, "tuning/predictor/matxtract-predictor")
    recs = list(records(a.labels))
    with cf.ThreadPoolExecutor(max(1, a.jobs)) as pool:
        feats = list(pool.map(lambda r: features(tool, r), recs))
    with open(a.out, "w") as f:
        for rec, fe in zip(recs, feats):
            rec["features"] = fe
            f.write(json.dumps(rec) + "\n")
    print("refeature: %d records, %d features each -> %s" % (len(recs), len(feats[0]) if feats else 0, a.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
