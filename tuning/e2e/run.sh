#!/bin/bash
# run.sh OUTDIR [BUILD_DIR] - the end-to-end study of issue 11: the examples PageRank (power method) and
# ksp_solve (CG, no preconditioner) at exactly N iterations (N = 20, 100, 1000), default matxtract
# (predictor and online upgrade on, nothing tuned) against aijcusparse, vectors on the GPU.
#
#   bash tuning/e2e/run.sh OUTDIR [BUILD_DIR]      BUILD_DIR default build-gpu (GPU host: after
#                                                  tuning/gpu_cycle.sh setup build; or: gpu_cycle.sh e2e)
#   E2E_CPU=1 bash tuning/e2e/run.sh OUTDIR build  dry run without a GPU: aij vs matxtract, host vectors,
#                                                  small matrices
#
# Per run, from the examples' own "time:" lines (wall clock after a barrier; tuning/e2e/summarise.py):
#   setup_s = what the Mat type costs before the iterations: MatConvert from the AIJ matrix + the first
#             MatMult (which builds/uploads lazily: aijcusparse's copy to the GPU, matxtract's build),
#             + KSPSetUp for ksp_solve; solve_s = the N iterations (an online upgrade happens in there);
#   total_s = setup_s + solve_s. Reading the file and building the AIJ matrix (identical for both
#   types) are recorded apart (input_s); app_total_s is the example's own total, which includes them.
# Each (matrix, example, type, N) runs E2E_REPS times (default 3; median per column), types in
# alternating order. The matrices are generated once (tuning/gen's matxtract-gen, in parallel) into
# E2E_CACHE (default $MX_CACHE or /tmp/matxtract-corpus, shared with tuning/bench/run_corpus.sh: NAME.spec
# beside NAME.petsc holds the spec) and read with -f. PageRank runs with -pagerank_tol 0 (never stops
# early) and CG with -ksp_norm_type none (no convergence test), so both do exactly N iterations (the
# summary checks it). Every run has -info :mat (matxtract's predict/upgrade/guard decisions) and
# prints the plan it ended on ("matxtract: plan after ..."); -device_enable eager creates the CUDA
# context at PetscInitialize, outside every timed region, for both types. After the timed runs, one
# untimed run per (matrix, type) at N = 100 with -log_view and the matrix viewed ::ascii_info_detail
# (logs/*_profile.log; E2E_PROFILE=0 skips them).
#
# Writes OUTDIR/e2e.csv (one row per matrix, example, type, N: medians), OUTDIR/e2e_runs.csv (every
# run), OUTDIR/e2e.md (tables + the issue's PageRank criterion), OUTDIR/env.txt, OUTDIR/logs/.
# Environment: E2E_REPS, E2E_ITS ("20 100 1000"), E2E_ONLY (regex on matrix names), E2E_CACHE,
# E2E_MPIEXEC (prefix, e.g. "mpiexec -n 1"; default: run directly), E2E_BUDGET_S (default 270: no new
# repetition starts once the timed runs took that long; the first repetition always completes),
# E2E_TIMEOUT_S (per run, default 300). Exit status: 0, or 1 when a run failed or did not make exactly
# N iterations.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
out=${1:?usage: run.sh OUTDIR [BUILD_DIR]}
build=${2:-build-gpu}
CPU=${E2E_CPU:-0}
REPS=${E2E_REPS:-3}
ITS=${E2E_ITS:-20 100 1000}
ONLY=${E2E_ONLY:-}
CACHE=${E2E_CACHE:-${MX_CACHE:-/tmp/matxtract-corpus}}
MPIEXEC=${E2E_MPIEXEC:-}
BUDGET=${E2E_BUDGET_S:-270}
TIMEOUT=${E2E_TIMEOUT_S:-300}
PROFILE=${E2E_PROFILE:-1}
PAGERANK=$build/examples/pagerank/pagerank
KSPSOLVE=$build/examples/ksp_solve/ksp_solve
GEN=$build/tuning/gen/matxtract-gen
for b in "$PAGERANK" "$KSPSOLVE" "$GEN"; do
  [ -x "$b" ] || { echo "run.sh: $b not built (cmake --build $build)" >&2; exit 1; }
done
mkdir -p "$out/logs" "$CACHE"
out=$(cd "$out" && pwd)

# name | generator spec | example (pagerank: power method; cg: ksp_solve with CG)
if [ "$CPU" = 1 ]; then
  BASE=aij
  VEC=()
  CASES="kron16 kron:16:16 pagerank
rgg16 rgg:16 pagerank
lap3d_40 lap3d:40 cg"
else
  BASE=aijcusparse
  VEC=(-vec_type cuda -device_enable eager)
  CASES="kron20 kron:20:16 pagerank
kron21 kron:21:16 pagerank
chunglu2m chunglu:2000000:16:2.1 pagerank
rgg20 rgg:20 pagerank
lap3d_100 lap3d:100 cg
lap3d_150 lap3d:150 cg"
fi
[ -n "$ONLY" ] && CASES=$(echo "$CASES" | awk -v re="$ONLY" '$1 ~ re')
[ -n "$CASES" ] || { echo "run.sh: no matrix matches E2E_ONLY=$ONLY" >&2; exit 1; }

{
  echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "command=E2E_CPU=$CPU E2E_REPS=$REPS E2E_ITS=\"$ITS\"${ONLY:+ E2E_ONLY=$ONLY} bash tuning/e2e/run.sh $*"
  echo "mode=$([ "$CPU" = 1 ] && echo cpu || echo gpu)"
  echo "base_type=$BASE"
  echo "gpu=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1)"
  echo "nvcc=$(nvcc --version 2>/dev/null | tail -1)"
  echo "petsc=$(pkg-config --modversion PETSc 2>/dev/null || pkg-config --modversion petsc 2>/dev/null)"
  echo "petsc_options=${PETSC_OPTIONS:-}"
  echo "commit=$(git rev-parse HEAD 2>/dev/null)$(git diff --quiet HEAD -- src examples tuning 2>/dev/null || echo ' (modified)')"
  echo "host_cpus=$(nproc)"
  echo "reps=$REPS"
  echo "iterations=$ITS"
} > "$out/env.txt"

t_all=$(date +%s)
stamp() { echo "=== $1 $(date -u +%H:%M:%S) (+$(( $(date +%s) - t_all )) s)"; }

# 1. matrices -> cache (PETSc binary), in parallel, skipping those already there with the same spec
stamp generate
echo "$CASES" | while read -r name spec _; do
  if [ "$(cat "$CACHE/$name.spec" 2>/dev/null)" = "$spec" ] && [ -s "$CACHE/$name.petsc" ]; then continue; fi
  echo "$name $spec"
done | xargs -r -P "$(nproc)" -L 1 sh -c \
  'rm -f "$1/$3.spec"; "$2" "$4" -o "$1/$3.petsc.tmp" -format petsc >/dev/null && mv "$1/$3.petsc.tmp" "$1/$3.petsc" && echo "$4" > "$1/$3.spec" || echo "generation of $3 ($4) failed" >&2' \
  sh "$CACHE" "$GEN"

# 2. the runs. One command line per (case, type, N); logs/NAME_TYPE_N_rREP.log; runs.tsv indexes them.
command_for() { # name example type N -> the command in CMD (array)
  local name=$1 ex=$2 type=$3 n=$4
  CMD=($MPIEXEC)
  if [ "$ex" = pagerank ]; then
    CMD+=("$PAGERANK" -f "$CACHE/$name.petsc" -mat_type "$type" "${VEC[@]}" -pagerank_tol 0 -pagerank_max_it "$n" -pagerank_top 0)
  else
    CMD+=("$KSPSOLVE" -f "$CACHE/$name.petsc" -convert -mat_type "$type" "${VEC[@]}" -ksp_type cg -pc_type none
          -ksp_norm_type none -ksp_rtol 1e-300 -ksp_atol 0 -ksp_max_it "$n" -rhs ones)
  fi
  CMD+=(-info :mat)
}
runs=$out/runs.tsv
printf 'matrix\texample\tmat_type\titerations\trep\trc\tlog\n' > "$runs"
status=0
run_one() { # name spec example type N rep
  local name=$1 ex=$3 type=$4 n=$5 rep=$6 log rc
  log=logs/${name}_${type}_${n}_r${rep}.log
  command_for "$name" "$ex" "$type" "$n"
  echo "+ ${CMD[*]}" > "$out/$log"
  timeout "$TIMEOUT" "${CMD[@]}" >> "$out/$log" 2>&1
  rc=$?
  [ $rc = 0 ] || { echo "FAILED (rc $rc): ${CMD[*]} (log $out/$log)"; status=1; }
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$ex" "$type" "$n" "$rep" "$rc" "$log" >> "$runs"
}
t_runs=$(date +%s)
for rep in $(seq 1 "$REPS"); do
  if [ "$rep" -gt 1 ] && [ $(( $(date +%s) - t_runs )) -ge "$BUDGET" ]; then
    echo "time budget E2E_BUDGET_S=$BUDGET s reached after $((rep - 1)) repetition(s): no more repetitions"
    break
  fi
  stamp "repetition $rep of $REPS"
  # alternate the order of the two types between repetitions (page cache, clocks)
  if [ $((rep % 2)) = 1 ]; then types="$BASE matxtract"; else types="matxtract $BASE"; fi
  while read -r name spec ex; do
    [ -s "$CACHE/$name.petsc" ] || { echo "no $CACHE/$name.petsc: $name skipped"; status=1; continue; }
    for n in $ITS; do
      for type in $types; do run_one "$name" "$spec" "$ex" "$type" "$n" "$rep"; done
    done
  done <<< "$CASES"
done
t_timed=$(( $(date +%s) - t_runs ))

# 3. one untimed profile run per (case, type): -log_view and the matrix ::ascii_info_detail (the plan in full)
if [ "$PROFILE" = 1 ]; then
  stamp profile
  while read -r name spec ex; do
    [ -s "$CACHE/$name.petsc" ] || continue
    for type in $BASE matxtract; do
      command_for "$name" "$ex" "$type" 100
      if [ "$ex" = pagerank ]; then CMD+=(-pagerank_view_mat ::ascii_info_detail); else CMD+=(-ksp_view_mat ::ascii_info_detail); fi
      CMD+=(-log_view)
      echo "+ ${CMD[*]}" > "$out/logs/${name}_${type}_profile.log"
      timeout "$TIMEOUT" "${CMD[@]}" >> "$out/logs/${name}_${type}_profile.log" 2>&1 || echo "profile run failed: $name $type"
    done
  done <<< "$CASES"
fi

stamp summarise
echo "timed_runs_s=$t_timed" >> "$out/env.txt"
python3 "$(dirname "$0")/summarise.py" "$out" || status=1
stamp done
exit $status
