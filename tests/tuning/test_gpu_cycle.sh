#!/bin/bash
# test_gpu_cycle.sh ROOT - tuning/gpu_cycle.sh's stages that need no GPU, and tuning/gpu_env.sh: the pack
# stage tars every result folder of $OUT (logs, bench, e2e, ...) into results.tgz and removes them, the
# files inside unchanged; an unknown stage fails the cycle (exit status 1, "stage NAME FAILED") after the
# stages before it ran; the issue42/issue43 stages fail, naming the folder, without the carried real
# matrices, and with them decompress each real-large .mtx.xz and .mtx.gz first; gpu_deps.sh fills a .deps folder from a shared folder (and fails without the PETSc
# bundle); the model stage names the committed train/ folder whose trained_on is the embedded model's
# (the regret and measure stages read its predictions.json); gpu_env.sh sets the GPU host's PETSc and
# keeps a PETSC_OPTIONS already set.
# Exits 1 on a wrong result.
set -u
root=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
expect() { # expect CONDITION-STATUS WHAT
  if [ "$1" = 0 ]; then echo "ok    $2"; else echo "FAIL  $2"; failed=$((failed + 1)); fi
}

out=$tmp/out
mkdir -p "$out/bench" "$out/e2e/logs"
echo "spmv row" > "$out/bench/spmv.csv"
echo "e2e log" > "$out/e2e/logs/run.log"
OUT=$out bash "$root/tuning/gpu_cycle.sh" pack > "$tmp/pack.txt" 2>&1
expect $? "the pack stage succeeds"
tar tzf "$out/results.tgz" | sort > "$tmp/list.txt"
grep -qx "bench/spmv.csv" "$tmp/list.txt" && grep -qx "e2e/logs/run.log" "$tmp/list.txt" && grep -qx "logs/" "$tmp/list.txt"
expect $? "results.tgz holds logs/, bench/spmv.csv and e2e/logs/run.log"
mkdir "$tmp/x" && tar xzf "$out/results.tgz" -C "$tmp/x" && [ "$(cat "$tmp/x/bench/spmv.csv")" = "spmv row" ]
expect $? "the files inside are unchanged"
[ ! -e "$out/bench" ] && [ ! -e "$out/e2e" ] && [ ! -e "$out/logs" ]
expect $? "the packed folders are removed"

OUT=$tmp/out2 bash "$root/tuning/gpu_cycle.sh" pack nosuchstage > "$tmp/bad.txt" 2>&1
status=$?
[ $status = 1 ] && grep -q "^stage nosuchstage FAILED" "$tmp/bad.txt" && grep -q "^=== pack" "$tmp/bad.txt"
expect $? "an unknown stage fails the cycle after the stages before it (exit status $status)"

for st in issue42 issue43; do
  E2E_MATRICES=$tmp/no-matrices OUT=$tmp/out3 bash "$root/tuning/gpu_cycle.sh" $st > "$tmp/$st.txt" 2>&1
  status=$?
  [ $status = 1 ] && grep -q "^stage $st FAILED" "$tmp/$st.txt" && grep -q "real_large: no $tmp/no-matrices/real-large" "$tmp/out3/logs/$st.log"
  expect $? "$st without the carried matrices fails and names the folder (exit status $status)"
done
mkdir -p "$tmp/with-matrices/real-large"
echo xz-matrix | xz > "$tmp/with-matrices/real-large/a.mtx.xz"
echo gz-matrix | gzip > "$tmp/with-matrices/real-large/b.mtx.gz"
E2E_MATRICES=$tmp/with-matrices MX_REAL_LARGE_DIR=$tmp/rl OUT=$tmp/out5 bash "$root/tuning/gpu_cycle.sh" issue42 > /dev/null 2>&1
[ "$(cat "$tmp/rl/a.mtx" 2>/dev/null)" = xz-matrix ] && [ "$(cat "$tmp/rl/b.mtx" 2>/dev/null)" = gz-matrix ] && [ ! -e "$tmp/rl/a.mtx.tmp" ]
expect $? "issue42 decompresses the carried real-large .mtx.xz and .mtx.gz before its runs"

OUT=$tmp/out4 bash "$root/tuning/gpu_cycle.sh" model > "$tmp/model.txt" 2>&1
status=$?
d=$(sed -n 2p "$tmp/model.txt")
line=$(sed -n 's/^ \* trained_on: //p' "$root/src/core/mx_model_default.c")
[ $status = 0 ] && [ -f "$root/$d/predictions.json" ] &&
  python3 -c 'import json, sys; sys.exit(json.load(open(sys.argv[1]))["trained_on"] != sys.argv[2])' "$root/$d/train_summary.json" "$line"
expect $? "model names the committed train/ folder of the embedded model ($d, exit status $status)"

sh=$tmp/shared
mkdir -p "$sh/petsc-cuda" "$sh/matrices/real" "$sh/matrices/real-large"
echo bundle > "$sh/petsc-cuda/petsc-cuda.tar.xz.part00"
for m in bcsstk13 pushpull other; do echo "%%MatrixMarket $m" > "$sh/matrices/real/$m.mtx"; done
echo large | gzip > "$sh/matrices/real-large/big.mtx.gz"
DEPS=$tmp/deps EX45_SRC=$tmp/none.c bash "$root/tuning/gpu_deps.sh" "$sh" > "$tmp/deps.txt" 2>&1
status=$?
[ $status = 0 ] && cmp -s "$sh/petsc-cuda/petsc-cuda.tar.xz.part00" "$tmp/deps/petsc-cuda.tar.xz.part00" &&
  [ -f "$tmp/deps/matrices/real/bcsstk13.mtx" ] && [ -f "$tmp/deps/matrices/real/pushpull.mtx" ] &&
  [ ! -e "$tmp/deps/matrices/real/other.mtx" ] && [ "$(xz -dc "$tmp/deps/matrices/real-large/big.mtx.xz")" = large ] &&
  [ ! -e "$tmp/deps/matrices/real-large/big.mtx.gz" ] &&
  grep -q "no $tmp/none.c" "$tmp/deps.txt" && grep -q "MiB (limit 64 together)" "$tmp/deps.txt"
expect $? "gpu_deps.sh copies the bundle and the protocol's real matrices, real-large as .mtx.xz, says what it lacks (exit status $status)"
rm "$sh/petsc-cuda/petsc-cuda.tar.xz.part00"
DEPS=$tmp/deps2 bash "$root/tuning/gpu_deps.sh" "$sh" > "$tmp/deps2.txt" 2>&1
status=$?
[ $status = 1 ] && grep -q "no PETSc bundle in $sh/petsc-cuda" "$tmp/deps2.txt" && [ ! -e "$tmp/deps2" ]
expect $? "gpu_deps.sh without the PETSc bundle fails and says so, creating nothing (exit status $status)"

env_of() { env -u PETSC_OPTIONS "$@" bash -c ". '$root/tuning/gpu_env.sh' && echo \"\$PETSC_DIR|\$PETSC_OPTIONS|\$OMPI_ALLOW_RUN_AS_ROOT\""; }
[ "$(env_of)" = "/opt/petsc-cuda|-use_gpu_aware_mpi 0|1" ]
expect $? "gpu_env.sh: the bundle's PETSc, host-staged MPI, mpiexec as root"
[ "$(env_of PETSC_OPTIONS=-log_view)" = "/opt/petsc-cuda|-log_view|1" ]
expect $? "gpu_env.sh keeps a PETSC_OPTIONS already set"

echo "$failed failed"
[ $failed = 0 ]
