#!/bin/bash
# scaling.sh OUTDIR [BUILD_DIR] - MPI scaling on a multi-GPU host: per-iteration time (MatMult-bound
# solver) and setup of aijcusparse (mpiaijcusparse) and matxtract (mpiaijmatxtract) on 1 and 2 ranks,
# one GPU per rank (PETSc picks the device by local rank). Run after tuning/gpu_cycle.sh setup build.
set -uo pipefail
out=${1:?usage: scaling.sh OUTDIR [BUILD_DIR]}
build=${2:-build-gpu}
exe=$build/tuning/amortization/matxtract-amortize
mkdir -p "$out"
csv=$out/mpi_scaling.csv
echo "np,matrix,type,solver,setup_s,per_it_s,its,crux_tc,crux_tr,hot_share" > "$csv"
ngpu=$(nvidia-smi -L | wc -l)
for np in 1 2; do
  [ "$np" -le "$ngpu" ] || { echo "only $ngpu GPU(s): skipping np=$np" >&2; continue; }
  while read -r name spec solver; do
    mpiexec -n "$np" "$exe" -gen "$spec" -name "$name" -solver "$solver" -its 200 -types aijcusparse,matxtract </dev/null \
      | grep -E '^([^,]*,){8}[^,]*$' | sed "s/^/$np,/" >> "$csv" || echo "FAILED np=$np $name" >&2
  done <<'LIST'
lap3d_200 lap3d:200 cg
lap3d_250 lap3d:250 cg
kron20 kron:20:16 power
kron21 kron:21:16 power
LIST
done
python3 - "$csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
t = {(r["np"], r["matrix"], r["type"]): float(r["per_it_s"]) for r in rows}
print("| matrix | type | 1 GPU (us/it) | 2 GPUs (us/it) | speedup 1->2 | vs aijcusparse at 2 |")
print("| --- | --- | --- | --- | --- | --- |")
for m in sorted({r["matrix"] for r in rows}):
    for ty in ("aijcusparse", "matxtract"):
        a, b = t.get(("1", m, ty)), t.get(("2", m, ty))
        base = t.get(("2", m, "aijcusparse"))
        fmt = lambda v: f"{v*1e6:.1f}" if v else "-"
        sp = f"{a/b:.2f}x" if a and b else "-"
        vs = f"{base/b:.2f}x" if base and b else "-"
        print(f"| {m} | {ty} | {fmt(a)} | {fmt(b)} | {sp} | {vs} |")
PY
