#!/bin/bash
# The whole GPU cycle on the GPU host, in one command (see ../shared/docs/GPU-HOST.md):
#   tuning/gpu_cycle.sh [STAGE ...]     stages: setup build test sanitize bench (default: all)
# setup unpacks the PETSc 3.22+CUDA bundle from .deps/ into /opt/petsc-cuda; build configures and
# builds this tree in build-gpu/ (-j16, sm_90); test runs the ctest labels gpu, petsc and unit;
# sanitize runs the ctest label sanitize (compute-sanitizer memcheck + racecheck on the gpu tests);
# bench runs the quick benchmark (BENCH_ARGS overrides its arguments).
# Logs and result files go to $OUT (or ./gpu-out when OUT is unset): one log per stage.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
STAGES=${*:-setup build test sanitize bench}
export PETSC_DIR=/opt/petsc-cuda PETSC_ARCH= PKG_CONFIG_PATH=/opt/petsc-cuda/lib/pkgconfig
export PETSC_OPTIONS="${PETSC_OPTIONS:--use_gpu_aware_mpi 0}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export PATH=/usr/local/cuda/bin:$PATH
status=0

stage_setup() {
  [ -f /opt/petsc-cuda/lib/pkgconfig/PETSc.pc ] || cat .deps/petsc-cuda.tar.xz.part* | xz -d | tar x -C /opt
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  nvcc --version | tail -1
  pkg-config --modversion PETSc
}
stage_build() {
  cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DMX_MATRICES_DIR="$PWD/tests/data/matrices" &&
  cmake --build build-gpu -j16 2>&1 | tee "$OUT/ptxas.log" | grep -E "error|warning|ptxas info|spill|Used" | grep -v "^$" | head -200
}
stage_test() { ctest --test-dir build-gpu -L "gpu|petsc|unit|mpi" --output-on-failure -j4; }
stage_sanitize() { ctest --test-dir build-gpu -L sanitize --output-on-failure; }
stage_bench() { [ -x build-gpu/tuning/bench/matxtract-bench ] && build-gpu/tuning/bench/matxtract-bench ${BENCH_ARGS:--quick} -o "$OUT"; }

for s in $STAGES; do
  echo "=== $s $(date -u +%H:%M:%S)"
  if ! "stage_$s" > "$OUT/$s.log" 2>&1; then echo "stage $s FAILED"; status=1; fi
  tail -n 25 "$OUT/$s.log"
done
exit $status
