#!/usr/bin/env python3
"""test_ab_build.py ROOT - tuning/bench/ab_build.sh (A/B of build-time constants; the builds and runs
need the GPU host) through its dry run, AB_DRY_RUN=1: one configure and one build line per flag set,
with the set's CUDA flags and the target, in build-K.log; the runs interleaved round by round (A B A B)
in ab.md, each under its heading, with the benchmark's arguments and its own -o folder (none for
hub-split-bench); a set "@PATCH [FLAGS]": the tree copied to build-ab-K-src, the patch applied there
(an absolute path), then configured from there with FLAGS; nothing built in the working tree. Exits 1
on a wrong result."""
import os
import subprocess
import sys
import tempfile

from checks import expect, finish  # beside this file

ROOT = sys.argv[1]


def run(out, env_extra, args):
    env = dict(os.environ, AB_DRY_RUN="1", **env_extra)
    p = subprocess.run(["bash", os.path.join(ROOT, "tuning/bench/ab_build.sh"), out] + args, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, universal_newlines=True, timeout=60, env=env)
    return p.returncode, p.stdout


def built():
    return sorted(n for n in os.listdir(ROOT) if n.startswith("build-ab-"))


before = built()
with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "ab")
    rc, _ = run(out, {}, ["", "-DMX_MERGE_ITEMS=5", "--", "lap3d:20", "-reps", "100"])
    expect(rc == 0, "the dry run succeeds (exit status %d)" % rc)
    log1 = open(os.path.join(out, "build-1.log")).read().splitlines()
    expect(len(log1) == 2 and log1[0].startswith("cmake -S . -B build-ab-1 ") and "-DCMAKE_CUDA_FLAGS=-DMX_MERGE_ITEMS=5" in log1[0]
           and log1[1].startswith("cmake --build build-ab-1 ") and log1[1].endswith("--target matxtract-bench"),
           "build-1.log: set 1's configure (its flags) and build (the target)")
    log0 = open(os.path.join(out, "build-0.log")).read()
    expect("-DCMAKE_CUDA_FLAGS= " in log0, "build-0.log: set 0 with no extra flags")
    want = []
    for r in (1, 2):
        for k, name in ((0, "defaults"), (1, "-DMX_MERGE_ITEMS=5")):
            want += ["## round %d, set %d: '%s'" % (r, k, name),
                     "build-ab-%d/tuning/bench/matxtract-bench lap3d:20 -reps 100 -o %s/ab-%d-r%d" % (k, out, k, r)]
    got = open(os.path.join(out, "ab.md")).read().splitlines()
    expect(got == want, "ab.md: the runs interleaved A B A B, each with its arguments and -o folder")
    hub = os.path.join(tmp, "hub")
    rc, _ = run(hub, {"AB_TARGET": "hub-split-bench", "ROUNDS": "1"}, ["-DA=1", "-DA=2", "-DA=3", "--", "-K", "64", "kron:10:8"])
    got = open(os.path.join(hub, "ab.md")).read().splitlines()
    expect(rc == 0 and len(got) == 6 and got[1] == "build-ab-0/tuning/bench/hub-split-bench -K 64 kron:10:8"
           and got[4] == "## round 1, set 2: '-DA=3'", "hub-split-bench: three sets, one round, no -o")
    pat = os.path.join(tmp, "p")
    rc, _ = run(pat, {"AB_TARGET": "hub-split-bench", "ROUNDS": "1"}, ["", "@x.patch", "@/abs/y.patch -DA=2", "--", "kron:10:8"])
    expect(rc == 0, "patch sets: the dry run succeeds (exit status %d)" % rc)
    log1 = open(os.path.join(pat, "build-1.log")).read().splitlines()
    expect(len(log1) == 6 and log1[0] == "rm -rf build-ab-1-src" and log1[1] == "mkdir -p build-ab-1-src"
           and log1[2].startswith("cp -r CMakeLists.txt cmake src ") and log1[2].endswith(" build-ab-1-src/")
           and log1[3] == "patch -s -p1 -d build-ab-1-src -i %s" % os.path.join(ROOT, "x.patch")
           and log1[4].startswith("cmake -S build-ab-1-src -B build-ab-1 ") and "-DCMAKE_CUDA_FLAGS= " in log1[4],
           "build-1.log: the copy, the patch (made absolute), the configure from the copy without flags")
    log2 = open(os.path.join(pat, "build-2.log")).read().splitlines()
    expect(len(log2) == 6 and log2[3] == "patch -s -p1 -d build-ab-2-src -i /abs/y.patch" and "-DCMAKE_CUDA_FLAGS=-DA=2" in log2[4],
           "build-2.log: an absolute patch path kept, the set's flags after it")
    got = open(os.path.join(pat, "ab.md")).read().splitlines()
    expect(len(got) == 6 and got[2] == "## round 1, set 1: '@x.patch'", "patch sets: headed by the set")
    expect(built() == before, "nothing built in the working tree")
finish()
