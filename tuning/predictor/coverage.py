"""coverage.py - how near a matrix lies to the labelled corpus in the predictor's feature space: the
labelled matrices nearest to it, what plan and cold kernel won on each, and the features that keep
it farthest from the nearest. A matrix far from every label is one the model extrapolates to (issue
42: dbir2 and nemsemm1 were 8 from the nearest label, a graph, before the corpus had an lp family).

    python3 tuning/predictor/coverage.py --labels LABELS.jsonl[.gz] [-k 5] [--build DIR]
        (-gen SPEC [-seed N] | -f FILE | --features FEATURES.json)...

Distance: Euclidean over every feature of the labels, each taken as sign(x) log(1 + |x|) and then
standardised by the labels' mean and standard deviation (so a unit is one standard deviation of the
corpus). A query's features come from this build's `matxtract-predictor features`; --features reads
that tool's JSON output instead. segment/merge is the time of crux (0,0) on the segment kernel over
that on the merge kernel (> 1: merge faster)."""
import argparse
import json
import math
import os
import subprocess
import sys

from gain_prior import origin_evals, read_labels  # beside this file

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def squash(x):
    return math.copysign(math.log1p(abs(x)), x)


def time_00(rec, cold):
    ts = [e["t_us"] for e in origin_evals(rec, cold)] if rec.get("evals") else []
    return min(ts) if ts else None


def best_plan(rec):
    ev = rec.get("evals", [])
    if not ev or rec.get("best") is None:
        return "-"
    e = ev[rec["best"]]
    return "(%g,%g) %s/%s" % (e["tc"], e["tr"], e.get("mode", "?"), e.get("cold_run", "?"))


class Space:
    """The labels' features, squashed and standardised."""

    def __init__(self, recs):
        self.keys = sorted(recs[0]["features"])
        cols = [[squash(r["features"][k]) for r in recs] for k in self.keys]
        self.mean = [sum(c) / len(c) for c in cols]
        self.sd = [max(1e-12, math.sqrt(sum((v - m) ** 2 for v in c) / len(c))) for c, m in zip(cols, self.mean)]
        self.points = [self.z(r["features"]) for r in recs]

    def z(self, feats):
        missing = [k for k in self.keys if k not in feats]
        if missing:
            raise SystemExit("features lack %s (labels of another build? refeature.py)" % ", ".join(missing[:5]))
        return [(squash(feats[k]) - m) / s for k, m, s in zip(self.keys, self.mean, self.sd)]


def features_of(tool, kind, value, seed):
    args = [tool, "features"] + (["-gen", value, "-seed", str(seed)] if kind == "gen" else ["-f", value])
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    if p.returncode:
        raise SystemExit("%s: %s" % (value, p.stderr.strip()[-300:]))
    return json.loads(p.stdout)


def report(name, feats, recs, space, k):
    q = space.z(feats)
    dist = sorted((math.sqrt(sum((a - b) ** 2 for a, b in zip(q, p))), i) for i, p in enumerate(space.points))
    out = ["%s (%d x %d, %d nonzeros):" % (name, feats["nrows"], feats["ncols"], feats["nnz"])]
    for d, i in dist[:k]:
        r = recs[i]
        s, m = time_00(r, "segment"), time_00(r, "merge")
        ratio = "%.3f" % (s / m) if s and m else "-"
        out.append("  %6.2f  %-44s %-5s %-11s segment/merge %s  best %s" % (d, r["name"], r.get("split", "?"), r.get("family", "?"),
                                                                          ratio, best_plan(r)))
    near = space.points[dist[0][1]]
    far = sorted(((a - b) ** 2, key, feats[key], recs[dist[0][1]]["features"][key]) for a, b, key in zip(q, near, space.keys))[::-1]
    out.append("  farthest from the nearest: " + ", ".join("%s %.3g vs %.3g" % (key, v, w) for _, key, v, w in far[:5]))
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--labels", required=True)
    ap.add_argument("-k", type=int, default=5)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("-gen", action="append", default=[], metavar="SPEC")
    ap.add_argument("-seed", type=int, default=0)
    ap.add_argument("-f", action="append", default=[], metavar="FILE")
    ap.add_argument("--features", action="append", default=[], metavar="JSON")
    a = ap.parse_args()
    recs = [r for r in read_labels(a.labels) if r.get("features")]
    if not recs:
        raise SystemExit("%s: no labelled matrix with features" % a.labels)
    if not (a.gen or a.f or a.features):
        raise SystemExit("give at least one -gen SPEC, -f FILE or --features JSON")
    space = Space(recs)
    tool = os.path.join(a.build, "tuning/predictor/matxtract-predictor")
    queries = [(s, lambda s=s: features_of(tool, "gen", s, a.seed)) for s in a.gen]
    queries += [(os.path.basename(f), lambda f=f: features_of(tool, "file", f, 0)) for f in a.f]
    queries += [(os.path.basename(j), lambda j=j: json.load(open(j))) for j in a.features]
    for name, get in queries:
        print(report(name, get(), recs, space, a.k))
    return 0


if __name__ == "__main__":
    sys.exit(main())
