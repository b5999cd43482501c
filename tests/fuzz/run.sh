#!/bin/bash
# run.sh - build the libFuzzer harnesses (clang-14, -fsanitize=fuzzer,address,undefined) in
# build-fuzz/ and run each one time-boxed, seeded from tests/data (real and malformed matrices,
# tests/data/fuzz/<harness>/). Fails on the first crash, leak, sanitizer report or timeout and says
# where the input is: keep it as a regression file in tests/data/fuzz/<harness>/ once fixed.
#   bash tests/fuzz/run.sh                     every harness, MX_FUZZ_SECONDS (default 60) each
#   MX_FUZZ_SECONDS=10 bash tests/fuzz/run.sh mtx
# Environment: MX_FUZZ_SECONDS, MX_FUZZ_BUILD (build folder, default build-fuzz).
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/fuzz/deps.sh
build=${MX_FUZZ_BUILD:-build-fuzz}
secs=${MX_FUZZ_SECONDS:-60}
harnesses=${*:-mtx petscbin format gen}
cmake -S . -B "$build" -DMATXTRACT_FUZZ=ON -DCMAKE_C_COMPILER=clang-14 -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$(nproc)" >/dev/null
mkdir -p "$build/artifacts"
for h in $harnesses; do
  corpus="$build/corpus/$h" # new inputs go here, not into the repository
  log="$build/fuzz_$h.log"
  mkdir -p "$corpus"
  echo "fuzz_$h: ${secs}s, log $log"
  # -max_len 8192: large seed files are truncated (their text stays a useful seed); -timeout: a
  # single input running longer than 10 s counts as a hang
  if ! "$build/tests/fuzz/fuzz_$h" -max_total_time="$secs" -max_len=8192 -timeout=10 -rss_limit_mb=2048 \
       -print_final_stats=1 -artifact_prefix="$build/artifacts/$h-" "$corpus" $(cat "$build/tests/fuzz/fuzz_$h.corpus") \
       > "$log" 2>&1; then
    tail -n 40 "$log"
    echo "fuzz_$h FAILED: input in $build/artifacts/ (replay: $build/tests/fuzz/fuzz_$h FILE)"
    exit 1
  fi
  grep -E "^stat::(number_of_executed_units|peak_rss_mb|new_units_added)" "$log" | tr '\n' ' '
  echo
done
