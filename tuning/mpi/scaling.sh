#!/bin/bash
# scaling.sh OUTDIR [BUILD_DIR] - MPI scaling on a multi-GPU host (issue 44, "Beyond one GPU"): aijcusparse
# vs matxtract on 1, 2 and 4 ranks, one GPU per rank (PETSc picks the device by local rank), each run
# REPS times (types in alternating order), on three workloads:
#   ex45      PETSc's KSP tutorial ex45 (3D Laplacian on a DMDA), unmodified: -da_grid_{x,y,z} EX45_N
#             (grid points per direction: ex45's spacing is 1/(N-1), so N=256 is the 256^3 grid of 256^3
#             unknowns; EX45_N=257 gives 256 intervals), CG + Jacobi, exactly KSP_ITS iterations,
#             -dm_mat_type TYPE -dm_vec_type cuda, matxtract loaded by -dll_append BUILD_DIR/src/libmatxtract.so;
#             time = KSPSolve from -log_view (max over ranks; it includes ex45's operator assembly and PC
#             setup, which KSPSolve's KSPSetUp does)
#   ksp_solve examples/ksp_solve on -gen KSP_SPEC and on REAL_MATRIX (when set), CG + Jacobi, exactly KSP_ITS
#             iterations, -mat_type TYPE -vec_type cuda; time = its "time: solve:" line
#   pagerank  examples/pagerank on -gen PAGERANK_SPEC, power method, exactly PAGERANK_ITS iterations, for each
#             -pagerank_partition in PARTITIONS; time = its "time: iterations:" line, and its "ghosts per
#             rank" line (min, max, total)
# Fixed iteration counts: CG with -ksp_norm_type none (PETSc then runs KSPConvergedSkip: exactly
# -ksp_max_it iterations), PageRank with -pagerank_tol 0. A run that exits nonzero, prints no time or
# makes another number of iterations is FAILED (a line on stderr and in scaling.md); the script goes on.
# Every run gets -use_gpu_aware_mpi 0 (the host's OpenMPI is not CUDA-aware).
#
#   bash tuning/mpi/scaling.sh OUTDIR [BUILD_DIR]    BUILD_DIR default build-gpu (after gpu_cycle.sh setup build;
#                                                    or: EX45_DIR=... tuning/gpu_cycle.sh scaling)
# Environment:
#   REPS (3)            repetitions of every (workload, matrix, partition, np, type)
#   NPS ("1 2 4")       rank counts; one that exceeds the GPUs `nvidia-smi -L` lists is skipped, and said so
#   WORKLOADS ("ex45 ksp_solve pagerank")
#   EX45_DIR (.petsc-examples of the repository)  a folder holding ex45.c, or a PETSc examples tree
#                       (share/petsc/examples, with src/ksp/ksp/tutorials/ex45.c), e.g. Debian's
#                       libpetsc3.18-dev-examples copy; built with mpicc and `pkg-config PETSc` as
#                       tests/gpu_tutorials.sh does. EX45_BIN: a prebuilt ex45 instead (no build)
#   EX45_N (256)        ex45's grid points per direction
#   KSP_ITS (500)       CG iterations (ex45 and ksp_solve)
#   KSP_SPEC (lap3d:150)  ksp_solve's generated matrix
#   REAL_MATRIX         a matrix file (.mtx or PETSc binary, SPD) for ksp_solve; unset: skipped, and said so
#   PAGERANK_SPEC (kron:21:16), PAGERANK_ITS (300), PARTITIONS ("none petsc rcm")
#   MPIEXEC (mpiexec)   the launcher, split into words (e.g. "mpiexec --bind-to none"); called as MPIEXEC -n NP ...
#   RUN_TIMEOUT_S (300) per run
#   MATXTRACT_OPTS      options added to every matxtract run, split into words (e.g.
#                       "-mat_matxtract_ghost_exchange nccl": the ghosts through NCCL; say so in the results)
# Writes OUTDIR/scaling.csv (one row per run: workload, matrix, partition, np, type, rep, time_s, its,
# ghosts_min/max/total, first_mult_s (PageRank's first MatMult, in its setup), status, log),
# OUTDIR/scaling.md (per workload, matrix, partition and type: the median over the runs that succeeded
# at each np, the speedup vs 1 GPU, matxtract vs aijcusparse at each np = aijcusparse's median /
# matxtract's; PageRank's ghosts and first MatMult), OUTDIR/env.txt, OUTDIR/logs/ (one per run).
# Exit status: 0, or 1 when anything failed (a run, the ex45 build, or no GPU at all).
# shellcheck disable=SC2317  # the functions called by name (workload_W, cmd_W, parse_W) are reachable
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: scaling.sh OUTDIR [BUILD_DIR]}
build=${2:-build-gpu}
REPS=${REPS:-3}
NPS=${NPS:-1 2 4}
WORKLOADS=${WORKLOADS:-ex45 ksp_solve pagerank}
EX45_DIR=${EX45_DIR:-$ROOT/.petsc-examples}
EX45_BIN=${EX45_BIN:-}
EX45_N=${EX45_N:-256}
KSP_ITS=${KSP_ITS:-500}
KSP_SPEC=${KSP_SPEC:-lap3d:150}
REAL_MATRIX=${REAL_MATRIX:-}
PAGERANK_SPEC=${PAGERANK_SPEC:-kron:21:16}
PAGERANK_ITS=${PAGERANK_ITS:-300}
PARTITIONS=${PARTITIONS:-none petsc rcm}
MPIEXEC=${MPIEXEC:-mpiexec}
MATXTRACT_OPTS=${MATXTRACT_OPTS:-}
RUN_TIMEOUT_S=${RUN_TIMEOUT_S:-300}
read -ra LAUNCHER <<< "$MPIEXEC"
mkdir -p "$out/logs" || exit 1
out=$(cd "$out" && pwd)
build=$(cd "$build" 2>/dev/null && pwd || echo "$build")
LIB=$build/src/libmatxtract.so
KSPSOLVE=$build/examples/ksp_solve/ksp_solve
PAGERANK=$build/examples/pagerank/pagerank
CSV=$out/scaling.csv
FAILED_TXT=$out/failed.txt   # one line per failure, for scaling.md
NOTES_TXT=$out/notes.txt     # skipped rank counts and workloads, for scaling.md
: > "$FAILED_TXT"
: > "$NOTES_TXT"
status=0

# ---- bookkeeping ----------------------------------------------------------------------------------------
# fail WHAT: a FAILED line on stderr and in scaling.md; the exit status becomes 1
fail() {
  echo "FAILED $*" >&2
  echo "FAILED $*" >> "$FAILED_TXT"
  status=1
}
# note WHAT: a skip, said on stderr and in scaling.md (not a failure)
note() {
  echo "$*" >&2
  echo "$*" >> "$NOTES_TXT"
}
gpu_count() { nvidia-smi -L 2>/dev/null | grep -c '^GPU '; }
# a name fit for a file: anything but letters, digits, '.', '_' and '-' becomes '_'
file_name() { echo "$1" | tr -c 'A-Za-z0-9._\n-' '_'; }

write_env() {
  {
    echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "command=REPS=\"$REPS\" NPS=\"$NPS\" WORKLOADS=\"$WORKLOADS\" EX45_DIR=\"$EX45_DIR\" EX45_BIN=\"$EX45_BIN\" EX45_N=$EX45_N" \
      "KSP_ITS=$KSP_ITS KSP_SPEC=$KSP_SPEC REAL_MATRIX=\"$REAL_MATRIX\" PAGERANK_SPEC=$PAGERANK_SPEC PAGERANK_ITS=$PAGERANK_ITS" \
      "PARTITIONS=\"$PARTITIONS\" MPIEXEC=\"$MPIEXEC\" MATXTRACT_OPTS=\"$MATXTRACT_OPTS\" bash tuning/mpi/scaling.sh $*"
    echo "reps=$REPS"
    echo "commit=$(git -C "$ROOT" rev-parse HEAD 2>/dev/null)$(git -C "$ROOT" diff --quiet HEAD -- src examples tuning 2>/dev/null || echo ' (modified)')"
    echo "petsc=$(pkg-config --modversion PETSc 2>/dev/null)"
    echo "petsc_options=${PETSC_OPTIONS:-}"
    echo "mpiexec=$("${LAUNCHER[@]}" --version 2>/dev/null | head -1)"
    echo "nvidia-smi -L:"
    nvidia-smi -L 2>&1
  } > "$out/env.txt"
}

# ---- ex45: the prebuilt EX45_BIN, or PETSc's unmodified source built here --------------------------------
# ex45_source: EX45_DIR/ex45.c (a flat copy, as tests/gpu_tutorials.sh takes it), or the file's place in a
# PETSc examples tree
ex45_source() {
  local f
  for f in "$EX45_DIR/ex45.c" "$EX45_DIR/src/ksp/ksp/tutorials/ex45.c" "$EX45_DIR/share/petsc/examples/src/ksp/ksp/tutorials/ex45.c"; do
    [ -f "$f" ] && { echo "$f"; return 0; }
  done
  return 1
}
# build_ex45: sets EX45 (the binary) or fails; built as tests/gpu_tutorials.sh builds it
build_ex45() {
  local src cflags libs
  if [ -n "$EX45_BIN" ]; then
    EX45=$EX45_BIN
    [ -x "$EX45" ] || { fail "ex45: EX45_BIN=$EX45_BIN is not an executable"; return 1; }
    return 0
  fi
  src=$(ex45_source) || { fail "ex45: no ex45.c in EX45_DIR=$EX45_DIR (nor src/ksp/ksp/tutorials/ under it)"; return 1; }
  mkdir -p "$out/bin"
  EX45=$out/bin/ex45
  cflags=$(pkg-config --cflags PETSc) libs="$(pkg-config --libs PETSc) -Wl,-rpath,$(pkg-config --variable=libdir PETSc)"
  # shellcheck disable=SC2086  # the flags are words
  mpicc -O2 -o "$EX45" "$src" $cflags $libs -lm > "$out/logs/ex45_build.log" 2>&1 ||
    { fail "ex45: cannot build $src (log $out/logs/ex45_build.log)"; return 1; }
}

# ---- the command of one run, into CMD: cmd_WORKLOAD TYPE SOURCE PARTITION --------------------------------
# (SOURCE: ex45 none; ksp_solve a generator spec or a matrix file; pagerank a generator spec)
cmd_ex45() {
  local n=$EX45_N
  CMD=("$EX45" -da_grid_x "$n" -da_grid_y "$n" -da_grid_z "$n" -ksp_type cg -pc_type jacobi -ksp_norm_type none
       -ksp_max_it "$KSP_ITS" -ksp_converged_reason -dm_mat_type "$1" -dm_vec_type cuda -log_view)
  # matxtract is no part of PETSc: ex45 gets it as a dynamic library, as tests/gpu_tutorials.sh does
  [ "$1" = matxtract ] && CMD+=(-dll_append "$LIB")
  return 0
}
cmd_ksp_solve() {
  CMD=("$KSPSOLVE")
  if [ -f "$2" ]; then CMD+=(-f "$2"); else CMD+=(-gen "$2"); fi
  CMD+=(-ksp_type cg -pc_type jacobi -ksp_norm_type none -ksp_max_it "$KSP_ITS" -mat_type "$1" -vec_type cuda)
}
cmd_pagerank() {
  CMD=("$PAGERANK" -gen "$2" -pagerank_tol 0 -pagerank_max_it "$PAGERANK_ITS" -pagerank_top 0
       -pagerank_partition "$3" -mat_type "$1" -vec_type cuda)
}
expected_its() { if [ "$1" = pagerank ]; then echo "$PAGERANK_ITS"; else echo "$KSP_ITS"; fi; }

# ---- what a log says: parse_WORKLOAD LOG -> "time_s,its,ghosts_min,ghosts_max,ghosts_total,first_mult_s" ----
# (first_mult_s: PageRank's first MatMult, part of its setup, not of time_s: where the ghost exchange
# is made, e.g. NCCL's communicator; ex45 and ksp_solve make theirs inside the timed solve)
parse_ex45() {
  local t its
  t=$(awk '$1 == "KSPSolve" { print $4; exit }' "$1")
  its=$(grep -oE "Linear solve (converged|did not converge) due to [A-Z_]+ iterations [0-9]+" "$1" | awk '{ print $NF }' | tail -1)
  echo "$t,$its,,,,"
}
parse_ksp_solve() {
  local t its
  t=$(awk '/^time: solve: / { print $3; exit }' "$1")
  its=$(awk '/^iterations: / { print $2; exit }' "$1")
  echo "$t,$its,,,,"
}
parse_pagerank() {
  local t its ghosts first
  t=$(awk '/^time: iterations: / { print $3; exit }' "$1")
  its=$(awk '/^iterations: / { print $2; exit }' "$1")
  # "ghosts per rank: min A, max B, total C (x% of the nodes)"
  ghosts=$(sed -nE 's/^ghosts per rank: min ([0-9]+), max ([0-9]+), total ([0-9]+).*/\1,\2,\3/p' "$1" | head -1)
  first=$(awk '/^time: setup, first MatMult: / { print $5; exit }' "$1")
  echo "$t,$its,${ghosts:-,,},$first"
}

# ---- one run: run_one WORKLOAD MATRIX PARTITION NP TYPE REP SOURCE -> its log and its CSV row -------------
run_one() {
  local workload=$1 matrix=$2 part=$3 np=$4 type=$5 rep=$6 source=$7
  local log rc fields t its want st
  log=logs/$(file_name "${workload}_${matrix}_${part}_np${np}_${type}_r${rep}").log
  "cmd_$workload" "$type" "$source" "$part"
  # shellcheck disable=SC2206  # the options are words
  [ "$type" = matxtract ] && [ -n "$MATXTRACT_OPTS" ] && CMD+=($MATXTRACT_OPTS)
  CMD=("${LAUNCHER[@]}" -n "$np" "${CMD[@]}" -use_gpu_aware_mpi 0)
  echo "+ ${CMD[*]}" > "$out/$log"
  timeout "$RUN_TIMEOUT_S" "${CMD[@]}" < /dev/null >> "$out/$log" 2>&1
  rc=$?
  fields=$("parse_$workload" "$out/$log")
  IFS=, read -r t its _ <<< "$fields"
  want=$(expected_its "$workload")
  # the rules: exit 0, a time, exactly the requested iterations; the first broken one names the failure
  if [ "$rc" != 0 ]; then st="exit $rc"
  elif [ -z "$t" ]; then st="no time in the log"
  elif [ "$its" != "$want" ]; then st="${its:-no} iterations, not $want"
  else st=ok
  fi
  [ "$st" = ok ] || fail "$workload $matrix partition=$part np=$np $type rep=$rep: $st (log $out/$log)"
  echo "$workload,$matrix,$part,$np,$type,$rep,$fields,$st,$log" >> "$CSV"
}

# run_case WORKLOAD MATRIX PARTITION SOURCE: every rank count there are GPUs for, REPS repetitions, both
# types (aijcusparse first in odd repetitions, matxtract first in even ones)
run_case() {
  local np rep type types
  echo "=== $1 $2 partition=$3 $(date -u +%H:%M:%S)"
  for np in $RUN_NPS; do
    for rep in $(seq 1 "$REPS"); do
      if [ $((rep % 2)) = 1 ]; then types="aijcusparse matxtract"; else types="matxtract aijcusparse"; fi
      for type in $types; do run_one "$1" "$2" "$3" "$np" "$type" "$rep" "$4"; done
    done
  done
}

# ---- the workloads ---------------------------------------------------------------------------------------
workload_ex45() {
  build_ex45 || return
  [ -f "$LIB" ] || fail "ex45: $LIB not built: the matxtract runs cannot load it"
  run_case ex45 "grid${EX45_N}^3" - none
}
workload_ksp_solve() {
  run_case ksp_solve "$KSP_SPEC" - "$KSP_SPEC"
  if [ -z "$REAL_MATRIX" ]; then
    note "REAL_MATRIX unset: ksp_solve on a real matrix skipped"
  elif [ ! -f "$REAL_MATRIX" ]; then
    fail "ksp_solve: REAL_MATRIX=$REAL_MATRIX is no file"
  else
    run_case ksp_solve "$(basename "$REAL_MATRIX")" - "$REAL_MATRIX"
  fi
}
workload_pagerank() {
  local part
  for part in $PARTITIONS; do run_case pagerank "$PAGERANK_SPEC" "$part" "$PAGERANK_SPEC"; done
}

# ---- scaling.md: medians, speedups vs 1 GPU, matxtract vs aijcusparse ------------------------------------
summarise() {
  python3 - "$CSV" "$FAILED_TXT" "$NOTES_TXT" "$NPS" <<'PY'
import csv, statistics, sys
path, failed, notes, nps = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split()
rows = list(csv.DictReader(open(path)))
ok = [r for r in rows if r["status"] == "ok"]
order = {"ex45": 0, "ksp_solve": 1, "pagerank": 2}
cases = sorted({(r["workload"], r["matrix"], r["partition"]) for r in rows}, key=lambda c: (order.get(c[0], 9), c[1], c[2]))
med = {}
for key in {(r["workload"], r["matrix"], r["partition"], r["np"], r["type"]) for r in ok}:
    med[key] = statistics.median(float(r["time_s"]) for r in ok if (r["workload"], r["matrix"], r["partition"], r["np"], r["type"]) == key)
fmt = lambda v: "%.4g" % v if v else "-"
ratio = lambda a, b: "%.2fx" % (a / b) if a and b else "-"
gpus = lambda n: "%s GPU%s" % (n, "" if n == "1" else "s")
print("# MPI scaling: aijcusparse vs matxtract, one GPU per rank\n")
print("Median time (s) over the repetitions that succeeded (ex45: KSPSolve from -log_view; ksp_solve: `time: solve`;"
      " pagerank: `time: iterations`); speedup = the 1-GPU median / the np-GPU median; matxtract vs aijcusparse ="
      " aijcusparse's median / this type's, at the same np.\n")
for line in open(notes).read().splitlines():
    print("- " + line)
print()
head = ["workload", "matrix", "partition", "type"] + [gpus(n) + " (s)" for n in nps] + ["speedup 1->%s" % n for n in nps if n != "1"] + \
       ["vs aijcusparse @%s" % n for n in nps]
print("| " + " | ".join(head) + " |")
print("|" + " --- |" * len(head))
for w, m, p in cases:
    for ty in ("aijcusparse", "matxtract"):
        t = {n: med.get((w, m, p, n, ty)) for n in nps}
        base = {n: med.get((w, m, p, n, "aijcusparse")) for n in nps}
        cells = [w, m, p, ty] + [fmt(t[n]) for n in nps] + [ratio(t.get("1"), t[n]) for n in nps if n != "1"] + [ratio(base[n], t[n]) for n in nps]
        print("| " + " | ".join(cells) + " |")
ghosts = {}
for r in ok:
    if r["ghosts_max"]:
        ghosts.setdefault((r["matrix"], r["partition"], r["np"]), (r["ghosts_min"], r["ghosts_max"], r["ghosts_total"]))
if ghosts:
    print("\n## PageRank: ghosts per rank (the values each rank's MatMult receives)\n")
    print("| matrix | partition | np | min | max | total |")
    print("| --- | --- | --- | --- | --- | --- |")
    for (m, p, n), g in sorted(ghosts.items(), key=lambda kv: (kv[0][0], kv[0][1], int(kv[0][2]))):
        print("| %s | %s | %s | %s | %s | %s |" % ((m, p, n) + g))
first = {}
for r in ok:
    if r.get("first_mult_s"):
        first.setdefault((r["matrix"], r["partition"], r["np"], r["type"]), []).append(float(r["first_mult_s"]))
if first:
    print("\n## PageRank: the first MatMult (s, median; part of the setup, not of the times above)\n")
    print("| matrix | partition | np | type | first MatMult (s) |")
    print("| --- | --- | --- | --- | --- |")
    for (m, p, n, ty), v in sorted(first.items(), key=lambda kv: (kv[0][0], kv[0][1], int(kv[0][2]), kv[0][3])):
        print("| %s | %s | %s | %s | %s |" % (m, p, n, ty, fmt(statistics.median(v))))
lines = open(failed).read().splitlines()
if lines:
    print("\n## Failures (%d)\n" % len(lines))
    for line in lines:
        print("- " + line)
PY
}

# ---- main --------------------------------------------------------------------------------------------------
write_env "$@"
echo "workload,matrix,partition,np,type,rep,time_s,its,ghosts_min,ghosts_max,ghosts_total,first_mult_s,status,log" > "$CSV"
ngpu=$(gpu_count)
RUN_NPS=""
for np in $NPS; do
  if [ "$np" -le "$ngpu" ]; then RUN_NPS="$RUN_NPS $np"; else note "only $ngpu GPU(s): skipping np=$np"; fi
done
[ -n "$RUN_NPS" ] || fail "no rank count of NPS=\"$NPS\" fits the $ngpu GPU(s) nvidia-smi -L lists"
if [ -n "$RUN_NPS" ]; then
  for w in $WORKLOADS; do
    case $w in
      ex45 | ksp_solve | pagerank) "workload_$w" ;;
      *) fail "unknown workload $w (WORKLOADS: ex45 ksp_solve pagerank)" ;;
    esac
  done
fi
summarise > "$out/scaling.md" || fail "the summary (scaling.md)"
cat "$out/scaling.md"
exit $status
