#!/bin/bash
# Hardware counters (Nsight Compute) of our cold kernels and cuSPARSE's CSR SpMV, same process, same
# matrix, steady state (no cache flush, clocks left alone: see the device README):
#   tuning/profile/ncu_cold.sh OUTDIR [GEN_SPEC ...]     (default: chunglu 1M and kron 20)
# matxtract-bench wraps each variant's warm-up and timed calls in an NVTX range (seg00, merge00,
# auto00, crux, cusparse_alg1, cusparse_alg2); one ncu run per (matrix, range) profiles PROFILE_LAUNCHES
# launches of that range after skipping PROFILE_SKIP (the warm-up), so every run is short.
# PROFILE_EXTRA_METRICS: more metric names, comma-separated (an unknown name makes ncu refuse the run:
# list them first with `ncu --query-metrics | grep -i ltcfabric`, e.g. for L2 partition-crossing
# traffic, which section 3 of tuning/results/h200/kernels-2026-11-21-s2.md asks about).
# Writes OUTDIR/NAME-RANGE.csv (raw, one row per launch) and OUTDIR/summary.md (median per kernel).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUTD=${1:?OUTDIR}; shift
SPECS=${*:-chunglu:1000000:16:2.1 kron:20:16}
RANGES=${PROFILE_RANGES:-seg00 merge00 cusparse_alg1 cusparse_alg2}
SKIP=${PROFILE_SKIP:-30}
COUNT=${PROFILE_LAUNCHES:-9}
BIN=${BIN:-build-gpu/tuning/bench/matxtract-bench}
mkdir -p "$OUTD"
METRICS=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,\
lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,\
l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,\
l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum,sm__warps_active.avg.pct_of_peak_sustained_active,\
smsp__inst_executed.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed,\
l1tex__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,\
smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct,smsp__warp_issue_stalled_lg_throttle_per_warp_active.pct,\
smsp__warp_issue_stalled_barrier_per_warp_active.pct,smsp__warp_issue_stalled_short_scoreboard_per_warp_active.pct,\
launch__grid_size,launch__block_size,launch__registers_per_thread${PROFILE_EXTRA_METRICS:+,$PROFILE_EXTRA_METRICS}
for spec in $SPECS; do
  name=$(echo "$spec" | tr ':.' '__')
  for range in $RANGES; do
    echo "=== $spec $range $(date -u +%H:%M:%S)"
    timeout 240 ncu --clock-control none --cache-control none --csv --page raw --metrics "$METRICS" \
      --nvtx --nvtx-include "$range/" -s "$SKIP" -c "$COUNT" \
      "$BIN" -gen "$spec" -crux "" -o "/tmp/ncu-bench-$name" > "$OUTD/$name-$range.csv" 2> "$OUTD/$name-$range.err"
    echo "ncu status $? ($(grep -c '^"[0-9]' "$OUTD/$name-$range.csv") launches)"; tail -2 "$OUTD/$name-$range.err"
  done
done
python3 tuning/profile/ncu_summary.py "$OUTD"/*.csv > "$OUTD/summary.md"
cat "$OUTD/summary.md"
