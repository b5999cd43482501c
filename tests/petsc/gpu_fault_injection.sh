#!/bin/bash
# gpu_fault_injection.sh TEST_BINARY - runs test_petsc_gpu_inject with MX_FAULT_INJECT=N for N = 1..30,
# then every 10th N, until a run finishes on the GPU untouched (N is past the sequence's last CUDA
# call): every run must end by itself with exit 0 (a clean PETSc error naming the injected fault,
# or the CPU fallback with AIJ's products). Exit 77 (skip) when the binary skips (no PETSc+CUDA/GPU).
bin=${1:?usage: gpu_fault_injection.sh TEST_BINARY}
"$bin" > /dev/null 2>&1
rc=$?
[ $rc -eq 77 ] && { echo "skipped: no PETSc+CUDA or no GPU"; exit 77; }
[ $rc -eq 0 ] || { echo "the run without injection failed (exit $rc)"; exit 1; }
runs=0 errors=0 fallbacks=0
n=1
while [ $n -le 5000 ]; do
  out=$(MX_FAULT_INJECT=$n timeout 120 "$bin" 2>&1)
  rc=$?
  runs=$((runs + 1))
  if [ $rc -ne 0 ]; then echo "MX_FAULT_INJECT=$n: exit $rc"; echo "$out" | tail -5; exit 1; fi
  case "$out" in
    *"PETSc error"*) errors=$((errors + 1)) ;;
    *"products on the CPU"*) fallbacks=$((fallbacks + 1)) ;;
    *"products on the GPU"*) echo "MX_FAULT_INJECT=$n: past the last CUDA call"; break ;;
  esac
  echo "$out" | grep "MX_FAULT_INJECT=" | head -1
  if [ $n -lt 30 ]; then n=$((n + 1)); else n=$((n + 10)); fi
done
echo "$runs runs: $errors clean PETSc errors, $fallbacks CPU fallbacks, 0 crashes"
