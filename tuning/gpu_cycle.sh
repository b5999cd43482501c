#!/bin/bash
# The whole GPU cycle on the GPU host, in one command (see ../shared/docs/GPU-HOST.md):
#   tuning/gpu_cycle.sh [STAGE ...]     stages: setup build test sanitize tutorials bench amortize e2e scaling profile compress setupstudy predcost featprof trace measure labels hubsplit issue39 issue42 issue43 regret model pack
#                                       (default: setup build test sanitize bench amortize pack)
# setup unpacks the PETSc 3.22+CUDA bundle from .deps/ into /opt/petsc-cuda; build configures and
# builds this tree in build-gpu/ (sm_90; BUILD_TARGETS limits the targets); test runs the ctest labels gpu, petsc, mpi and unit;
# tutorials runs PETSc's SNES ex19 and KSP ex45 (GAMG, MG) with aijcusparse and matxtract on device
# vectors (tests/gpu_tutorials.sh; the sources from the carried .petsc-examples/ or TUTORIALS_DIR);
# sanitize runs the ctest label sanitize (compute-sanitizer memcheck + racecheck on the gpu tests;
# SANITIZE_REGEX limits them, e.g. test_cuda_build);
# bench runs the harness (tuning/bench/run_corpus.sh; quick subset unless BENCH_ARGS is set, e.g.
# BENCH_ARGS= for the whole corpus); amortize runs tuning/amortization/run.sh; e2e runs tuning/e2e/run.sh
# (PageRank and CG end to end at 20/100/1000 iterations, default matxtract vs aijcusparse; < 5 min; not
# in the default list: `gpu_cycle.sh e2e pack` after setup build, E2E_* variables in its header); scaling runs
# tuning/mpi/scaling.sh (ex45, ksp_solve and PageRank, aijcusparse vs matxtract on 1/2/4 GPUs, as many as
# nvidia-smi lists; ex45.c from EX45_DIR, default the tutorials' folder; its variables in its header); profile runs tuning/profile/ncu_cold.sh (Nsight Compute counters
# of the cold kernels vs cuSPARSE; PROFILE_SPECS picks the matrices); pack tars every result folder into $OUT/results.tgz (the
# device tool brings back at most 8 files).
# hubsplit: see stage_hubsplit; regret (issue 42's predictor criterion): see stage_regret.
# compress runs tuning/bench/cold_pack_run.sh (issue 13: the packed cold CSR vs the plain segment kernel vs
# cuSPARSE ALG1/ALG2, bytes per nonzero, bitwise check; not in the default list: `gpu_cycle.sh compress pack`
# after setup build; COMPRESS_SPECS picks the matrices, e.g. "lap3d:100 kron:18:16@pagerank").
# trace runs matxtract-petsc-bench with MX_TRACE_SETUP=1 (each setup step's time) on TRACE_SPEC (default
# lap2d:3000) at cruxes (0,0) and (1,1); TRACE_CRUX="" traces the default plan (prediction included),
# TRACE_ARGS adds options (e.g. -info :mat). measure times the predicted plan of every held-out test matrix
# (labels.py --plans PRED_PLANS, default the embedded model's predictions.json, see model;
# MEASURE_MAX_NNZ limits the matrices) for tuning/predictor/report.py. model prints the committed train/
# folder the model compiled into the library was exported from (embedded_train).
# Logs go to $OUT/logs (one per stage), results to $OUT/<stage>; pack turns them into one tarball.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT/logs"
STAGES=${*:-setup build test sanitize bench amortize pack}
. tuning/gpu_env.sh
status=0

stage_setup() {
  [ -f /opt/petsc-cuda/lib/pkgconfig/PETSc.pc ] || cat .deps/petsc-cuda.tar.xz.part* | xz -d | tar x -C /opt
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  nvcc --version | tail -1
  pkg-config --modversion PETSc
}
stage_build() {
  # MATXTRACT_PTXAS_REPORT: ptxas -v prints every kernel's registers/spills ("Used N registers") into the log
  cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DMATXTRACT_PTXAS_REPORT=ON \
    -DMX_MATRICES_DIR="$PWD/tests/data/matrices" &&
  local rc
  cmake --build build-gpu -j"$(nproc)" --target ${BUILD_TARGETS:-all} > "$OUT/logs/ptxas.log" 2>&1
  rc=$?
  grep -E "error|warning|spill|Used" "$OUT/logs/ptxas.log" | head -100
  return $rc
}
stage_test() { ctest --test-dir build-gpu -L "${TEST_LABELS:-gpu|petsc|unit|mpi}" --output-on-failure -j4; }
# (SANITIZE_BUDGET_S: the stage's whole time, default 400 s, then it stops and fails: the racecheck of
# test_cuda_cold_pack ran > 6 minutes on an H100 and took a whole device call; each test's own TIMEOUT is 1200 s)
stage_sanitize() { timeout "${SANITIZE_BUDGET_S:-400}" ctest --test-dir build-gpu -L sanitize ${SANITIZE_REGEX:+-R "$SANITIZE_REGEX"} --output-on-failure; }
stage_tutorials() { bash tests/gpu_tutorials.sh "${TUTORIALS_DIR:-.petsc-examples}" build-gpu "$OUT/tutorials"; }
stage_bench() { bash tuning/bench/run_corpus.sh ${BENCH_ARGS---quick} "$OUT/bench"; }
stage_amortize() { bash tuning/amortization/run.sh "$OUT/amortization" build-gpu; }
stage_e2e() { bash tuning/e2e/run.sh "$OUT/e2e" build-gpu; }
stage_scaling() { EX45_DIR=${EX45_DIR:-${TUTORIALS_DIR:-.petsc-examples}} bash tuning/mpi/scaling.sh "$OUT/scaling" build-gpu; }
stage_profile() { bash tuning/profile/ncu_cold.sh "$OUT/profile" ${PROFILE_SPECS:-}; }
# setupstudy: issue 12's setup study on the whole corpus (PETSc level, cruxes (0,0), (0.7,0.5), (1,1),
# SETUP_REPS interleaved conversions, default 5) and its table (tuning/bench/setup_table.py)
stage_setupstudy() {
  PBENCH_ARGS="-setup_reps ${SETUP_REPS:-5} -settle_max 300 -reps 60" bash tuning/bench/run_corpus.sh --petsc-only \
    --petsc-crux 0.7,0.5,1,1 "$OUT/setupstudy" &&
    python3 tuning/bench/setup_table.py "$OUT/setupstudy/spmv_petsc.csv" > "$OUT/setupstudy/table.md" && tail -3 "$OUT/setupstudy/table.md"
}
# predcost: issue 11's features + prediction cost on the same corpus (every conversion predicts at
# once: -mat_matxtract_expected_mults 1000000; predict_ms vs aijcusparse's setup_ms in table.md's last
# section), then each feature pass's time (MX_TRACE_SETUP=1) on PREDCOST_TRACE_SPECS; ~3 minutes
stage_predcost() {
  PBENCH_ARGS="-setup_reps 3 -settle_max 300 -reps 20 -mat_matxtract_expected_mults 1000000" bash tuning/bench/run_corpus.sh \
    --petsc-only "$OUT/predcost" &&
    python3 tuning/bench/setup_table.py "$OUT/predcost/spmv_petsc.csv" > "$OUT/predcost/table.md" && tail -1 "$OUT/predcost/table.md" &&
    for spec in ${PREDCOST_TRACE_SPECS:-kron:16:16 rgg:18 bipartite:100000:4000000:32 chunglu:1000000:16:2.1 kron:20:16}; do
      echo "== $spec"
      MX_TRACE_SETUP=1 build-gpu/tuning/bench/matxtract-petsc-bench -gen "$spec" -reps 5 -setup_reps 3 \
        -mat_matxtract_expected_mults 1000000 -o "$OUT/predcost/trace" 2>&1 | grep "features"
    done > "$OUT/predcost/trace.txt"
}
# featprof: each feature pass's GPU time (Nsight Compute's gpu__time_duration, kernels serialised),
# predict_ms without tracing (-setup_reps 5, -info) and each step's host time (MX_TRACE_SETUP=host) on
# FEATPROF_SPECS (default: predcost's two smallest), and what cudaMalloc + cudaFree cost per size
# (matxtract-pool-first-use sizes)
stage_featprof() {
  local re="row_pass|length_hist|hist_pairs|group_distinct|big_groups|long_rows|iota|invert|RadixSort|Histogram|Onesweep|Scan"
  mkdir -p "$OUT/featprof" && build-gpu/tuning/bench/matxtract-pool-first-use sizes | tee "$OUT/featprof/sizes.txt" &&
    for spec in ${FEATPROF_SPECS:-kron:16:16 bipartite:100000:4000000:32}; do
      name=$(echo "$spec" | tr ':' '_')
      build-gpu/tuning/bench/matxtract-petsc-bench -gen "$spec" -reps 5 -setup_reps 5 -mat_matxtract_expected_mults 1000000 \
        -info :mat -o "$OUT/featprof/$name" 2>&1 | grep -E "prediction took|^[a-z]" > "$OUT/featprof/$name.log"
      MX_TRACE_SETUP=host build-gpu/tuning/bench/matxtract-petsc-bench -gen "$spec" -reps 5 -setup_reps 5 \
        -mat_matxtract_expected_mults 1000000 -info :mat -o "$OUT/featprof/$name-host" 2>&1 | grep -E "features|prediction took" |
        sed 's/.*features (on the GPU) + prediction //; s/mx_trace_setup: //' > "$OUT/featprof/$name-host.txt"
      timeout 240 ncu --clock-control none --cache-control none --csv --page raw --metrics gpu__time_duration.sum \
        --kernel-name-base demangled -k regex:"$re" build-gpu/tuning/bench/matxtract-petsc-bench -gen "$spec" -reps 2 -setup_reps 2 \
        -mat_matxtract_expected_mults 1000000 -o /tmp/featprof-$name > "$OUT/featprof/$name-ncu.csv" 2> "$OUT/featprof/$name-ncu.err"
      echo "$spec: ncu status $?, $(grep -c '^"[0-9]' "$OUT/featprof/$name-ncu.csv") kernels"
    done
}
stage_trace() {
  mkdir -p "$OUT/trace" &&
    MX_TRACE_SETUP=1 build-gpu/tuning/bench/matxtract-petsc-bench -gen "${TRACE_SPEC:-lap2d:3000}" ${TRACE_CRUX--crux 0,0,1,1} -reps 20 \
      -setup_reps 2 ${TRACE_ARGS:-} -o "$OUT/trace" 2>&1 | tee "$OUT/trace/trace.log"
}
# embedded_train: the committed train/ folder (predictions.json, train_summary.json) of the model
# compiled into the library, the newest tuning/results/*/predictor-*/train whose trained_on is the
# trained_on line of src/core/mx_model_default.c; fails where no committed folder says it
embedded_train() {
  local line f found=
  line=$(sed -n 's/^ \* trained_on: //p' src/core/mx_model_default.c | head -1)
  [ -n "$line" ] || { echo "embedded_train: no trained_on line in src/core/mx_model_default.c" >&2; return 1; }
  for f in $(ls -d tuning/results/*/predictor-*/train 2>/dev/null | sort -t/ -k4); do
    python3 -c 'import json, sys; sys.exit(json.load(open(sys.argv[1]))["trained_on"] != sys.argv[2])' \
      "$f/train_summary.json" "$line" 2>/dev/null && found=$f
  done
  [ -n "$found" ] || { echo "embedded_train: no tuning/results/*/predictor-*/train/train_summary.json says trained_on: $line" >&2; return 1; }
  echo "$found"
}
stage_model() { embedded_train; }
stage_measure() {
  local plans=${PRED_PLANS:-}
  [ -n "$plans" ] || plans=$(embedded_train)/predictions.json || return 1
  mkdir -p "$OUT/measure" && echo "plans: $plans" > "$OUT/measure/plans.txt" &&
    python3 tuning/predictor/labels.py -o "$OUT/measure" --build build-gpu --split test --plans "$plans" \
      ${MEASURE_MAX_NNZ:+--max-nnz $MEASURE_MAX_NNZ} && rm -rf "$OUT/measure/cache"
}
# labels: the predictor's BO labels (labels.py) of the corpus into $OUT/labels/labels.jsonl, resumable
# across device calls: LABELS_FROM is the labels.jsonl of an earlier call (its matrices are skipped),
# LABELS_BUDGET_S stops labels.py in time (default 400 s: the matrix in progress is redone next call),
# LABELS_ARGS its options (default: the corpus up to 50M nonzeros, budget 8, 3 repeats).
stage_labels() {
  local rc
  mkdir -p "$OUT/labels" && { [ -z "${LABELS_FROM:-}" ] || cp "$LABELS_FROM" "$OUT/labels/labels.jsonl"; } || return 1
  timeout "${LABELS_BUDGET_S:-400}" python3 tuning/predictor/labels.py -o "$OUT/labels" --build build-gpu \
    ${LABELS_ARGS:---max-nnz 50000000 --budget 8 --repeats 3}
  rc=$?
  rm -rf "$OUT/labels/cache"
  echo "labels: $(grep -c . "$OUT/labels/labels.jsonl" 2>/dev/null || echo 0) matrices in $OUT/labels/labels.jsonl"
  return $rc
}
# hubsplit runs hub-split-bench (issue 13: the hub split vs the whole matrix vs cuSPARSE) with -K HUB_K
# (default 28000) on HUB_SPECS (default: the power-law corpus families and two controls), one matrix at
# a time until HUB_BUDGET_S (default 420 s) is spent; the log in $OUT/hubsplit/bench.log
stage_hubsplit() {
  local t0=$SECONDS specs=${HUB_SPECS:-"kron:21:16 chunglu:2000000:16:2.1 kron:20:4 chunglu-dir:2000000:4:2.1 chunglu:1000000:16:2.1 chunglu:500000:24:2.3 chunglu:500000:8:2.3 kron:19:16 kron:18:24 kron:17:32 kron:16:16 chunglu:200000:16:2.1 chunglu:1000000:32:2.5 chunglu:2000000:4:2.5 chunglu:3000000:16:2.5 chunglu:500000:24:2.7 chunglu:2000000:16:3 blockdense:1000000:20:256 rand:4000000:4 rgg:20"}
  mkdir -p "$OUT/hubsplit"
  for spec in $specs; do
    [ $((SECONDS - t0)) -lt "${HUB_BUDGET_S:-420}" ] || { echo "budget spent before $spec"; break; }
    build-gpu/tuning/bench/hub-split-bench -K "${HUB_K:-28000}" "$spec" || echo "FAILED $spec"
  done 2>&1 | tee "$OUT/hubsplit/bench.log" | grep -E "vs best|hub part [0-9]|nnz$|FAILED|budget"
}
stage_compress() { bash tuning/bench/cold_pack_run.sh "$OUT/compress" build-gpu ${COMPRESS_SPECS:-}; }
# issue39 / issue42 / issue43: the measurements each issue is judged by (docs/developing.md, "Issues 39,
# 42 and 43 are judged on an H100"), after setup build; each fits one device call. The real matrices
# come from .deps/matrices (tuning/gpu_deps.sh puts them there); real_large
# decompresses real-large/*.mtx.xz (gpu_deps.sh's) or *.mtx.gz once into MX_REAL_LARGE_DIR (default
# /tmp/mx-real-large) and prints "-f FILE" for each.
real_large() {
  local d=${MX_REAL_LARGE_DIR:-/tmp/mx-real-large} f m n=0
  mkdir -p "$d"
  for f in "${E2E_MATRICES:-.deps/matrices}"/real-large/*.mtx.{xz,gz}; do
    [ -f "$f" ] || continue
    m=$d/$(basename "${f%.*}")
    [ -s "$m" ] || { { case $f in *.xz) xz -dc "$f" ;; *) gzip -dc "$f" ;; esac > "$m.tmp"; } && mv "$m.tmp" "$m"; } || return 1
    printf -- '-f %s ' "$m"
    n=$((n + 1))
  done
  [ $n -gt 0 ] || { echo "real_large: no ${E2E_MATRICES:-.deps/matrices}/real-large/*.mtx.xz or .mtx.gz (carry .deps/matrices)" >&2; return 1; }
}
stage_issue39() { E2E_REPS=${E2E_REPS:-2} E2E_SMALL_REPS=${E2E_SMALL_REPS:-4} bash tuning/e2e/protocol.sh "$OUT/issue39" build-gpu; }
# issue42: the predicted plan and crux (0,0) against the best cuSPARSE ALG, then the hub split as the
# engine keeps it on the power-law graphs
stage_issue42() {
  local files
  files=$(real_large) || return 1
  mkdir -p "$OUT/issue42" &&
    build-gpu/tuning/bench/matxtract-bench -gen kron:20:16@unique -gen kron:21:16@unique -gen chunglu:2000000:16:2.1@unique \
      -gen lap3d:150@unique $files -crux 0,0 -o "$OUT/issue42" > "$OUT/issue42/bench.log" 2>&1 &&
    build-gpu/tuning/bench/hub-split-bench -merge_only -reps 50 -K 28000 kron:20:16@unique kron:21:16@unique \
      chunglu:2000000:16:2.1@unique > "$OUT/issue42/hub-split.log" 2>&1 &&
    grep -vE "^#" "$OUT/issue42/bench.log" | tail -12 && grep -E "vs best|split" "$OUT/issue42/hub-split.log" | tail -12
}
# issue43: the SpMM table at crux (0,0) and its criteria, then k = 1, 2, 4 through PETSc after 1000 MatMults
stage_issue43() {
  local files
  files=$(real_large) || return 1
  mkdir -p "$OUT/issue43" &&
    build-gpu/tuning/bench/spmm-kernel-bench -gen kron:20:16 -gen chunglu:2000000:16:2.1 -gen lap3d:150 -gen lap2d:2000 $files \
      -k 1,2,4,8,16,32,64,128 -reps 20 -bw 4800 -o "$OUT/issue43" > "$OUT/issue43/spmm_kernel.log" 2>&1 &&
    python3 tuning/bench/plot_spmm.py --criteria "$OUT/issue43/spmm_kernel.csv" &&
    build-gpu/tuning/bench/matxtract-spmm-bench $files -gen kron:20:16 -gen chunglu:2000000:16:2.1 -k 1,2,4 -reps 20 -mults 1000 \
      -o "$OUT/issue43/petsc" > "$OUT/issue43/petsc.log" 2>&1 && tail -20 "$OUT/issue43/petsc.log"
}
# regret (issue 42's predictor criterion, after setup build): the held-out test split's BO labels on this
# GPU (as the embedded model's were made: up to 50M nonzeros, budget 8, 3 repeats) of the matrices the
# embedded model predicted (its predictions.json: rows added to the corpus since wait for the next
# model), the embedded model's plans of the same matrices measured, then report.py: regret median and p90, the
# unique-valued matrices apart. The plans are measured first; the labels stop after REGRET_BUDGET_S
# (default 420 s) and resume from REGRET_FROM, an earlier call's regret/labels.jsonl.
stage_regret() {
  local train d=$OUT/regret rc
  train=$(embedded_train) || return 1
  mkdir -p "$d/measured" && echo "model: $train" | tee "$d/model.txt" || return 1
  { [ -z "${REGRET_FROM:-}" ] || cp "$REGRET_FROM" "$d/labels.jsonl"; } || return 1
  python3 tuning/predictor/labels.py -o "$d/measured" --build build-gpu --split test --plans "$train/predictions.json" || return 1
  rm -rf "$d/measured/cache"
  timeout "${REGRET_BUDGET_S:-420}" python3 tuning/predictor/labels.py -o "$d" --build build-gpu --split test \
    --only "$train/predictions.json" --max-nnz 50000000 --budget 8 --repeats 3
  rc=$?
  rm -rf "$d/cache"
  echo "regret: $(grep -c . "$d/labels.jsonl" 2>/dev/null || echo 0) test matrices labelled, $(grep -c . "$d/measured/labels.jsonl") measured"
  python3 tuning/predictor/report.py --labels "$d/labels.jsonl" --measured "$d/measured/labels.jsonl" --train "$train" -o "$d" &&
    grep -E "^\| (group|all|unique|generator)" "$d/report.md" | head -8
  [ $rc = 0 ]
}
stage_pack() {
  local dirs
  dirs=$(cd "$OUT" && ls -d logs labels bench amortization e2e scaling profile ab tutorials compress setupstudy predcost featprof trace measure issue39 issue42 issue43 regret 2>/dev/null)
  tar czf "$OUT/results.tgz" -C "$OUT" $dirs && (cd "$OUT" && rm -rf $dirs)
}

for s in $STAGES; do
  echo "=== $s $(date -u +%H:%M:%S)"
  log="$OUT/logs/$s.log"
  [ "$s" = pack ] && log=/dev/null
  if ! "stage_$s" > "$log" 2>&1; then echo "stage $s FAILED"; status=1; fi
  [ "$s" = pack ] || tail -n 25 "$log"
done
exit $status
