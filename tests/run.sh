#!/bin/bash
# run.sh - build matxtract and run every test (labels unit, petsc, mpi; gpu tests skip without a GPU).
#   bash tests/run.sh              normal build in build/
#   bash tests/run.sh --sanitize   CPU-only build with -fsanitize=address,undefined in build-asan/
set -euo pipefail
cd "$(dirname "$0")/.."
source tests/deps.sh
jobs=$(nproc)
# the tests must not write into the working tree: `git status` outside the git-ignored build folders
# is the same before and after the run, or the run fails and names what changed
tree_status() { if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then git status --porcelain --untracked-files=all | sort; fi; }
status_before=$(tree_status)
if [ "${1:-}" = "--sanitize" ]; then
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DMATXTRACT_SANITIZE=ON -DMATXTRACT_ENABLE_CUDA=OFF >/dev/null
  cmake --build build-asan -j"$jobs"
  # OpenMPI's own allocations at finalize are reported as leaks: leak checking off, everything else on.
  ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan -L "unit|petsc" --output-on-failure -j"$jobs"
else
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build -j"$jobs"
  ctest --test-dir build --output-on-failure -j"$jobs"
fi
changed=$(comm -13 <(echo "$status_before") <(tree_status))
if [ -n "$changed" ]; then
  echo "tests/run.sh: the tests changed the working tree (tests write into the build folder only):" >&2
  echo "$changed" >&2
  exit 1
fi
