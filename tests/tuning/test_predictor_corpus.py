#!/usr/bin/env python3
"""test_predictor_corpus.py PREDICTOR_DIR - tuning/predictor/corpus.py: the committed corpus.txt passes its
own --check (disjoint seeds and parameter values between train and test, every family in both, unique
names); regenerating it gives the committed generated rows exactly (the draw is seeded), every
graph-family row has its @unique-valued twin right after it, and real files are listed with seed 0; a corpus with a seed shared by train and test, or a test spec equal to a train
spec, fails --check (exit status 1, the problem named). Exits 1 on a wrong result."""
import os
import subprocess
import sys
import tempfile

from checks import expect, finish  # beside this file

PRED = sys.argv[1]
COMMITTED = os.path.join(PRED, "corpus.txt")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(PRED)))


def corpus_py(args):
    p = subprocess.run([sys.executable, os.path.join(PRED, "corpus.py")] + args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True, timeout=60)
    return p.returncode, p.stdout


def rows(path):
    return [l.split() for l in open(path) if l.strip() and not l.startswith("#")]


rc, text = corpus_py(["-o", COMMITTED, "--check"])
expect(rc == 0 and "split ok" in text, "the committed corpus passes --check: " + text.strip())
with tempfile.TemporaryDirectory() as tmp:
    fresh = os.path.join(tmp, "corpus.txt")
    rc, text = corpus_py(["-o", fresh, "--real", os.path.join(ROOT, "tests/data/matrices/real")])
    generated = [r for r in rows(fresh) if r[3] != "real"]
    expect(rc == 0 and generated == [r for r in rows(COMMITTED) if r[3] != "real"] and len(generated) > 100,
           "regenerated: the committed generated rows, in order (%d)" % len(generated))
    twin_families = {"bipartite", "chunglu", "chunglu-dir", "kron", "rand", "rgg"}
    plain = [(k, r) for k, r in enumerate(generated) if not r[0].endswith("_unique")]
    twins_ok = all((r[3] in twin_families) == (k + 1 < len(generated) and generated[k + 1][0] == r[0] + "_unique")
                   for k, r in plain)
    twins_ok = twins_ok and all(generated[k + 1][1:] == [r[1] + "@unique"] + r[2:] for k, r in plain if r[3] in twin_families)
    expect(twins_ok and len(generated) - len(plain) > 100,
           "every graph-family row has its @unique twin right after it (same seed, split, size), no other family has one (%d twins)"
           % (len(generated) - len(plain)))
    real = [r for r in rows(fresh) if r[3] == "real"]
    expect(real and all(r[1].startswith("file:tests/data/matrices/real/") and r[2] == "0" for r in real), "real files: relative paths, seed 0")
    bad = os.path.join(tmp, "bad.txt")
    for what, (train, test) in {"seeds shared by train and test": (("lap2d:50", 7), ("lap2d:100", 7)),
                                "equals a train spec": (("kron:9:4", 1), ("kron:9:4", 1000001))}.items():
        with open(bad, "w") as f:
            f.write("a %s %d lap2d train 100\nb %s %d lap2d test 100\n" % (train + test))
        rc, text = corpus_py(["-o", bad, "--check"])
        expect(rc == 1 and what in text, "--check names the problem: " + what)
finish()
