#!/bin/bash
# run.sh OUTDIR [BUILD_DIR] - the amortization study: for each matrix below, setup and per-iteration
# time of aijcusparse and matxtract (device vectors) for a solver, then break-even iterations and
# time-vs-iterations plots (plot.py). Run on the GPU host after tuning/gpu_cycle.sh setup build.
set -uo pipefail
out=${1:?usage: run.sh OUTDIR [BUILD_DIR]}
build=${2:-build-gpu}
exe=$build/tuning/amortization/matxtract-amortize
mkdir -p "$out"
csv=$out/amortization.csv
echo "matrix,type,solver,setup_s,per_it_s,its,crux_tc,crux_tr,hot_share" > "$csv"
# name | spec | solver | extra matxtract options (a crux to try besides (0,0))
while read -r name spec solver crux; do
  [ -z "$name" ] && continue
  # vectors come from MatCreateVecs: device vectors for both types on a CUDA build; CSV lines only
  "$exe" -gen "$spec" -name "$name" -solver "$solver" -its 200 -types aijcusparse,matxtract \
    | grep -E '^([^,]*,){8}[^,]*$' >> "$csv" || echo "FAILED $name" >&2
  "$exe" -gen "$spec" -name "$name" -solver "$solver" -its 200 -types matxtract -mat_matxtract_crux "$crux" \
    | grep -E '^([^,]*,){8}[^,]*$' | sed 's/,matxtract,/,matxtract_hot,/' >> "$csv" || echo "FAILED $name hot" >&2
done <<'LIST'
kron18 kron:18:16 power 0.9,0.8
kron20 kron:20:16 power 0.9,0.8
rgg20 rgg:20 power 0.6,0.3
lap2d_1000 lap2d:1000 cg 0.7,0.5
lap3d_100 lap3d:100 cg 0.7,0.5
band_1M_8 band:1000000:8 power 0.7,0.5
LIST
python3 "$(dirname "$0")/plot.py" "$csv" "$out"
