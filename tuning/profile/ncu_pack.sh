#!/bin/bash
# Nsight Compute sections of the packed cold kernel (issue 13) on cold-pack-bench's matrices, steady
# state (no cache flush, clocks left alone: see the device README), one text file per matrix:
#   tuning/profile/ncu_pack.sh OUTDIR [SPEC ...]      (default: lap3d:150 lap3d27:100 kron:20:16@ones)
# PACK_KERNEL: the kernel-name regex (default the packed segment kernel; mx_dec_plain: the plain one).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUTD=${1:?OUTDIR}; shift
SPECS=${*:-lap3d:150 lap3d27:100 kron:20:16@ones}
KERNEL=${PACK_KERNEL:-mx_cold_segment_kernel.*mx_dec_pack}
BIN=${BIN:-build-gpu/tuning/bench/cold-pack-bench}
mkdir -p "$OUTD"
for spec in $SPECS; do
  name=$(echo "$spec" | tr ':.@' '___')
  echo "=== $spec $(date -u +%H:%M:%S)"
  timeout "${PACK_NCU_TIMEOUT:-90}" ncu --clock-control none --cache-control none --kernel-name-base demangled \
    -k regex:"$KERNEL" -s 12 -c 1 --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
    --section Occupancy --section LaunchStats --section InstructionStats --section MemoryWorkloadAnalysis \
    --section SourceCounters --metrics smsp__inst_executed.sum,smsp__sass_inst_executed_op_global_ld.sum,smsp__sass_inst_executed_op_shared_ld.sum,smsp__sass_inst_executed_op_shared_st.sum,smsp__inst_executed_pipe_lsu.sum \
    "$BIN" -warmup 20 -reps 100 "$spec" > "$OUTD/ncu-$name.txt" 2>&1
  echo "ncu status $?"; grep -E "Duration|Executed Ipc A|Warp Cycles Per Issued|No Eligible|DRAM Through" "$OUTD/ncu-$name.txt" | head -6
done
