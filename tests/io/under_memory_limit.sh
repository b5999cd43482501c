#!/bin/bash
# under_memory_limit.sh [--probe] LIMIT_KB SECONDS PATTERN CMD [ARG...] - run CMD under `ulimit -v
# LIMIT_KB` for at most SECONDS; pass iff it fails by itself (nonzero exit, no timeout) and its output
# matches the extended regular expression PATTERN (a clear message, not a crash or a hang).
# --probe: first run `CMD -help` under the same limit; if even that does not end within SECONDS
# (seen on the GPU host: its CUDA PETSc spins in the kernel at start-up under ulimit -v), the host
# cannot run this check: skip (77).
probe=0
[ "$1" = "--probe" ] && { probe=1; shift; }
limit=$1 secs=$2 pattern=$3
shift 3
if [ $probe = 1 ]; then
  (ulimit -v "$limit" && exec timeout "$secs" "$1" -help) > /dev/null 2>&1
  if [ $? -eq 124 ]; then echo "under_memory_limit: '$1 -help' does not start within $secs s under ulimit -v $limit on this host: skipped"; exit 77; fi
fi
out=$( (ulimit -v "$limit" && exec timeout "$secs" "$@") 2>&1 )
rc=$?
echo "$out" | head -n 20
if [ "$rc" -eq 0 ]; then echo "under_memory_limit: '$*' succeeded under ulimit -v $limit"; exit 1; fi
if [ "$rc" -eq 124 ]; then echo "under_memory_limit: '$*' still running after $secs s"; exit 1; fi
if ! echo "$out" | grep -Eq "$pattern"; then echo "under_memory_limit: no line matches '$pattern' (exit $rc)"; exit 1; fi
echo "under_memory_limit: refused with exit $rc as expected"
