"""corpus.py - the predictor corpus: generated matrices of every generator family (10K to 50M
nonzeros, estimated) plus the real Matrix Market files, with a train/test split that is disjoint by
seed AND by parameter values and stratified by family and nnz.

    python3 tuning/predictor/corpus.py [-o tuning/predictor/corpus.txt] [--check]

Split rule, per family: the size parameter's values are sorted and every 4th one (offset 1) is a
test value, so both splits cover the whole nnz range of the family (stratified by nnz); the other
parameters take values from disjoint train / test sets (e.g. kron EF 4, 16, 32 vs 8, 24); train
seeds are drawn from [1, 999999], test seeds from [1000001, 1999999]. A real matrix (no seed, no
parameters) goes to test when its index in name order is 1 mod 4. --check verifies the properties on
the written file. Output columns: name spec seed family split est_nnz (est_nnz from the generator's
documented sizes; labels.py records the exact nnz). The graph families' rows come with @unique-valued
twins (VALUE_TWIN_FAMILIES below).
"""
import argparse
import glob
import math
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MIN_NNZ, MAX_NNZ = 10_000, 50_000_000
TRAIN_SEEDS, TEST_SEEDS = (1, 999_999), (1_000_001, 1_999_999)

# family: (size values, {other parameter: (train values, test values)}, spec(size, others) -> str, est_nnz)
FAMILIES = {
    "kron": (list(range(9, 22)), {"ef": ([4, 16, 32], [8, 24])},
             lambda s, o: "kron:%d:%d" % (s, o["ef"]), lambda s, o: 1.8 * o["ef"] * 2 ** s),
    "rgg": (list(range(11, 22)), {"v": (["", ":v"], ["", ":v"])},
            lambda s, o: "rgg:%d%s" % (s, o["v"]), lambda s, o: 0.95 * 2 ** s * math.log(2 ** s)),
    "chunglu": ([10_000, 20_000, 50_000, 100_000, 200_000, 500_000, 1_000_000, 2_000_000, 3_000_000],
                {"deg": ([4, 16, 32], [8, 24]), "exp": ([2.1, 2.5, 3.0], [2.3, 2.7])},
                lambda s, o: "chunglu:%d:%d:%g" % (s, o["deg"], o["exp"]), lambda s, o: 0.9 * s * o["deg"]),
    "chunglu-dir": ([10_000, 20_000, 50_000, 100_000, 200_000, 500_000, 1_000_000, 2_000_000, 3_000_000],
                    {"deg": ([4, 16, 32], [8, 24]), "exp": ([2.1, 2.5, 3.0], [2.3, 2.7])},
                    lambda s, o: "chunglu-dir:%d:%d:%g" % (s, o["deg"], o["exp"]), lambda s, o: 0.95 * s * o["deg"]),
    "lap2d": ([50, 100, 200, 300, 500, 700, 1000, 1500, 2000, 2500, 3000], {},
              lambda s, o: "lap2d:%d" % s, lambda s, o: 5.0 * s * s),
    "lap2d9": ([40, 80, 150, 300, 500, 800, 1200, 1800, 2300], {},
               lambda s, o: "lap2d9:%d" % s, lambda s, o: 9.0 * s * s),
    "lap3d": ([12, 20, 30, 45, 60, 80, 100, 130, 160, 190], {},
              lambda s, o: "lap3d:%d" % s, lambda s, o: 7.0 * s ** 3),
    "lap3d27": ([8, 12, 18, 25, 35, 50, 65, 80, 100, 120], {},
                lambda s, o: "lap3d27:%d" % s, lambda s, o: 27.0 * s ** 3),
    "convdiff2d": ([50, 120, 250, 400, 700, 1000, 1600, 2200, 3000], {},
                   lambda s, o: "convdiff2d:%d" % s, lambda s, o: 5.0 * s * s),
    "convdiff3d": ([12, 25, 40, 60, 90, 120, 150, 190], {},
                   lambda s, o: "convdiff3d:%d" % s, lambda s, o: 7.0 * s ** 3),
    "band": ([2_000, 10_000, 50_000, 100_000, 300_000, 1_000_000, 2_000_000, 4_000_000], {"w": ([1, 5, 20, 50], [3, 10, 30])},
             lambda s, o: "band:%d:%d" % (s, o["w"]), lambda s, o: s * (2 * o["w"] + 1)),
    "rand": ([2_000, 10_000, 50_000, 100_000, 300_000, 1_000_000, 2_000_000, 4_000_000], {"per": ([4, 16, 64], [8, 32])},
             lambda s, o: "rand:%d:%d" % (s, o["per"]), lambda s, o: s * o["per"]),
    "bipartite": ([5_000, 20_000, 100_000, 500_000, 1_000_000, 2_000_000], {"aspect": ([0.1, 10.0], [0.25, 4.0]), "per": ([8, 32], [16])},
                  lambda s, o: "bipartite:%d:%d:%d" % (s, max(o["per"], int(s * o["aspect"])), o["per"]),
                  lambda s, o: s * o["per"]),
    "blockdense": ([10_000, 50_000, 100_000, 300_000, 1_000_000, 2_000_000], {"nb": ([20, 500, 2000], [100, 1000]), "bs": ([16, 64, 256], [32, 128])},
                   lambda s, o: "blockdense:%d:%d:%d" % (s, o["nb"], o["bs"]),
                   lambda s, o: 5.0 * s + o["nb"] * o["bs"] ** 2),
}
# Families added after the labels of 2026-11-30s: drawn from a random stream of their own
# (ADDED_SEED) after the others, so that adding them leaves every earlier row as it was.
# lp: rectangular, a share of single-entry rows, the others' lengths a power law, columns uniform
# (LP constraint matrices such as dbir2 and nemsemm1, which no earlier family resembles).
ADDED_FAMILIES = {
    "lp": ([2_000, 5_000, 20_000, 50_000, 100_000, 300_000, 1_000_000],
           {"aspect": ([0.5, 4.0, 20.0], [1.5, 10.0]), "avg": ([16, 64, 256], [32, 128]), "exp": ([2.1, 2.5, 3.0], [2.3, 2.7]),
            "single": ([0, 30, 60], [15, 45])},
           lambda s, o: "lp:%d:%d:%d:%g:%d" % (s, max(o["avg"], int(s * o["aspect"])), o["avg"], o["exp"], o["single"]),
           lambda s, o: s * o["avg"]),
}
ADDED_SEED = 20261201
INSTANCES_PER_SIZE = 4  # parameter draws per size value (a repeated spec is drawn once)
# Graph families whose generators give every nonzero the value 1.0 (or a weight per vertex): each of
# their rows gets a twin right after it with the same seed, split and size, values @unique (uniform in
# [-1, 1): nothing shared, no pack of the values pays), named NAME_unique (issue 42: the plan must be
# right when the values do not compress). The twins draw nothing from the generator's random stream,
# so the other rows are the same with or without them.
VALUE_TWIN_FAMILIES = ("bipartite", "chunglu", "chunglu-dir", "kron", "rand", "rgg")
VALUE_TWIN = "@unique"


def generated(rng, families):
    rows = []
    for fam, (sizes, params, spec, est) in sorted(families.items()):
        for k, size in enumerate(sizes):
            split = "test" if k % 4 == 1 else "train"
            seen = set()
            for _ in range(INSTANCES_PER_SIZE):
                o = {p: rng.choice(vals[0] if split == "train" else vals[1]) for p, vals in params.items()}
                s = spec(size, o)
                n = est(size, o)
                if s in seen or not (MIN_NNZ <= n <= MAX_NNZ):
                    continue
                seen.add(s)
                lo, hi = TRAIN_SEEDS if split == "train" else TEST_SEEDS
                seed = rng.randint(lo, hi)
                name = "%s_%s_s%d" % (fam, s.split(":", 1)[1].replace(":", "_"), seed)
                rows.append((name, s, seed, fam, split, int(n)))
                if fam in VALUE_TWIN_FAMILIES:
                    rows.append((name + "_unique", s + VALUE_TWIN, seed, fam, split, int(n)))
    return rows


def finite_values(path):
    """False if a Matrix Market file holds inf or nan (the reader refuses those by default)."""
    with open(path) as f:
        return not any(t.lower().lstrip("+-") in ("inf", "infinity", "nan") for line in f if not line.startswith("%")
                       for t in line.split())


def real(dirs):
    by_name = {}  # one file per name, the first folder's (the repository's own) first
    for d in dirs:
        for f in sorted(glob.glob(os.path.join(d, "*.mtx"))):
            if finite_values(f):
                by_name.setdefault(os.path.basename(f), os.path.realpath(f))
    files = [by_name[k] for k in sorted(by_name)]
    rows = []
    for k, f in enumerate(files):
        rel = os.path.relpath(f, ROOT) if f.startswith(ROOT + os.sep) else f
        rows.append(("real_" + os.path.basename(f)[:-4], "file:" + rel, 0, "real", "test" if k % 4 == 1 else "train", 0))
    return rows


def read(path):
    rows = []
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].split()
            if line:
                name, spec, seed, fam, split, est = line
                rows.append((name, spec, int(seed), fam, split, int(est)))
    return rows


def check(rows):
    """Disjoint seeds and parameter tuples between splits, every generated family in both."""
    problems = []
    by = {"train": [r for r in rows if r[4] == "train"], "test": [r for r in rows if r[4] == "test"]}
    seeds = [set(r[2] for r in by[s] if r[3] != "real") for s in by]
    if seeds[0] & seeds[1]:
        problems.append("seeds shared by train and test: %s" % sorted(seeds[0] & seeds[1])[:5])
    fields = [set(tuple(r[1].split(":")[1:]) for r in by[s] if r[3] != "real") for s in by]
    # every parameter value of a test spec, position by position, must be absent from train specs of the family
    for r in by["test"]:
        if r[3] == "real":
            continue
        tr = [x[1].split(":")[1:] for x in by["train"] if x[3] == r[3]]
        tv = r[1].split(":")[1:]
        if any(all(a == b for a, b in zip(t, tv)) for t in tr):
            problems.append("test spec %s equals a train spec" % r[1])
        if tv and any(t[0] == tv[0] for t in tr):
            problems.append("test spec %s shares its size value with train" % r[1])
    for fam in list(FAMILIES) + list(ADDED_FAMILIES):
        if not any(r[3] == fam for r in by["train"]) or not any(r[3] == fam for r in by["test"]):
            problems.append("family %s is missing from a split" % fam)
    names = [r[0] for r in rows]
    if len(set(names)) != len(names):
        problems.append("duplicate names")
    del fields
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-o", default=os.path.join(HERE, "corpus.txt"))
    ap.add_argument("--real", nargs="*", default=[os.path.join(ROOT, "tests/data/matrices/real"),
                                                  os.path.join(ROOT, "..", "shared", "matrices", "real")])
    ap.add_argument("--check", action="store_true", help="only check the existing file")
    a = ap.parse_args()
    if not a.check:
        rows = generated(random.Random(20261123), FAMILIES) + generated(random.Random(ADDED_SEED), ADDED_FAMILIES) + real(a.real)
        with open(a.o, "w") as f:
            f.write("# predictor corpus, written by tuning/predictor/corpus.py (do not edit; rerun it)\n"
                    "# name spec seed family split est_nnz   (spec 'file:PATH' = a real matrix, seed 0)\n")
            for r in rows:
                f.write("%s %s %d %s %s %d\n" % r)
    rows = read(a.o)
    problems = check(rows)
    n = {s: sum(r[4] == s for r in rows) for s in ("train", "test")}
    print("%s: %d matrices (train %d, test %d), %d families; %s" % (a.o, len(rows), n["train"], n["test"],
          len(set(r[3] for r in rows)), "split ok" if not problems else "PROBLEMS"))
    for p in problems:
        print("  " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
