#!/bin/bash
# same_output.sh "CMD_A" "CMD_B" REGEX
# Runs two commands (';'-separated argument lists, as CMake passes them) and fails unless their
# outputs are identical after removing -mat_view lines (MatXtract:/Mat Object/type/rows...) from B,
# blanks aside (diff -w, as PETSc's own test harness compares; on 2 ranks a CI run once printed a
# KSP monitor line of B with 4 more leading blanks, the numbers the same).
# When REGEX is not empty, B's full output must also match it (e.g. proof that the hot path ran).
set -u
IFS=';' read -r -a cmd_a <<< "$1"
IFS=';' read -r -a cmd_b <<< "$2"
want=$3
out_a=$("${cmd_a[@]}" 2>&1) || { echo "command A failed:"; echo "$out_a"; exit 1; }
out_b=$("${cmd_b[@]}" 2>&1) || { echo "command B failed:"; echo "$out_b"; exit 1; }
strip() { grep -v -E '^ *(MatXtract:|Mat Object|type:|rows=|total: |total number of|not using I-node|using I-node|  [0-9]+ MPI process)'; }
if ! diff -w <(printf '%s\n' "$out_a") <(printf '%s\n' "$out_b" | strip); then
  echo "outputs differ (< A = ${cmd_a[*]}, > B = ${cmd_b[*]})"; exit 1
fi
if [ -n "$want" ] && ! printf '%s\n' "$out_b" | grep -q -E "$want"; then
  echo "output of B does not match /$want/:"; echo "$out_b"; exit 1
fi
echo "identical output ($(printf '%s\n' "$out_a" | wc -l) lines)"
