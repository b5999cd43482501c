#!/bin/bash
# The whole SpMV benchmark of the corpus in one command (GPU host; see tuning/bench/README.md):
#   tuning/bench/run_corpus.sh [--quick] [--petsc-only] [--build DIR] [--cache DIR] [--corpus FILE]
#                              [--petsc-crux tc,tr[,tc,tr...]] [OUTDIR]
# (--petsc-only: steps 1 and 3 only, e.g. the setup study; $PBENCH_ARGS is passed to step 3, e.g.
# "-setup_reps 5")
# 1. generates tuning/gen/corpus.txt (or its quick subset) as PETSc binary files into the cache
#    (default /tmp/matxtract-corpus; $MX_CACHE), all in parallel, skipping files already there
#    (NAME.spec beside NAME.petsc holds the spec; a changed spec regenerates);
# 2. matxtract-bench: our kernels at (0,0) and given cruxes vs cuSPARSE CSR ALG1/ALG2;
# 3. matxtract-petsc-bench: MatMult aijcusparse vs matxtract through the Mat interface (VECCUDA);
# 4. plots.py: OUTDIR/spmv.csv (merged), summary.md and the PNG figures.
# OUTDIR defaults to tuning/results/<gpu> (full) or tuning/results/<gpu>/quick (--quick), <gpu> from
# nvidia-smi (e.g. h200). Exit status: 0, or 1 when a stage failed, 3 when a result was wrong.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
QUICK=0
PETSC_ONLY=0
BUILD=${BUILD:-build-gpu}
CACHE=${MX_CACHE:-/tmp/matxtract-corpus}
CORPUS=tuning/gen/corpus.txt
PCRUX=
OUTDIR=
CMD="tuning/bench/run_corpus.sh $*"
while [ $# -gt 0 ]; do
  case "$1" in
    --quick|-quick) QUICK=1 ;;
    --petsc-only) PETSC_ONLY=1 ;;
    --build) BUILD=$2; shift ;;
    --cache) CACHE=$2; shift ;;
    --corpus) CORPUS=$2; shift ;;
    --petsc-crux) PCRUX=$2; shift ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    -*) echo "run_corpus.sh: unknown option $1" >&2; exit 2 ;;
    *) OUTDIR=$1 ;;
  esac
  shift
done
BENCH=$BUILD/tuning/bench/matxtract-bench
PBENCH=$BUILD/tuning/bench/matxtract-petsc-bench
GEN=$BUILD/tuning/gen/matxtract-gen
NEEDED=("$PBENCH" "$GEN")
[ $PETSC_ONLY = 1 ] || NEEDED+=("$BENCH") # --petsc-only runs no kernel benchmark (a build without CUDA has none)
for b in "${NEEDED[@]}"; do
  [ -x "$b" ] || { echo "run_corpus.sh: $b not built (cmake --build $BUILD)" >&2; exit 1; }
done
GPU_LINE=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1)
GPU_SHORT=$(echo "${GPU_LINE%%,*}" | tr 'A-Z' 'a-z' | sed -e 's/^nvidia //' -e 's/ .*//')
[ -n "$GPU_SHORT" ] || GPU_SHORT=nogpu
if [ -z "$OUTDIR" ]; then
  OUTDIR=tuning/results/$GPU_SHORT
  [ $QUICK = 1 ] && OUTDIR=$OUTDIR/quick
fi
mkdir -p "$OUTDIR" "$CACHE"
OUTDIR=$(cd "$OUTDIR" && pwd)
LOG=$OUTDIR/run_corpus.log
: > "$LOG"
{
  echo "gpu_line=$GPU_LINE"
  echo "name=${GPU_LINE%%,*}"
  d=${GPU_LINE#*, }; echo "driver_version=${d%%,*}"
  echo "nvcc=$(nvcc --version 2>/dev/null | tail -1)"
  echo "commit=$(git rev-parse HEAD 2>/dev/null)$(git diff --quiet HEAD -- src tuning 2>/dev/null || echo ' (modified)')"
  echo "host_cpus=$(nproc)"
  echo "command=$CMD"
} > "$OUTDIR/gpu.txt"
status=0
t_all=$(date +%s)
stamp() { echo "=== $1 $(date -u +%H:%M:%S) (+$(( $(date +%s) - t_all )) s)" | tee -a "$LOG"; }
QARG=; [ $QUICK = 1 ] && QARG=-quick

# 1. corpus -> cache, in parallel (largest generators first)
stamp generate
awk -v q=$QUICK '{sub(/#.*/, "")} NF >= 2 {spec = ""; quick = 0; for (i = 2; i <= NF; i++) {if (spec == "" && $i ~ /:/) spec = $i; if ($i == "quick") quick = 1}
     if (spec != "" && (!q || quick)) {w = ($2 ~ /^(kron|chunglu)/) ? 0 : 1; print w, $1, spec}}' "$CORPUS" |
  sort -k1,1n -s | while read -r _ name spec; do
    if [ "$(cat "$CACHE/$name.spec" 2>/dev/null)" = "$spec" ] && [ -s "$CACHE/$name.petsc" ]; then continue; fi
    echo "$name $spec"
  done > "$OUTDIR/.gen.todo"
NGEN=$(wc -l < "$OUTDIR/.gen.todo")
AVAIL_GB=$(df -Pk "$CACHE" | awk 'NR == 2 {print int($4 / 1048576)}')
echo "generating $NGEN matrices into $CACHE ($AVAIL_GB GB free; the full corpus takes ~15 GB)" | tee -a "$LOG"
xargs -a "$OUTDIR/.gen.todo" -P "$(nproc)" -L 1 sh -c \
  'rm -f "$1/$3.spec"; "$2" "$4" -o "$1/$3.petsc.tmp" -format petsc >/dev/null && mv "$1/$3.petsc.tmp" "$1/$3.petsc" && echo "$4" > "$1/$3.spec" || echo "generation of $3 ($4) failed"' \
  sh "$CACHE" "$GEN" 2>&1 | tee -a "$LOG"
rm -f "$OUTDIR/.gen.todo"

# 2. kernels vs cuSPARSE
if [ $PETSC_ONLY = 0 ]; then
  stamp matxtract-bench
  "$BENCH" $QARG -corpus "$CORPUS" -cache "$CACHE" -o "$OUTDIR" 2>&1 | tee "$OUTDIR/bench_kernels.log"
  rc=${PIPESTATUS[0]}
  [ $rc = 0 ] || { echo "matxtract-bench exit $rc" | tee -a "$LOG"; status=$([ $rc = 3 ] && echo 3 || echo 1); }
fi

# 3. PETSc Mat interface: aijcusparse vs matxtract
stamp matxtract-petsc-bench
PC=; [ -n "$PCRUX" ] && PC="-crux $PCRUX"
"$PBENCH" $QARG -corpus "$CORPUS" -cache "$CACHE" -o "$OUTDIR" $PC ${PBENCH_ARGS:-} 2>&1 | tee "$OUTDIR/bench_petsc.log"
rc=${PIPESTATUS[0]}
[ $rc = 0 ] || { echo "matxtract-petsc-bench exit $rc" | tee -a "$LOG"; [ $status = 3 ] || status=$([ $rc = 3 ] && echo 3 || echo 1); }

# 4. merge, summary, figures
stamp plots
if [ $PETSC_ONLY = 1 ]; then
  echo "--petsc-only: no kernel results to plot" | tee -a "$LOG"
elif [ -s "$OUTDIR/spmv_kernels.csv" ]; then
  python3 tuning/bench/plots.py "$OUTDIR" --command "$CMD" 2>&1 | tee -a "$LOG" || status=1
else
  echo "no spmv_kernels.csv: nothing to plot" | tee -a "$LOG"; status=1
fi
stamp "done status $status"
exit $status
