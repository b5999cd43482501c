#!/bin/bash
# A/B of upload-time overrides (environment variables read by mx_device_upload, see mx_device.cu)
# in one GPU session: runs matxtract-bench once per setting on the same matrices.
#   tuning/bench/ab_env.sh OUTDIR "SETTING_A" "SETTING_B" ... -- BENCH_ARGS...
# A setting is a space-separated list of VAR=value ("" = the defaults). Writes OUTDIR/ab-K/ per
# setting and OUTDIR/ab.md (the bench's compact table of each setting, in order).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUTD=${1:?OUTDIR}; shift
BIN=${BIN:-build-gpu/tuning/bench/matxtract-bench}
settings=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do settings+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
mkdir -p "$OUTD"
: > "$OUTD/ab.md"
k=0
for s in "${settings[@]}"; do
  echo "## setting $k: '${s:-defaults}'" | tee -a "$OUTD/ab.md"
  env $s "$BIN" "$@" -o "$OUTD/ab-$k" 2>&1 | tee -a "$OUTD/ab.md"
  k=$((k + 1))
done
