"""labels.py - per-matrix Bayesian optimisation of the measured SpMV time over the crux, keeping every
evaluated plan, on every GPU of the host (one matxtract-label-runner process per GPU).

    python3 tuning/predictor/labels.py -o OUT [--corpus tuning/predictor/corpus.txt] [--split train|test|all]
        [--budget 12] [--init 2] [--gpus N] [--gen-jobs N] [--limit N] [--families a,b] [--max-nnz N]
        [--plans PLANS.json] [--only NAMES.json] [--build DIR] [--fake]

Per matrix: the objective at a crux (tau_c, tau_r), 0 <= tau_r <= tau_c <= 1, is log of the fastest
plan there: every hot mode (du, se; at tau_r = 0 there is no hot region, so one build) times every
cold kernel (segment, merge, cusparse); all of them are kept as samples. The crux search is
Bayesian optimisation with scikit-learn's GaussianProcessRegressor (Matern 5/2 + white noise) and
expected improvement maximised over 4000 random points of the triangle: seeded with (0,0) and (1,1),
then --init random cruxes, then BO steps up to --budget cruxes. Cruxes are rounded to 0.01.
Label: the near-optimal set = plans whose time is within the best plan's measured run-to-run spread
(rep_max_us - rep_min_us of its repeats) of the best time.

--compress auto (default, what the PETSc type does on the GPU) also times every plan compressed as the
PETSc type compresses it (the cold region's row patterns or pack where the cold kernel reads them, the
SE hot values) and keeps the faster time where the PETSc guard would ("packed" and "t_plain_us" in
each evaluated point; the record says "compress"); off times the plain arrays only
(the labels of predictor-2026-11-23 and -23b). train.py refuses labels that mix the two.

--plans FILE (JSON {matrix name: [[tau_c, tau_r, mode, cold], ...]}) measures only those plans (and
(0,0) with every cold kernel, the reference) instead of the search: how report.py gets the measured
time of the predicted plan.

Matrices are generated into OUT/cache as PETSc binaries by matxtract-gen on --gen-jobs host cores
(default: cores - GPUs) ahead of the GPU workers, and deleted once labelled. Output: OUT/labels.jsonl,
one JSON record per matrix (appended as matrices finish; a rerun skips names already there).

--fake runs tuning/predictor/fake_runner.py instead of the GPU runner: synthetic times, ONLY to test
this plumbing without a GPU; every record says "fake": true and train.py refuses to embed them.
"""
import argparse
import warnings
import concurrent.futures as cf
import json
import math
import os
import random
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MODES = ("du", "se")
COLDS = ("segment", "merge", "cusparse")


def read_corpus(path):
    rows = []
    with open(path) as f:
        for line in f:
            t = line.split("#", 1)[0].split()
            if t:
                rows.append(dict(name=t[0], spec=t[1], seed=int(t[2]), family=t[3], split=t[4], est_nnz=int(t[5])))
    return rows


def gpu_count():
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30).stdout
        return max(1, sum(1 for l in out.splitlines() if l.startswith("GPU ")))
    except (OSError, subprocess.TimeoutExpired):
        return 1


# ---- matrices ------------------------------------------------------------------------------------

def prepare(mat, build, cache):
    """Generate mat into cache/NAME.petsc (runs on a host core); returns runner matrix arguments."""
    if mat["spec"].startswith("file:"):
        path = mat["spec"][5:]
        path = path if os.path.isabs(path) else os.path.join(ROOT, path)
        if not os.path.exists(path):
            raise FileNotFoundError(path)
        return ["-f", path]
    out = os.path.join(cache, mat["name"] + ".petsc")
    if not os.path.exists(out):
        gen = os.path.join(build, "tuning/gen/matxtract-gen")
        r = subprocess.run([gen, mat["spec"], "-seed", str(mat["seed"]), "-o", out + ".part"], capture_output=True, text=True)
        if r.returncode:
            raise RuntimeError("matxtract-gen %s: %s" % (mat["spec"], r.stderr.strip()))
        os.replace(out + ".part", out)
    return ["-f", out]


# ---- the runner ------------------------------------------------------------------------------------

class Runner:
    """One runner process for one matrix: requests on stdin, one JSON answer per line."""

    def __init__(self, cmd, env):
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, bufsize=1)
        self.features, self.matrix = None, None
        for line in self.p.stdout:
            if line.startswith("features "):
                self.features = json.loads(line[9:])
            elif line.startswith("matrix "):
                self.matrix = json.loads(line[7:])
            elif line.strip() == "ready":
                break
        if self.features is None or self.matrix is None:
            self.p.kill()
            raise RuntimeError("runner %s did not start (exit %s)" % (" ".join(cmd), self.p.wait()))

    def ask(self, tc, tr, mode, cold):
        self.p.stdin.write("%r %r %s %s\n" % (tc, tr, mode, cold))
        line = self.p.stdout.readline()
        if not line:
            raise RuntimeError("runner died (exit %s)" % self.p.wait())
        return json.loads(line)

    def close(self):
        try:
            self.p.stdin.write("quit\n")
            self.p.stdin.close()
        except OSError:
            pass
        self.p.wait()


def plans_at(tc, tr):
    """Every plan measured at a crux: no hot region at tau_r = 0, so one (auto) build there."""
    modes = ("auto",) if tr == 0 else MODES
    return [(tc, tr, m, c) for m in modes for c in COLDS]


def evaluate(runner, tc, tr, evals, step):
    """Measure every plan at (tc, tr); append them to evals; return log of the fastest (inf if none ran)."""
    best = math.inf
    for plan in plans_at(tc, tr):
        a = runner.ask(*plan)
        a["step"] = step
        evals.append(a)
        if a.get("ok"):
            best = min(best, a["t_us"])
    return math.log(best) if best < math.inf else math.inf


# ---- Bayesian optimisation over the crux -----------------------------------------------------------

def triangle_points(rng, n):
    """n uniform points of 0 <= tau_r <= tau_c <= 1."""
    pts = []
    for _ in range(n):
        a, b = rng.random(), rng.random()
        pts.append((max(a, b), min(a, b)))
    return pts


def snap(p):
    tc, tr = round(p[0], 2), round(p[1], 2)
    return (tc, min(tr, tc))


def next_crux_ei(X, y, rng, seen):
    """Expected improvement (minimisation) of a scikit-learn GP fitted on (X, y), maximised over
    4000 random points of the triangle; the best not yet evaluated after rounding."""
    import numpy as np
    from scipy.stats import norm
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import ConstantKernel, Matern, WhiteKernel
    Xa, ya = np.array(X), np.array(y)
    mu_y, sd_y = ya.mean(), ya.std() or 1.0
    kernel = ConstantKernel(1.0, (1e-3, 1e3)) * Matern(length_scale=[0.3, 0.3], length_scale_bounds=(1e-2, 10.0), nu=2.5) \
        + WhiteKernel(1e-3, (1e-6, 1e-1))
    warnings.filterwarnings("ignore", module="sklearn.gaussian_process")  # bounds hit on flat objectives: harmless here
    gp = GaussianProcessRegressor(kernel=kernel, normalize_y=False, n_restarts_optimizer=2, random_state=rng.randint(0, 2**31))
    gp.fit(Xa, (ya - mu_y) / sd_y)
    cand = np.array(triangle_points(rng, 4000))
    mu, sd = gp.predict(cand, return_std=True)
    best = ((ya - mu_y) / sd_y).min()
    z = (best - mu) / np.maximum(sd, 1e-12)
    ei = (best - mu) * norm.cdf(z) + sd * norm.pdf(z)
    for k in np.argsort(-ei):
        p = snap(tuple(cand[k]))
        if p not in seen:
            return p
    return None


def bayes_opt(runner, budget, n_init, rng):
    evals, X, y, seen = [], [], [], set()

    def run(p, step):
        seen.add(p)
        v = evaluate(runner, p[0], p[1], evals, step)
        if v < math.inf:
            X.append(p)
            y.append(v)

    for p in [(0.0, 0.0), (1.0, 1.0)]:
        run(p, "seed")
    for p in triangle_points(rng, n_init):
        p = snap(p)
        if p not in seen:
            run(p, "init")
    while len(seen) < budget and len(X) >= 2:
        p = next_crux_ei(X, y, rng, seen)
        if p is None:
            break
        run(p, "bo")
    return evals


def measure_plans(runner, plans):
    evals = []
    for tc, tr, m, c in [(0.0, 0.0, "auto", c) for c in COLDS] + [tuple(p) for p in plans]:
        a = runner.ask(float(tc), float(tr), m, c)
        a["step"] = "plan"
        evals.append(a)
    return evals


def label(evals):
    """Best plan, reference time (crux (0,0), best cold kernel) and the near-optimal set (indices)."""
    ok = [(k, e) for k, e in enumerate(evals) if e.get("ok")]
    if not ok:
        return None, None, []
    kb, b = min(ok, key=lambda ke: ke[1]["t_us"])
    ref = [e["t_us"] for _, e in ok if e["tc"] == 0 and e["tr"] == 0]
    limit = b["t_us"] + (b["rep_max_us"] - b["rep_min_us"])
    return kb, (min(ref) if ref else None), [k for k, e in ok if e["t_us"] <= limit]


# ---- workers ----------------------------------------------------------------------------------------

def label_matrix(mat, args, gpu, ready, out_lock, out_path):
    t0 = time.time()
    margs = ready.result()
    env = dict(os.environ, CUDA_VISIBLE_DEVICES=str(gpu))
    if args.fake:
        cmd = [sys.executable, os.path.join(HERE, "fake_runner.py"), "--tool", os.path.join(args.build, "tuning/predictor/matxtract-predictor")] + margs
    else:
        cmd = [os.path.join(args.build, "tuning/predictor/matxtract-label-runner")] + margs + \
              ["-warmup", str(args.warmup), "-calls", str(args.calls), "-repeats", str(args.repeats), "-compress", args.compress]
    runner = Runner(cmd, env)
    try:
        rng = random.Random(mat["seed"] * 7919 + len(mat["name"]))
        plans = args.plans.get(mat["name"]) if args.plans else None
        evals = measure_plans(runner, plans) if plans is not None else bayes_opt(runner, args.budget, args.init, rng)
    finally:
        runner.close()
    best, t_ref, near = label(evals)
    rec = dict(mat, features=runner.features, matrix=runner.matrix, evals=evals, best=best, t_ref_us=t_ref,
               near_optimal=near, fake=bool(args.fake), mode="plans" if args.plans else "bo", compress=args.compress, gpu_index=gpu,
               seconds=round(time.time() - t0, 2))
    with out_lock:
        with open(out_path, "a") as f:
            f.write(json.dumps(rec) + "\n")
    if not args.keep_cache and margs[1].startswith(os.path.join(args.out, "cache")):
        os.remove(margs[1])
    b = evals[best] if best is not None else {}
    return "%-40s %2d plans, best %s %s,%s %s/%s %.1f us (ref %.1f us), %d near-optimal, %.1f s" % (
        mat["name"], len(evals), "ok" if b else "NONE", b.get("tc"), b.get("tr"), b.get("mode_req"), b.get("cold"),
        b.get("t_us", float("nan")), t_ref or float("nan"), len(near), time.time() - t0)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-o", "--out", required=True)
    ap.add_argument("--corpus", default=os.path.join(HERE, "corpus.txt"))
    ap.add_argument("--split", default="all", choices=["train", "test", "all"])
    ap.add_argument("--budget", type=int, default=12, help="cruxes per matrix, seeds included")
    ap.add_argument("--init", type=int, default=2, help="random cruxes after the two seeds")
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--calls", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--gpus", type=int, default=0, help="0 = every GPU nvidia-smi lists")
    ap.add_argument("--gen-jobs", type=int, default=0, help="host generator processes (0 = cores - GPUs)")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--families", default="")
    ap.add_argument("--max-nnz", type=int, default=0)
    ap.add_argument("--plans", default="", help="JSON {name: [[tc, tr, mode, cold], ...]}: measure these instead of BO")
    ap.add_argument("--only", default="", help="JSON object or list (e.g. a predictions.json): label only the matrices it names")
    ap.add_argument("--build", default=os.path.join(ROOT, "build-gpu"))
    ap.add_argument("--compress", default="auto", choices=["auto", "off"],
                    help="auto (the PETSc default on the GPU): every plan whose cold kernel reads packs is also timed "
                         "packed and keeps the faster time, as the pack guard does; off: plain arrays only")
    ap.add_argument("--keep-cache", action="store_true")
    ap.add_argument("--fake", action="store_true", help="synthetic runner: plumbing tests only")
    args = ap.parse_args()
    args.plans = json.load(open(args.plans)) if args.plans else None
    os.makedirs(os.path.join(args.out, "cache"), exist_ok=True)
    out_path = os.path.join(args.out, "labels.jsonl")
    done = set()
    if os.path.exists(out_path):
        done = {json.loads(l)["name"] for l in open(out_path) if l.strip()}
    mats = [m for m in read_corpus(args.corpus) if args.split in ("all", m["split"]) and m["name"] not in done]
    if args.families:
        mats = [m for m in mats if m["family"] in args.families.split(",")]
    if args.max_nnz:
        mats = [m for m in mats if m["est_nnz"] <= args.max_nnz]
    if args.plans is not None:
        mats = [m for m in mats if m["name"] in args.plans]
    if args.only:
        only = set(json.load(open(args.only)))
        mats = [m for m in mats if m["name"] in only]
    mats.sort(key=lambda m: m["est_nnz"])  # small first: results early
    if args.limit:
        mats = mats[:args.limit]
    ngpu = args.gpus or (1 if args.fake else gpu_count())
    gen_jobs = args.gen_jobs or max(1, (os.cpu_count() or 2) - ngpu)
    print("labels: %d matrices (%d done before), %d GPU worker(s), %d generator process(es)%s"
          % (len(mats), len(done), ngpu, gen_jobs, ", FAKE runner" if args.fake else ""), flush=True)
    lock, failures = threading.Lock(), 0
    cache = os.path.join(args.out, "cache")
    with cf.ThreadPoolExecutor(gen_jobs) as gen, cf.ThreadPoolExecutor(ngpu) as gpus:
        ready = [gen.submit(prepare, m, args.build, cache) for m in mats]
        free = list(range(ngpu))
        free_lock = threading.Lock()

        def on_gpu(k):
            with free_lock:
                g = free.pop()
            try:
                return label_matrix(mats[k], args, g, ready[k], lock, out_path)
            finally:
                with free_lock:
                    free.append(g)

        futs = {gpus.submit(on_gpu, k): mats[k]["name"] for k in range(len(mats))}
        for fu in cf.as_completed(futs):
            try:
                print(fu.result(), flush=True)
            except Exception as e:  # one matrix failing must not stop the others
                failures += 1
                print("%s: FAILED: %s" % (futs[fu], e), flush=True)
    print("labels: done, %d failure(s); %s" % (failures, out_path))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
