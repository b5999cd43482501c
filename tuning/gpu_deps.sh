#!/bin/bash
# gpu_deps.sh - fill .deps/ with what the GPU host's runs need and the repository does not hold, once
# per checkout (docs/developing.md); every device call then carries `.deps`:
#   - the PETSc 3.22 + CUDA bundle (SHARED/petsc-cuda/petsc-cuda.tar.xz.part*; gpu_cycle.sh's setup
#     stage unpacks it);
#   - the matrices of issue 39's protocol and of the issue stages: real/{bcsstk13,pushpull}.mtx and
#     every real-large/*.mtx.gz recompressed as .mtx.xz (tuning/e2e/protocol.sh's E2E_MATRICES
#     default, .deps/matrices): 29 MB of gzip become 9.4 MB, which keeps the tracked tree, the
#     bundle and every matrix of issue 39 under the 64 MiB upload (G3_circuit alone: 18 -> 5.4 MB).
#     A file already there and newer than its source is kept (G3_circuit takes about 1.5 min on 2 cores).
#   - PETSc's ex45.c (tuning/mpi/scaling.sh's EX45_DIR), from Debian's PETSc examples where installed.
# The upload of the working tree and .deps together is limited to 64 MiB: the script prints the total.
#   bash tuning/gpu_deps.sh [SHARED]      SHARED default ../shared; DEPS (default .deps) the target
set -euo pipefail
cd "$(dirname "$0")/.."
shared=${1:-../shared}
deps=${DEPS:-.deps}
ex45=${EX45_SRC:-/usr/share/petsc/3.18/share/petsc/examples/src/ksp/ksp/tutorials/ex45.c}
for f in "$shared"/petsc-cuda/petsc-cuda.tar.xz.part*; do
  [ -f "$f" ] || { echo "gpu_deps.sh: no PETSc bundle in $shared/petsc-cuda" >&2; exit 1; }
done
mkdir -p "$deps/matrices/real" "$deps/matrices/real-large" "$deps/ex45"
cp "$shared"/petsc-cuda/petsc-cuda.tar.xz.part* "$deps/"
cp "$shared"/matrices/real/{bcsstk13,pushpull}.mtx "$deps/matrices/real/"
for f in "$shared"/matrices/real-large/*.mtx.gz; do
  [ -f "$f" ] || continue
  xzf=$deps/matrices/real-large/$(basename "$f" .gz).xz
  [ "$xzf" -nt "$f" ] && continue
  gzip -dc "$f" | xz -T0 > "$xzf.tmp" && mv "$xzf.tmp" "$xzf" || { rm -f "$xzf.tmp"; echo "gpu_deps.sh: cannot recompress $f" >&2; exit 1; }
done
rm -f "$deps"/matrices/real-large/*.mtx.gz # older checkouts' copies: the .xz replace them
if [ -f "$ex45" ]; then cp "$ex45" "$deps/ex45/"; else echo "gpu_deps.sh: no $ex45 (scaling.sh's ex45 needs EX45_DIR)"; fi
if [ "$deps" = .deps ] && [ -d .git ] && ! grep -qx "/.deps/" .git/info/exclude 2>/dev/null; then
  mkdir -p .git/info && echo "/.deps/" >> .git/info/exclude
fi
echo "gpu_deps.sh: $deps holds $(du -sm "$deps" | cut -f1) MiB; the tracked tree $(( $(git ls-files -z | du -cb --files0-from=- 2>/dev/null | tail -1 | cut -f1) / 1048576 )) MiB (limit 64 together)"
