#!/bin/bash
# demo.sh - build matxtract and run the PageRank example on its embedded default graph with
# -mat_type matxtract (extra arguments are passed to the example, e.g. -mat_matxtract_crux 0.7,0.5).
# The build is quiet: its output goes to build/demo-build.log (shown with MX_DEMO_VERBOSE=1).
set -euo pipefail
cd "$(dirname "$0")/.."
source tests/deps.sh
mkdir -p build
log=build/demo-build.log
if [ "${MX_DEMO_VERBOSE:-0}" = 1 ]; then log=/dev/stdout; fi
if ! { cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build -j"$(nproc)" --target pagerank; } > "$log" 2>&1; then
  [ "$log" = /dev/stdout ] || tail -n 20 "$log"
  echo "demo.sh: the build failed; full output in $log" >&2
  exit 1
fi
exec build/examples/pagerank/pagerank -mat_type matxtract "$@"
