#!/bin/bash
# under_memory_limit.sh LIMIT_KB SECONDS PATTERN CMD [ARG...] - run CMD under `ulimit -v LIMIT_KB`
# for at most SECONDS; pass iff it fails by itself (nonzero exit, no timeout) and its output
# matches the extended regular expression PATTERN (a clear message, not a crash or a hang).
limit=$1 secs=$2 pattern=$3
shift 3
out=$( (ulimit -v "$limit" && exec timeout "$secs" "$@") 2>&1 )
rc=$?
echo "$out" | head -n 20
if [ "$rc" -eq 0 ]; then echo "under_memory_limit: '$*' succeeded under ulimit -v $limit"; exit 1; fi
if [ "$rc" -eq 124 ]; then echo "under_memory_limit: '$*' still running after $secs s"; exit 1; fi
if ! echo "$out" | grep -Eq "$pattern"; then echo "under_memory_limit: no line matches '$pattern' (exit $rc)"; exit 1; fi
echo "under_memory_limit: refused with exit $rc as expected"
