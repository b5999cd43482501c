#!/bin/bash
# protocol.sh OUTDIR [BUILD_DIR] - the end-to-end protocol of docs/BENCHMARKING.md section 9 (issue 39):
# matxtract-e2e once per (case, type), aijcusparse vs default matxtract (predictor and online upgrade on,
# nothing tuned), VECCUDA vectors; setup, first batch, steady state, totals after 100/1000/3000 MatMults,
# device bytes per nonzero; then tuning/e2e/protocol_summary.py's table and the issue's criteria.
#
#   bash tuning/e2e/protocol.sh OUTDIR [BUILD_DIR]       BUILD_DIR default build-gpu (the GPU host's build of
#                                                        tuning/gpu_cycle.sh setup build)
#   E2E_CPU=1 bash tuning/e2e/protocol.sh OUTDIR build   dry run without a GPU: aij vs matxtract on the CPU,
#                                                        host vectors, smaller matrices, 1000 MatMults
#
# Cases (section 10: the values a user has): stencils with their stencil values and with @unique values,
# graphs @ones, @pagerank and @unique, every Matrix Market file of E2E_MATRICES/real with >= 80,000 nonzeros
# (counted from its header: a symmetric file's 2*entries - rows is a lower bound; bcsstk13 and pushpull) and
# every file of E2E_MATRICES/real-large (.mtx.xz, .mtx.gz or .mtx) with their own values. Matrices are generated or
# converted once (tuning/gen's matxtract-gen, in parallel, .xz/.gz decompressed first) into E2E_CACHE as PETSc
# binary files (NAME.petsc, NAME.spec beside it says what it holds) and read with -f: generation is outside
# every timed region anyway, this only saves the repeated time.
#
# Matrices folder E2E_MATRICES (real/ and real-large/ inside): default .deps/matrices when it exists, else
# ../shared/matrices beside the repository. The GPU host gets the repository without ../shared, and the whole
# upload (working tree + carried paths) is limited to 64 MiB: `bash tuning/gpu_deps.sh` copies the files
# into the git-ignored .deps/ (real-large recompressed with xz, 9.4 MB; the PETSc bundle another 10 MB);
# carry it. When the upload is still too large, carry .deps/matrices alone in a later call on the same warm
# machine (the unpacked /opt/petsc-cuda and build-gpu stay there).
#
# Each (case, type) runs in its own process (first-use costs count), E2E_REPS times (default 3; CPU 1); the order
# of the two types alternates from case to case and from repetition to repetition. Every run passes
# -device_enable eager (GPU): the CUDA context is created in PetscInitialize, outside the timed setup, for both
# types alike. Repetitions of separate calls (each within one 10-minute device command) combine:
# protocol_summary.py takes several OUTDIRs; give each call its own OUTDIR and E2E_REP0 (its first
# repetition's number, so that the type order keeps alternating).
#
# Time (H100, 2026-11-27, 22 cases): preparing the matrices ~15 s on 16 cores (more on a fresh machine), then
# ~80 s per repetition (1-3 s per run: process start, reading the matrix, setup, 3000 MatMults): the default
# 3 repetitions take ~4.5 minutes, within one 10-minute device command. On the GPU host, after
# `tuning/gpu_cycle.sh setup build` (or BUILD_TARGETS="matxtract-e2e matxtract-gen" for just these):
#   . tuning/gpu_env.sh && bash tuning/e2e/protocol.sh /tmp/e2e build-gpu
# then bring back /tmp/e2e/protocol.md, protocol.csv, e2e_protocol.csv, runs.tsv and a tarball of logs/ (the
# device tool returns at most 8 files).
# Small cases (under E2E_SMALL_NNZ nonzeros, default 2,000,000: the real matrices of 0.08-1.1M) take about a
# second per run and swing most from run to run (+-25% on an H200), and they decide the never-lose criteria:
# E2E_SMALL_REPS (default E2E_REPS) gives them more repetitions, run after the others with the numbers that
# follow (a later call's E2E_REP0 then starts after the larger of the two counts).
# Environment: E2E_CPU, E2E_REPS (3; CPU 1), E2E_SMALL_REPS, E2E_SMALL_NNZ, E2E_REP0 (1), E2E_ITS (3000; CPU 1000), E2E_ONLY / E2E_SKIP (regex on case
# names), E2E_MATRICES, E2E_CACHE (/tmp/matxtract-e2e-cache), E2E_LARGE_MAX_NNZ (real-large files above this
# many entries are left out; default none, CPU 1200000: all but G3_circuit), E2E_BUDGET_S (default 420: no run
# starts once the runs took that long; the rest is listed as skipped), E2E_TIMEOUT_S (per run, 180),
# E2E_ARGS (more options for every run, e.g. -mat_matxtract_upgrade now).
# Writes OUTDIR/e2e_protocol.csv (matxtract-e2e's rows), OUTDIR/runs.tsv (every run: rc, log), OUTDIR/logs/,
# OUTDIR/env.txt, OUTDIR/protocol.md (the summary) and OUTDIR/protocol.csv (its per-case table). Exit status 1 when a run failed (a wrong product
# included) or was skipped; the criteria's verdicts are in protocol.md.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
out=${1:?usage: protocol.sh OUTDIR [BUILD_DIR]}
build=${2:-build-gpu}
CPU=${E2E_CPU:-0}
REP0=${E2E_REP0:-1}
ONLY=${E2E_ONLY:-}
SKIP=${E2E_SKIP:-}
CACHE=${E2E_CACHE:-/tmp/matxtract-e2e-cache}
BUDGET=${E2E_BUDGET_S:-420}
SMALL_NNZ=${E2E_SMALL_NNZ:-2000000}
TIMEOUT=${E2E_TIMEOUT_S:-180}
read -ra EXTRA <<< "${E2E_ARGS:-}"
if [ -n "${E2E_MATRICES:-}" ]; then MATRICES=$E2E_MATRICES
elif [ -d .deps/matrices ]; then MATRICES=$ROOT/.deps/matrices
else MATRICES=$ROOT/../shared/matrices; fi
BIN=$build/tuning/e2e/matxtract-e2e
GEN=$build/tuning/gen/matxtract-gen
for b in "$BIN" "$GEN"; do
  [ -x "$b" ] || { echo "protocol.sh: $b not built (cmake --build $build)" >&2; exit 1; }
done
mkdir -p "$out/logs" "$CACHE"
out=$(cd "$out" && pwd)
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")

# name | generator spec | values label
if [ "$CPU" = 1 ]; then
  BASE=aij
  RUNARGS=(-cpu)
  ITS=${E2E_ITS:-1000}
  REPS=${E2E_REPS:-1}
  SMALL_REPS=${E2E_SMALL_REPS:-$REPS}
  LARGE_MAX=${E2E_LARGE_MAX_NNZ:-1200000}
  GENERATED="lap2d_300 lap2d:300 stencil
lap2d_300_unique lap2d:300@unique unique
lap3d_40 lap3d:40 stencil
lap3d_40_unique lap3d:40@unique unique
kron15_ones kron:15:16@ones ones
kron15_pagerank kron:15:16@pagerank pagerank
kron15_unique kron:15:16@unique unique
chunglu100k_pagerank chunglu:100000:16:2.1@pagerank pagerank
rgg15_unique rgg:15@unique unique"
else
  BASE=aijcusparse
  RUNARGS=(-device_enable eager)
  ITS=${E2E_ITS:-3000}
  REPS=${E2E_REPS:-3}
  SMALL_REPS=${E2E_SMALL_REPS:-$REPS}
  LARGE_MAX=${E2E_LARGE_MAX_NNZ:-}
  [ -f tuning/gpu_env.sh ] && . tuning/gpu_env.sh # PETSC_OPTIONS -use_gpu_aware_mpi 0 (the host's MPI is not CUDA-aware)
  GENERATED="lap2d_2000 lap2d:2000 stencil
lap2d_2000_unique lap2d:2000@unique unique
lap3d_150 lap3d:150 stencil
lap3d_150_unique lap3d:150@unique unique
lap3d_100 lap3d:100 stencil
lap3d_100_unique lap3d:100@unique unique
kron20_ones kron:20:16@ones ones
kron20_pagerank kron:20:16@pagerank pagerank
kron20_unique kron:20:16@unique unique
chunglu2m_ones chunglu:2000000:16:2.1@ones ones
chunglu2m_pagerank chunglu:2000000:16:2.1@pagerank pagerank
chunglu2m_unique chunglu:2000000:16:2.1@unique unique
rgg20_ones rgg:20@ones ones
rgg20_pagerank rgg:20@pagerank pagerank
rgg20_unique rgg:20@unique unique"
fi

# a Matrix Market header's lower bound on the nonzeros (symmetric: 2*entries - rows); "" for array files
mtx_nnz() {
  local cat=cat
  case $1 in *.gz) cat="gzip -dc" ;; *.xz) cat="xz -dc" ;; esac
  $cat "$1" 2> /dev/null | awk 'NR == 1 { sym = ($0 ~ /symmetric|hermitian/) ; next }
                                  /^%/ { next }
                                  { if (NF == 3) print (sym ? 2 * $3 - $1 : $3); exit }'
}
# name | mtx:PATH (PATH may end in .gz or .xz) | own
REAL=""
for f in "$MATRICES"/real/*.mtx "$MATRICES"/real-large/*.mtx "$MATRICES"/real-large/*.mtx.gz "$MATRICES"/real-large/*.mtx.xz; do
  [ -f "$f" ] || continue
  n=$(mtx_nnz "$f")
  [ -n "$n" ] || continue
  case $f in */real/*) [ "$n" -ge 80000 ] || continue ;; *) [ -z "$LARGE_MAX" ] || [ "$n" -le "$LARGE_MAX" ] || continue ;; esac
  name=$(basename "$f"); name=${name%.gz}; name=${name%.xz}; name=${name%.mtx}
  REAL+=$'\n'"$name mtx:$f own"
done
[ -n "$REAL" ] || echo "protocol.sh: no real matrices found under $MATRICES (E2E_MATRICES)" >&2
CASES=$(printf '%s%s\n' "$GENERATED" "$REAL" | awk 'NF == 3')
[ -n "$ONLY" ] && CASES=$(echo "$CASES" | awk -v re="$ONLY" '$1 ~ re')
[ -n "$SKIP" ] && CASES=$(echo "$CASES" | awk -v re="$SKIP" '$1 !~ re')
[ -n "$CASES" ] || { echo "protocol.sh: no case left (E2E_ONLY=$ONLY E2E_SKIP=$SKIP)" >&2; exit 1; }

{
  echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "command=E2E_CPU=$CPU E2E_REPS=$REPS E2E_SMALL_REPS=$SMALL_REPS E2E_SMALL_NNZ=$SMALL_NNZ E2E_REP0=$REP0 E2E_ITS=$ITS${ONLY:+ E2E_ONLY=$ONLY}${SKIP:+ E2E_SKIP=$SKIP}${E2E_ARGS:+ E2E_ARGS=\"$E2E_ARGS\"} bash tuning/e2e/protocol.sh $*"
  echo "mode=$([ "$CPU" = 1 ] && echo cpu || echo gpu)"
  echo "base_type=$BASE"
  echo "gpu=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2> /dev/null | head -1)"
  echo "nvcc=$(nvcc --version 2> /dev/null | tail -1)"
  echo "petsc=$(pkg-config --modversion PETSc 2> /dev/null || pkg-config --modversion petsc 2> /dev/null)"
  echo "petsc_options=${PETSC_OPTIONS:-}"
  echo "commit=$(git rev-parse HEAD 2> /dev/null)$(git diff --quiet HEAD -- src tuning/e2e 2> /dev/null || echo ' (modified)')"
  echo "matrices=$MATRICES"
  echo "host_cpus=$(nproc)"
  echo "cases=$(echo "$CASES" | wc -l)"
} > "$out/env.txt"

t_all=$(date +%s)
stamp() { echo "=== $1 $(date -u +%H:%M:%S) (+$(($(date +%s) - t_all)) s)"; }

# 1. every case -> CACHE/NAME.petsc once (NAME.spec holds what it was made from); .gz/.xz decompressed first
stamp "prepare $(echo "$CASES" | wc -l) matrices in $CACHE"
prepare() { # cache gen name spec
  local cache=$1 gen=$2 name=$3 spec=$4 src
  rm -f "$cache/$name.spec"
  case $spec in
    mtx:*.gz) src=$cache/$name.tmp.mtx; gzip -dc "${spec#mtx:}" > "$src" || return 1; src=mtx:$src ;;
    mtx:*.xz) src=$cache/$name.tmp.mtx; xz -dc "${spec#mtx:}" > "$src" || return 1; src=mtx:$src ;;
    *) src=$spec ;;
  esac
  "$gen" "$src" -o "$cache/$name.petsc.tmp" -format petsc > /dev/null && mv "$cache/$name.petsc.tmp" "$cache/$name.petsc" &&
    echo "$spec" > "$cache/$name.spec"
  local rc=$?
  rm -f "$cache/$name.tmp.mtx"
  [ $rc = 0 ] || echo "preparing $name ($spec) failed" >&2
}
export -f prepare
echo "$CASES" | while read -r name spec _; do
  if [ "$(cat "$CACHE/$name.spec" 2> /dev/null)" = "$spec" ] && [ -s "$CACHE/$name.petsc" ]; then continue; fi
  echo "$name $spec"
done | xargs -r -P "$(nproc)" -L 1 bash -c 'prepare "$0" "$1" "$2" "$3"' "$CACHE" "$GEN"

# 2. the runs: one process per (case, type, repetition); logs/NAME_TYPE_rREP.log; runs.tsv indexes them
csv=$out/e2e_protocol.csv
runs=$out/runs.tsv
[ -f "$runs" ] || printf 'case\ttype\trep\trc\tseconds\tlog\n' > "$runs"
status=0
t_runs=$(date +%s)
run_one() { # name spec values type rep
  local name=$1 spec=$2 values=$3 type=$4 rep=$5 log rc t0
  log=logs/${name}_${type}_r${rep}.log
  if [ $(($(date +%s) - t_runs)) -ge "$BUDGET" ]; then
    printf '%s\t%s\t%s\tskipped\t0\t\n' "$name" "$type" "$rep" >> "$runs"
    status=1
    return
  fi
  local cmd=("$BIN" -f "$CACHE/$name.petsc" -name "$name" -source "${spec#mtx:"$MATRICES"/}" -values "$values" -type "$type" -its "$ITS"
             -o "$csv" "${RUNARGS[@]}" "${EXTRA[@]}")
  echo "+ ${cmd[*]}" > "$out/$log"
  t0=$(date +%s%N)
  timeout "$TIMEOUT" "${cmd[@]}" >> "$out/$log" 2>&1
  rc=$?
  [ $rc = 0 ] || { echo "FAILED (rc $rc): $name $type (log $out/$log)"; status=1; }
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$type" "$rep" "$rc" "$(awk -v ms=$((($(date +%s%N) - t0) / 1000000)) 'BEGIN { printf "%.1f", ms / 1000 }')" "$log" >> "$runs"
  grep -h "^e2e: setup\|^e2e: total" "$out/$log" | sed "s/^e2e:/  $name $type:/"
}
# small: the case's PETSc binary file holds under E2E_SMALL_NNZ nonzeros (12 bytes each, about)
is_small() { [ "$(stat -c %s "$CACHE/$1.petsc" 2> /dev/null || echo 0)" -lt $((12 * SMALL_NNZ)) ]; }
for rep in $(seq "$REP0" $((REP0 + (SMALL_REPS > REPS ? SMALL_REPS : REPS) - 1))); do
  stamp "repetition $rep$([ $((rep - REP0)) -ge "$REPS" ] && echo " (small cases only)")"
  i=0
  while read -r name spec values; do
    [ -s "$CACHE/$name.petsc" ] || { echo "no $CACHE/$name.petsc: $name skipped"; status=1; continue; }
    if [ $((rep - REP0)) -ge "$REPS" ] && ! is_small "$name"; then continue; fi
    if [ $(((i + rep) % 2)) = 1 ]; then types="$BASE matxtract"; else types="matxtract $BASE"; fi
    for type in $types; do run_one "$name" "$spec" "$values" "$type" "$rep"; done
    i=$((i + 1))
  done <<< "$CASES"
done
echo "runs_s=$(($(date +%s) - t_runs))" >> "$out/env.txt"
grep -q "skipped" "$runs" && echo "time budget E2E_BUDGET_S=$BUDGET s spent: $(grep -c skipped "$runs") run(s) skipped (runs.tsv)"

stamp summarise
python3 "$(dirname "$0")/protocol_summary.py" -o "$out/protocol.md" "$out" || status=1
stamp finished
exit $status
