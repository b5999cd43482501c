#!/usr/bin/env python3
"""test_run_corpus.py ROOT BUILD_DIR [--gpu] - smoke test of the corpus harness tuning/bench/run_corpus.sh on
a corpus of two tiny matrices. Host part (label petsc): --help prints the usage, an unknown option is
refused (exit status 2), a build folder without the programs is refused (exit status 1); --petsc-only
with matxtract-petsc-bench on the CPU (-cpu) generates both matrices into the cache (NAME.petsc and
NAME.spec), writes gpu.txt with the command, and spmv_petsc.csv has aij, matxtract and the --petsc-crux
variant of each matrix with its size and the product checked; a second run generates nothing, --quick
takes the quick matrix alone, and a changed spec is generated again. --gpu (label gpu): the whole
harness (matxtract-bench, matxtract-petsc-bench on the GPU, plots.py): spmv.csv one row per matrix with
the kernel and PETSc times; exit 77 (skipped) when nvidia-smi names no GPU. Exits 1 on a wrong result."""
import csv
import os
import subprocess
import sys
import tempfile

from checks import expect, finish, skip  # beside this file

ROOT, BUILD = sys.argv[1], sys.argv[2]
GPU = "--gpu" in sys.argv[3:]
SCRIPT = os.path.join(ROOT, "tuning/bench/run_corpus.sh")
SIZES = {"lapA": ("900", "4380"), "kronB": ("512", None)}  # lap2d:30: 30^2 rows, 5 n^2 - 4 n nonzeros
CPU_ARGS = "-cpu -reps 5 -warmup 2 -setup_reps 1 -settle_max 10"


def run(args, env_extra=None):
    env = dict(os.environ, **(env_extra or {}))
    p = subprocess.run(["bash", SCRIPT] + args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                       timeout=240, env=env)
    return p.returncode, p.stdout


def write_corpus(path, kron_spec):
    with open(path, "w") as f:
        f.write("# two tiny matrices; lapA is the quick subset\nlapA   lap2d:30   quick\nkronB  %s\n" % kron_spec)


def petsc_rows(out):
    return list(csv.DictReader(open(os.path.join(out, "spmv_petsc.csv"))))


def host_part(tmp, corpus, cache):
    rc, text = run(["--help"])
    expect(rc == 0 and "run_corpus.sh [--quick] [--petsc-only]" in text, "--help prints the usage")
    rc, text = run(["--bogus"])
    expect(rc == 2 and "unknown option --bogus" in text, "an unknown option is refused (exit status %d)" % rc)
    rc, text = run(["--petsc-only", "--build", os.path.join(tmp, "nobuild"), os.path.join(tmp, "x")])
    expect(rc == 1 and "not built" in text, "a build folder without the programs is refused (exit status %d)" % rc)
    out = os.path.join(tmp, "out")
    args = ["--petsc-only", "--build", BUILD, "--cache", cache, "--corpus", corpus, "--petsc-crux", "0.7,0.5", out]
    rc, text = run(args, {"PBENCH_ARGS": CPU_ARGS})
    expect(rc == 0 and "generating 2 matrices" in text, "--petsc-only runs, generating both matrices (exit status %d)" % rc)
    if rc:
        print(text)
    for name, spec in (("lapA", "lap2d:30"), ("kronB", "kron:9:4")):
        expect(os.path.getsize(os.path.join(cache, name + ".petsc")) > 0 and open(os.path.join(cache, name + ".spec")).read().strip() == spec,
               "the cache holds %s.petsc and its spec %s" % (name, spec))
    gpu_txt = open(os.path.join(out, "gpu.txt")).read()
    expect("command=tuning/bench/run_corpus.sh --petsc-only" in gpu_txt, "gpu.txt records the command")
    rows = petsc_rows(out)
    got = [(r["matrix"], r["variant"]) for r in rows]
    want = [(m, v) for m in ("lapA", "kronB") for v in ("aij", "matxtract", "matxtract_0.7_0.5")]
    expect(got == want, "spmv_petsc.csv: aij, matxtract and the crux variant per matrix (%s)" % got)
    for r in rows:
        size = SIZES[r["matrix"]]
        expect(r["rows"] == size[0] and (size[1] is None or r["nnz"] == size[1]) and float(r["rel_err"]) <= 1e-12
               and r["petsc_mode"] == "cpu", "%s %s: size, product checked, CPU mode" % (r["matrix"], r["variant"]))
    rc, text = run(args, {"PBENCH_ARGS": CPU_ARGS})
    expect(rc == 0 and "generating 0 matrices" in text, "a second run finds both matrices in the cache")
    rc, text = run(["--quick"] + args, {"PBENCH_ARGS": CPU_ARGS})
    expect(rc == 0 and sorted({r["matrix"] for r in petsc_rows(out)}) == ["lapA"], "--quick: the quick matrix alone")
    write_corpus(corpus, "kron:9:8")
    rc, text = run(args, {"PBENCH_ARGS": CPU_ARGS})
    expect(rc == 0 and "generating 1 matrices" in text and open(os.path.join(cache, "kronB.spec")).read().strip() == "kron:9:8",
           "a changed spec is generated again")


def gpu_part(tmp, corpus, cache):
    out = os.path.join(tmp, "gpu")
    rc, text = run(["--build", BUILD, "--cache", cache, "--corpus", corpus, out], {"PBENCH_ARGS": "-setup_reps 1 -settle_max 50"})
    if "gpu_line=\n" in open(os.path.join(out, "gpu.txt")).read():
        skip("nvidia-smi names no GPU")
    expect(rc == 0, "the whole harness runs (exit status %d)" % rc)
    if rc:
        print(text)
    rows = list(csv.DictReader(open(os.path.join(out, "spmv.csv"))))
    expect(sorted(r["matrix"] for r in rows) == ["kronB", "lapA"], "spmv.csv: one row per matrix")
    for r in rows:
        expect(all(float(r[c] or 0) > 0 for c in ("t_ours_us", "t_cusparse_alg2_us", "t_aijcusparse_us", "t_matxtract_petsc_us")),
               "%s: kernel and PETSc times" % r["matrix"])
    expect(os.path.exists(os.path.join(out, "summary.md")), "summary.md written")


with tempfile.TemporaryDirectory() as tmp:
    corpus, cache = os.path.join(tmp, "corpus.txt"), os.path.join(tmp, "cache")
    write_corpus(corpus, "kron:9:4")
    if GPU:
        gpu_part(tmp, corpus, cache)
    else:
        host_part(tmp, corpus, cache)
finish()
