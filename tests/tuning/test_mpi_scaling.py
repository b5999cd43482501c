#!/usr/bin/env python3
"""test_mpi_scaling.py ROOT - the MPI scaling driver tuning/mpi/scaling.sh (ex45, ksp_solve and pagerank,
aijcusparse vs matxtract on 1/2/4 ranks, one GPU each) with stand-ins for what needs the GPU host:
nvidia-smi (lists STUB_GPUS GPUs), mpiexec (skips its own options, runs the program once with STUB_NP =
the rank count), mpicc and pkg-config (the ex45 build: mpicc copies the ex45 stand-in), and the three
programs, which print the lines the real ones print (ex45: -ksp_converged_reason's line and -log_view's
KSPSolve row; ksp_solve: "iterations:", "time: solve:"; pagerank: "ghosts per rank:", "iterations:",
"time: iterations:") and log their arguments. Their times: aijcusparse 2 / 1.25 / 0.8, matxtract
1 / 0.5 / 0.25 on 1 / 2 / 4 ranks, times a factor per workload (ex45 1, ksp_solve 0.1 generated and 0.2
real, pagerank 0.01 / 0.005 / 0.008 without / petsc / rcm partitioning), times 1, 1.1, 0.5 in the first,
second and later call of the same command: the median of 3 repetitions is the base time, of 2 it is 1.05x.
Checked: with 4 GPUs every (workload, matrix, partition, np, type, rep) has one CSV row, the medians,
speedups vs 1 GPU and matxtract vs aijcusparse in scaling.md, PageRank's ghosts, env.txt, ex45 built from
EX45_DIR's tree; -use_gpu_aware_mpi 0 reaches every program, -dll_append libmatxtract.so ex45's matxtract
runs; with 2 GPUs (EX45_BIN, REPS=2, MPIEXEC with options) the 4-rank runs are skipped and said so,
REAL_MATRIX unset is said; a failing run, a run of too few iterations and a missing ex45.c are FAILED on
stderr and in scaling.md, the other runs go on, the exit status is 1. Exits 1 on a wrong result."""
import csv
import os
import stat
import subprocess
import sys
import tempfile

from checks import expect, finish  # beside this file

ROOT = sys.argv[1]
NVIDIA_SMI = """#!/bin/bash
for i in $(seq 0 $((STUB_GPUS - 1))); do echo "GPU $i: Stand-in H200 (UUID: GPU-$i)"; done
"""
MPIEXEC = """#!/bin/bash
[ "$1" = --version ] && { echo "mpiexec (stand-in) 4.1"; exit 0; }
while [ $# -gt 0 ] && [ "$1" != -n ]; do shift; done   # its own options (e.g. --bind-to none)
[ "$1" = -n ] || { echo "stand-in mpiexec: no -n N" >&2; exit 2; }
export STUB_NP=$2
shift 2
exec "$@"
"""
PKG_CONFIG = """#!/bin/bash
case $* in
  *--cflags*) echo "-I/stub/petsc/include" ;;
  *--libs*) echo "-L/stub/petsc/lib -lpetsc" ;;
  *--variable=libdir*) echo "/stub/petsc/lib" ;;
  *--modversion*) echo "3.22.5" ;;
esac
"""
MPICC = """#!/bin/bash
echo "$*" >> "$STUB_DIR/mpicc.log"
while [ $# -gt 0 ]; do
  case $1 in -o) o=$2; shift ;; *.c) src=$1 ;; esac
  shift
done
[ -f "$src" ] || { echo "stand-in mpicc: no source $src" >&2; exit 1; }
cp "$STUB_EX45" "$o"
"""
# every program stand-in: its arguments logged; type, partition, iterations and the time of this call
COMMON = r"""#!/bin/bash
prog=$(basename "$0")
echo "$STUB_NP $prog $*" >> "$STUB_DIR/argv.log"
args=("$@") part=none real=0 type="" its=0
for ((i = 0; i < $#; i++)); do
  case ${args[i]} in
    -mat_type | -dm_mat_type) type=${args[i + 1]} ;;
    -pagerank_partition) part=${args[i + 1]} ;;
    -ksp_max_it | -pagerank_max_it) its=${args[i + 1]} ;;
    -f) real=1 ;;
  esac
done
key=$(echo "$STUB_NP $prog $*" | md5sum | cut -c1-16)
n=$(( $(cat "$STUB_DIR/count.$key" 2>/dev/null || echo 0) + 1 ))
echo $n > "$STUB_DIR/count.$key"
case $n in 1) r=1.0 ;; 2) r=1.1 ;; *) r=0.5 ;; esac
case $type$STUB_NP in aijcusparse1) f=2.0 ;; aijcusparse2) f=1.25 ;; aijcusparse4) f=0.8 ;;
  matxtract1) f=1.0 ;; matxtract2) f=0.5 ;; matxtract4) f=0.25 ;; *) echo "stand-in: type '$type' np '$STUB_NP'?" >&2; exit 3 ;; esac
case $prog:$part:$real in ex45:*) w=1 ;; ksp_solve:*:0) w=0.1 ;; ksp_solve:*:1) w=0.2 ;;
  pagerank:none:*) w=0.01 ;; pagerank:petsc:*) w=0.005 ;; pagerank:rcm:*) w=0.008 ;; esac
t=$(awk -v a=$w -v b=$f -v c=$r 'BEGIN { printf "%.6f", a * b * c }')
[ "${STUB_FAIL:-}" = "$prog:$type:$STUB_NP" ] && { echo "[0]PETSC ERROR: stand-in failure"; exit 1; }
[ "${STUB_SHORT:-}" = "$prog:$type:$STUB_NP" ] && its=$((its - 1))
"""
EX45 = COMMON + r"""
echo "Linear solve converged due to CONVERGED_ITS iterations $its"
echo "Residual norm 0.0123"
echo "Event                Count      Time (sec)     Flop                              --- Global ---"
echo "                   Max Ratio  Max     Ratio   Max  Ratio  Mess   AvgLen  Reduct  %T %F %M %L %R"
echo "KSPSetUp               1 1.0 1.0000e-01 1.0 0.00e+00 0.0 0.0e+00 0.0e+00 0.0e+00  1  0  0  0  0"
printf "KSPSolve               1 1.0 %.4e 1.0 4.00e+10 1.0 0.0e+00 0.0e+00 0.0e+00 90 99  0  0  0\n" "$t"
"""
KSP_SOLVE = COMMON + r"""
echo "ksp_solve: -gen lap3d:150"
echo "rows: 3375000, nonzeros: 23490000"
echo "matrix type: mpiaij$type"
echo "processes: $STUB_NP"
echo "ksp: cg, pc: jacobi"
echo "iterations: $its"
echo "converged reason: CONVERGED_ITS"
echo "time: setup, matrix (read/generate, assembly, conversion): 0.500000 s"
echo "time: setup, first MatMult: 0.010000 s"
echo "time: solve: $t s"
echo "time: per iteration: 1.000e-03 s"
echo "time: total: 9.000000 s"
"""
PAGERANK = COMMON + r"""
case $part in none) g=100000 ;; petsc) g=20000 ;; rcm) g=50000 ;; esac
[ "$STUB_NP" = 1 ] && g=0
echo "PageRank of -gen kron:21:16"
echo "nodes: 2097152"
echo "processes: $STUB_NP"
echo "ghosts per rank: min $((g / 2)), max $g, total $((g * STUB_NP)) (1.0% of the nodes)"
echo "iterations: $its"
echo "converged: no"
echo "time: setup, first MatMult: 0.010000 s"
echo "time: iterations: $t s"
echo "time: per iteration: 1.000e-04 s"
"""


def script(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, stat.S_IRWXU)


def run(tmp, name, gpus, **env):
    """scaling.sh OUT BUILD with the stand-ins; its own stand-in state folder"""
    out, stubs = os.path.join(tmp, name), os.path.join(tmp, "state-" + name)
    os.makedirs(stubs)
    e = dict(os.environ, PATH=os.path.join(tmp, "bin") + os.pathsep + os.environ["PATH"], STUB_GPUS=str(gpus), STUB_DIR=stubs,
             STUB_EX45=os.path.join(tmp, "ex45-stand-in"))
    for k in ("REPS", "NPS", "WORKLOADS", "EX45_DIR", "EX45_BIN", "REAL_MATRIX", "PARTITIONS", "MPIEXEC", "STUB_FAIL", "STUB_SHORT"):
        e.pop(k, None)
    e.update(env)
    p = subprocess.run(["bash", os.path.join(ROOT, "tuning/mpi/scaling.sh"), out, os.path.join(tmp, "build")], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True, timeout=150, env=e, cwd=tmp)
    rows = list(csv.DictReader(open(os.path.join(out, "scaling.csv")))) if os.path.exists(os.path.join(out, "scaling.csv")) else []
    md = open(os.path.join(out, "scaling.md")).read() if os.path.exists(os.path.join(out, "scaling.md")) else ""
    argv = open(os.path.join(stubs, "argv.log")).read().splitlines() if os.path.exists(os.path.join(stubs, "argv.log")) else []
    return p, out, stubs, rows, md, argv


def cases(real):
    c = [("ex45", "grid256^3", "-"), ("ksp_solve", "lap3d:150", "-")] + [("pagerank", "kron:21:16", p) for p in ("none", "petsc", "rcm")]
    return c + [("ksp_solve", "real.mtx", "-")] if real else c


def keys(rows):
    return sorted((r["workload"], r["matrix"], r["partition"], r["np"], r["type"], r["rep"]) for r in rows)


def report(p, md):
    print("--- stdout\n" + p.stdout + "--- stderr\n" + p.stderr + "--- scaling.md\n" + md)


with tempfile.TemporaryDirectory() as tmp:
    build = os.path.join(tmp, "build")
    lib = os.path.join(build, "src", "libmatxtract.so")
    script(os.path.join(tmp, "bin", "nvidia-smi"), NVIDIA_SMI)
    script(os.path.join(tmp, "bin", "mpiexec"), MPIEXEC)
    script(os.path.join(tmp, "bin", "mpicc"), MPICC)
    script(os.path.join(tmp, "bin", "pkg-config"), PKG_CONFIG)
    script(os.path.join(tmp, "ex45-stand-in"), EX45)
    script(os.path.join(tmp, "prebuilt", "ex45"), EX45)
    script(os.path.join(build, "examples/ksp_solve/ksp_solve"), KSP_SOLVE)
    script(os.path.join(build, "examples/pagerank/pagerank"), PAGERANK)
    script(lib, "")
    tree = os.path.join(tmp, "petsc-examples", "share/petsc/examples")  # a PETSc examples tree, as Debian ships it
    script(os.path.join(tree, "src/ksp/ksp/tutorials/ex45.c"), "/* PETSc's ex45.c */\n")
    real = os.path.join(tmp, "real.mtx")
    script(real, "%%MatrixMarket matrix coordinate real symmetric\n")

    # ---- 4 GPUs: everything, 3 repetitions, ex45 built from the examples tree ----
    p, out, stubs, rows, md, argv = run(tmp, "four", 4, EX45_DIR=os.path.join(tmp, "petsc-examples"), REAL_MATRIX=real)
    expect(p.returncode == 0 and "FAILED" not in p.stderr, "4 GPUs: scaling.sh runs (exit status %d)" % p.returncode)
    want = sorted((w, m, part, np, t, rep) for w, m, part in cases(True) for np in "124" for t in ("aijcusparse", "matxtract") for rep in "123")
    expect(keys(rows) == want, "4 GPUs: scaling.csv has one row per workload, matrix, partition, np, type and rep (%d rows, want %d)"
           % (len(rows), len(want)))
    expect(all(r["status"] == "ok" and r["its"] == ("300" if r["workload"] == "pagerank" else "500") for r in rows),
           "4 GPUs: every run ok, 500 CG / 300 PageRank iterations recorded")
    by = {(r["workload"], r["matrix"], r["partition"], r["np"], r["type"], r["rep"]): r for r in rows}
    r = by.get(("ex45", "grid256^3", "-", "2", "matxtract", "2"), {})
    expect(r.get("time_s") == "5.5000e-01" and r.get("log") == "logs/ex45_grid256_3_-_np2_matxtract_r2.log"
           and os.path.isfile(os.path.join(out, r.get("log", "-"))),
           "4 GPUs: ex45's time is KSPSolve's from -log_view (%s), its log is kept" % r.get("time_s"))
    expect(len({r["log"] for r in rows}) == len(rows) and all(os.path.isfile(os.path.join(out, r["log"])) for r in rows),
           "4 GPUs: one log per run under logs/")
    r = by.get(("pagerank", "kron:21:16", "petsc", "4", "aijcusparse", "1"), {})
    expect((r.get("ghosts_min"), r.get("ghosts_max"), r.get("ghosts_total"), r.get("time_s")) == ("10000", "20000", "80000", "0.004000"),
           "4 GPUs: pagerank's ghosts per rank and iteration time in the CSV")
    expect(by.get(("ex45", "grid256^3", "-", "1", "aijcusparse", "1"), {}).get("ghosts_max", "x") == "", "4 GPUs: no ghosts for ex45")
    expect(r.get("first_mult_s") == "0.010000" and by.get(("ksp_solve", "lap3d:150", "-", "2", "matxtract", "1"), {}).get("first_mult_s", "x") == "",
           "4 GPUs: pagerank's first MatMult in the CSV, none for ksp_solve")
    expect("## PageRank: the first MatMult" in md and "| kron:21:16 | petsc | 4 | aijcusparse | 0.01 |" in md,
           "4 GPUs: scaling.md: PageRank's first MatMult")
    for line in ("| ex45 | grid256^3 | - | aijcusparse | 2 | 1.25 | 0.8 | 1.60x | 2.50x | 1.00x | 1.00x | 1.00x |",
                 "| ex45 | grid256^3 | - | matxtract | 1 | 0.5 | 0.25 | 2.00x | 4.00x | 2.00x | 2.50x | 3.20x |",
                 "| ksp_solve | lap3d:150 | - | matxtract | 0.1 | 0.05 | 0.025 | 2.00x | 4.00x | 2.00x | 2.50x | 3.20x |",
                 "| ksp_solve | real.mtx | - | aijcusparse | 0.4 | 0.25 | 0.16 | 1.60x | 2.50x | 1.00x | 1.00x | 1.00x |",
                 "| pagerank | kron:21:16 | petsc | matxtract | 0.005 | 0.0025 | 0.00125 | 2.00x | 4.00x | 2.00x | 2.50x | 3.20x |",
                 "| pagerank | kron:21:16 | rcm | aijcusparse | 0.016 | 0.01 | 0.0064 | 1.60x | 2.50x | 1.00x | 1.00x | 1.00x |"):
        expect(line in md, "4 GPUs: scaling.md: the medians, speedups vs 1 GPU, matxtract vs aijcusparse: " + line)
    expect("| kron:21:16 | none | 1 | 0 | 0 | 0 |" in md and "| kron:21:16 | petsc | 4 | 10000 | 20000 | 80000 |" in md,
           "4 GPUs: scaling.md: PageRank's ghosts per rank")
    expect(md in p.stdout and "Failures" not in md, "4 GPUs: scaling.md printed, no failures in it")
    expect(len(argv) == len(want) and all(a.endswith(" -use_gpu_aware_mpi 0") for a in argv), "4 GPUs: -use_gpu_aware_mpi 0 reaches every run")
    ex45 = [a for a in argv if a.split()[1] == "ex45"]
    expect(all(("-dm_mat_type matxtract" in a) == ("-dll_append " + lib in a) for a in ex45) and any("-dll_append" in a for a in ex45),
           "4 GPUs: ex45's matxtract runs (and only they) load %s by -dll_append" % lib)
    expect(all("-da_grid_x 256 -da_grid_y 256 -da_grid_z 256 -ksp_type cg -pc_type jacobi -ksp_norm_type none -ksp_max_it 500" in a
               and "-dm_vec_type cuda" in a and "-log_view" in a for a in ex45), "4 GPUs: ex45's options: 256^3, CG + Jacobi, 500 its, -log_view")
    ksp = [a for a in argv if a.split()[1] == "ksp_solve"]
    expect(sum("-gen lap3d:150 " in a for a in ksp) == 18 and sum("-f " + real + " " in a for a in ksp) == 18
           and all("-ksp_type cg -pc_type jacobi -ksp_norm_type none -ksp_max_it 500" in a and "-vec_type cuda" in a for a in ksp),
           "4 GPUs: ksp_solve on -gen lap3d:150 and -f REAL_MATRIX, CG + Jacobi, 500 its, device vectors")
    pr = [a for a in argv if a.split()[1] == "pagerank"]
    expect(all("-gen kron:21:16 -pagerank_tol 0 -pagerank_max_it 300" in a and "-vec_type cuda" in a for a in pr)
           and all(sum("-pagerank_partition %s " % part in a for a in pr) == 18 for part in ("none", "petsc", "rcm")),
           "4 GPUs: pagerank on kron:21:16, 300 iterations, each partitioning")
    expect(sorted({a.split()[0] for a in argv}) == ["1", "2", "4"], "4 GPUs: runs on 1, 2 and 4 ranks")
    mpicc = open(os.path.join(stubs, "mpicc.log")).read() if os.path.exists(os.path.join(stubs, "mpicc.log")) else ""
    expect(os.path.join(tree, "src/ksp/ksp/tutorials/ex45.c") in mpicc and "-I/stub/petsc/include" in mpicc
           and "-Wl,-rpath,/stub/petsc/lib" in mpicc, "4 GPUs: ex45 built by mpicc from EX45_DIR's examples tree, with pkg-config PETSc's flags")
    env = open(os.path.join(out, "env.txt")).read()
    expect("GPU 3: Stand-in H200" in env and "reps=3" in env and "commit=" in env and "scaling.sh " + out in env,
           "4 GPUs: env.txt has nvidia-smi -L, REPS, the commit and the command line")
    if p.returncode or not md:
        report(p, md)

    # ---- 2 GPUs: 4 ranks skipped; a prebuilt ex45, 2 repetitions, mpiexec with options, no real matrix ----
    p, out, stubs, rows, md, argv = run(tmp, "two", 2, EX45_BIN=os.path.join(tmp, "prebuilt", "ex45"), REPS="2",
                                        MPIEXEC="mpiexec --bind-to none")
    expect(p.returncode == 0, "2 GPUs: scaling.sh runs (exit status %d)" % p.returncode)
    expect("only 2 GPU(s): skipping np=4" in p.stderr and "only 2 GPU(s): skipping np=4" in md, "2 GPUs: np=4 skipped, said on stderr and in scaling.md")
    expect("REAL_MATRIX unset: ksp_solve on a real matrix skipped" in p.stderr + md, "2 GPUs: REAL_MATRIX unset is said")
    want = sorted((w, m, part, np, t, rep) for w, m, part in cases(False) for np in "12" for t in ("aijcusparse", "matxtract") for rep in "12")
    expect(keys(rows) == want, "2 GPUs: rows for 1 and 2 ranks, 2 repetitions (%d rows)" % len(rows))
    expect("| ex45 | grid256^3 | - | aijcusparse | 2.1 | 1.312 | - | 1.60x | - | 1.00x | 1.00x | - |" in md
           and "| ex45 | grid256^3 | - | matxtract | 1.05 | 0.525 | - | 2.00x | - | 2.00x | 2.50x | - |" in md,
           "2 GPUs: medians of 2 repetitions; the 4-GPU cells are -")
    expect(not os.path.exists(os.path.join(stubs, "mpicc.log")) and all("--bind-to" not in a for a in argv)
           and {a.split()[0] for a in argv} == {"1", "2"}, "2 GPUs: EX45_BIN runs unbuilt; MPIEXEC's own options stay with mpiexec")
    if p.returncode:
        report(p, md)

    # ---- failures: a run that fails, a run that stops early, no ex45.c: FAILED, the rest goes on, exit 1 ----
    p, out, stubs, rows, md, argv = run(tmp, "fail", 2, EX45_DIR=os.path.join(tmp, "nowhere"), REPS="1",
                                        STUB_FAIL="pagerank:matxtract:2", STUB_SHORT="ksp_solve:aijcusparse:1")
    expect(p.returncode == 1, "failures: exit status 1 (%d)" % p.returncode)
    fails = [line for line in p.stderr.splitlines() if line.startswith("FAILED ")]
    expect(len(fails) == 5 and any("ex45: no ex45.c in EX45_DIR" in f for f in fails)
           and any(f.startswith("FAILED ksp_solve lap3d:150 partition=- np=1 aijcusparse rep=1: 499 iterations, not 500") for f in fails)
           and all(any(f.startswith("FAILED pagerank kron:21:16 partition=%s np=2 matxtract rep=1: exit 1" % part) for f in fails)
                   for part in ("none", "petsc", "rcm")), "failures: one FAILED line each on stderr (%d)" % len(fails))
    expect("## Failures (5)" in md and all(f in md for f in fails), "failures: listed in scaling.md")
    want = sorted((w, m, part, np, t, "1") for w, m, part in cases(False)[1:] for np in "12" for t in ("aijcusparse", "matxtract"))
    st = {(r["workload"], r["partition"], r["np"], r["type"]): r["status"] for r in rows}
    expect(keys(rows) == want and st.get(("pagerank", "rcm", "2", "matxtract")) == "exit 1"
           and st.get(("pagerank", "rcm", "2", "aijcusparse")) == "ok" and sum(s == "ok" for s in st.values()) == len(want) - 4,
           "failures: every run is recorded, the failed ones with their status, the others ok")
    expect("| pagerank | kron:21:16 | none | matxtract | 0.01 | - | - | - | - | 2.00x | - | - |" in md
           and "| ksp_solve | lap3d:150 | - | aijcusparse | - | 0.125 | - | - | - | - | 1.00x | - |" in md,
           "failures: a failed run is left out of the medians")
    if p.returncode != 1:
        report(p, md)
finish()
