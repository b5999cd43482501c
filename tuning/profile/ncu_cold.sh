#!/bin/bash
# Hardware counters (Nsight Compute) of the cold kernels and cuSPARSE's CSR SpMV kernels, same
# process, same matrix, steady state (no cache flush, clocks left alone: see the device README):
#   tuning/profile/ncu_cold.sh OUTDIR [GEN_SPEC ...]     (default: chunglu 1M and kron 20)
# Runs matxtract-bench on each matrix under ncu, profiling every launch of our cold kernels and of
# cuSPARSE's kernels (the bench's (0,0) segment/merge/AUTO variants, then ALG1 and ALG2), and
# writes OUTDIR/NAME.csv (raw, one row per launch) and OUTDIR/summary.md (median per kernel run).
# Cost and reach (H200, 2026-11-21): about 0.25 s per profiled launch; on chunglu 1M (13.3M nnz) the
# 900 launches cover the (0,0) segment and merge variants and the AUTO upload's cuSPARSE ALG2 runs,
# not ALG1; kron 20 does not finish in the 240 s limit. Raise -c / the limit for more.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUTD=${1:?OUTDIR}; shift
SPECS=${*:-chunglu:1000000:16:2.1:v kron:20:16:v}
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
launch__grid_size,launch__block_size,launch__registers_per_thread
for spec in $SPECS; do
  name=$(echo "$spec" | tr ':.' '__')
  echo "=== $spec $(date -u +%H:%M:%S)"
  timeout 240 ncu --clock-control none --cache-control none --csv --page raw --metrics "$METRICS" \
    -k 'regex:mx_cold|[Cc]sr|[Ss]p[Mm][Vv]' -c 900 \
    "$BIN" -gen "$spec" -crux "" -o "/tmp/ncu-bench-$name" > "$OUTD/$name.csv" 2> "$OUTD/$name.err"
  echo "ncu status $? ($(wc -l < "$OUTD/$name.csv") lines)"; tail -3 "$OUTD/$name.err"
done
python3 tuning/profile/ncu_summary.py "$OUTD"/*.csv > "$OUTD/summary.md"
cat "$OUTD/summary.md"
