#!/bin/bash
# A/B of compile-time tuning constants (src/cuda/mx_tuning.h) on the GPU host, after
# `tuning/gpu_cycle.sh setup`: builds matxtract-bench once per flag set (build-ab-K/) and runs the
# sets in ROUNDS interleaved rounds (A B A B ...) on the same matrices, so drift shows as a
# difference between rounds of one set.
#   tuning/bench/ab_build.sh OUTDIR "FLAGS_A" "FLAGS_B" ... -- BENCH_ARGS...
# FLAGS: nvcc flags such as "-DMX_MERGE_ITEMS=5" ("" = the defaults). Writes OUTDIR/ab-K-rR/ (the
# bench's files) and OUTDIR/ab.md (the compact table of each run, in order). AB_TARGET picks the
# benchmark (default matxtract-bench; cold-pack-bench for the packed kernels, e.g. issue 13's
# `AB_TARGET=cold-pack-bench ab_build.sh OUT "" "-DMX_SEG_L2_AHEAD=792" -- lap3d:150 lap3d27:100`;
# hub-split-bench, which writes no files: its output is all in ab.md). The sets build in parallel.
# A set "@PATCH [FLAGS]" builds a copy of the tree (build-ab-K-src/) with PATCH applied (`git diff`
# output, patch -p1): a branch against main where the device host has no git, e.g.
# `git diff main...wip/x > .deps/x.patch` here, then `ab_build.sh OUT "" "@.deps/x.patch" -- ...` there.
# AB_DRY_RUN=1 prints each copy, patch, cmake and benchmark command (into build-K.log and ab.md)
# instead of running it.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tuning/gpu_env.sh
OUTD=${1:?OUTDIR}; shift
ROUNDS=${ROUNDS:-2}
TARGET=${AB_TARGET:-matxtract-bench}
X=; [ "${AB_DRY_RUN:-0}" = 1 ] && X=echo
flags=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do flags+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
mkdir -p "$OUTD"
: > "$OUTD/ab.md"
jobs=$(( $(nproc) / ${#flags[@]} )); [ "$jobs" -lt 2 ] && jobs=2
pids=()
# the tree the set builds: "." or a patched copy (a set "@PATCH [FLAGS]"); its CUDA flags
set_source() {
  local k=$1 set=$2
  src=. cuda_flags=$set
  [ "${set:0:1}" = "@" ] || return 0
  local patch=${set%% *}
  patch=${patch:1}
  cuda_flags=; [ "$set" != "@$patch" ] && cuda_flags=${set#* }
  src="build-ab-$k-src"
  case $patch in /*) ;; *) patch="$PWD/$patch" ;; esac
  $X rm -rf "$src" && $X mkdir -p "$src" && $X cp -r CMakeLists.txt cmake src include examples tests tuning docs "$src/" &&
    $X patch -s -p1 -d "$src" -i "$patch"
}
for k in "${!flags[@]}"; do
  ( set_source "$k" "${flags[$k]}" > "$OUTD/build-$k.log" 2>&1 &&
      $X cmake -S "$src" -B "build-ab-$k" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
        -DCMAKE_CUDA_FLAGS="$cuda_flags" -DMATXTRACT_BUILD_TESTS=OFF -DMATXTRACT_BUILD_EXAMPLES=OFF >> "$OUTD/build-$k.log" 2>&1 &&
      $X cmake --build "build-ab-$k" -j"$jobs" --target "$TARGET" >> "$OUTD/build-$k.log" 2>&1 ) &
  pids+=($!)
done
failed=0
for k in "${!flags[@]}"; do
  wait "${pids[$k]}" || { echo "build of set $k ('${flags[$k]}') failed: $OUTD/build-$k.log"; failed=1; }
done
[ "$failed" = 0 ] || exit 1
for r in $(seq 1 "$ROUNDS"); do
  for k in "${!flags[@]}"; do
    out=(-o "$OUTD/ab-$k-r$r")
    [ "$TARGET" = hub-split-bench ] && out=()
    echo "## round $r, set $k: '${flags[$k]:-defaults}'" | tee -a "$OUTD/ab.md"
    $X "build-ab-$k/tuning/bench/$TARGET" "$@" "${out[@]}" 2>&1 | grep -v '^#' | tee -a "$OUTD/ab.md"
  done
done
