#!/bin/bash
# demo.sh - build matxtract and run the PageRank example on its embedded default graph with
# -mat_type matxtract (extra arguments are passed to the example, e.g. -mat_matxtract_crux 0.7,0.5).
set -euo pipefail
cd "$(dirname "$0")/.."
source tests/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target pagerank >/dev/null
exec build/examples/pagerank/pagerank -mat_type matxtract "$@"
