#!/bin/bash
# cold_pack_run.sh OUTDIR [BUILD_DIR] [SPEC[@VALUES] ...] - the packed cold CSR benchmark (issue 13):
# the segment cold kernel on the plain CSR vs its packed form vs cusparseSpMV CSR ALG1/ALG2, bytes per
# nonzero, fraction of copy bandwidth, speedups, bitwise equality (tuning/bench/cold_pack_bench.cu;
# default matrix list there: 5/7/27-point stencils, rgg and kron unweighted, PageRank transition,
# unique values). Writes OUTDIR/cold_pack.{csv,md,log}, env.txt. BUILD_DIR defaults to build-gpu
# (the target is built there if missing). Called by tuning/gpu_cycle.sh stage compress.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: cold_pack_run.sh OUTDIR [BUILD_DIR] [SPEC[@VALUES] ...]}
shift
build=${1:-build-gpu}
[ $# -gt 0 ] && shift
mkdir -p "$out"
bin="$build/tuning/bench/cold-pack-bench"
if [ ! -x "$bin" ]; then cmake --build "$build" --target cold-pack-bench -j"$(nproc)" || exit 1; fi
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > "$out/nvidia-smi.txt" 2>&1
echo "command: $bin -o $out $*" > "$out/command.txt"
"$bin" -o "$out" "$@" 2>&1 | tee "$out/cold_pack.log"
