#!/bin/bash
# variants.sh - the PETSc builds a user may have besides Debian's default: 64-bit indices (the whole
# unit + petsc suite must pass) and complex scalars (matxtract must refuse with a clear error).
# Installs Debian's libpetsc64-real3.18-dev and libpetsc-complex3.18-dev when missing. CPU only.
set -euo pipefail
cd "$(dirname "$0")/.."
source tests/deps.sh
set -e
need=""
for p in libpetsc64-real3.18-dev libpetsc-complex3.18-dev; do dpkg -s "$p" >/dev/null 2>&1 || need="$need $p"; done
if [ -n "$need" ]; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $need >/dev/null
fi
jobs=$(nproc)

echo "== 64-bit PetscInt"
PETSC_DIR=/usr/lib/petscdir/petsc64-3.18/x86_64-linux-gnu-real PETSC_ARCH= \
  cmake -S . -B build-petsc64 -DMATXTRACT_ENABLE_CUDA=OFF >/dev/null
cmake --build build-petsc64 -j"$jobs" >/dev/null
ctest --test-dir build-petsc64 -L "unit|petsc" --output-on-failure -j"$jobs"

echo "== complex PetscScalar: a clear refusal"
PETSC_DIR=/usr/lib/petscdir/petsc3.18/x86_64-linux-gnu-complex PETSC_ARCH= \
  cmake -S . -B build-complex -DMATXTRACT_ENABLE_CUDA=OFF -DMATXTRACT_BUILD_TESTS=OFF >/dev/null
cmake --build build-complex -j"$jobs" --target ksp_solve >/dev/null
out=$(build-complex/examples/ksp_solve/ksp_solve -gen lap2d:10 -mat_type matxtract 2>&1 || true)
if printf '%s\n' "$out" | grep -q "matxtract needs PetscScalar = real double"; then
  echo "complex PetscScalar: refused with a clear error (ok)"
else
  printf "%s\n" "$out"; echo "complex PetscScalar: no clear refusal"; exit 1
fi
