#!/usr/bin/env bash
# run_example.sh - run an example program and check what it prints.
#
#   run_example.sh [options] -- COMMAND [ARGS...]
#
#   --expected FILE   compare the output with FILE, leaving out the lines that describe the environment
#                     or the clock: lines starting with "time:", "compare:", "matrix type:", "matxtract:", "vector type:",
#                     "processes:", "ghosts per rank:", "partition:". Tokens are compared as text, except that two tokens that are both
#                     non-integer numbers (1.5e-03, 0.25, ...) may differ by --rtol/--atol; integers
#                     (iteration counts, node ids) must match exactly.
#   --rtol R          relative tolerance for non-integer numbers (default 0)
#   --atol A          absolute tolerance for non-integer numbers (default 0)
#   --line-rtol PREFIX R
#                     on expected lines starting with PREFIX, every number (integers too) may differ by the
#                     relative tolerance R (for a solver whose iteration count legitimately depends on the
#                     rounding of the SpMV, e.g. CG on an ill-conditioned matrix; may be repeated)
#   --grep REGEX      the output must have a line matching the extended REGEX (may be repeated)
#   --gpu 0|1         a GPU test: exit 77 (skipped) unless the PETSc build has CUDA (the argument, found
#                     by CMake) and a GPU is visible (nvidia-smi -L lists one)
#   --gpus N          with --gpu: skipped unless at least N GPUs are visible (one per rank)
#
# With MX_UPDATE_EXPECTED=1 in the environment the filtered output is written to the --expected file
# instead of compared (to regenerate the expected outputs after a deliberate change; review the diff).
set -u

expected=""
rtol=0
atol=0
gpu=""
gpus=1
greps=()
linertol=""
while [ $# -gt 0 ]; do
  case "$1" in
    --expected) expected="$2"; shift 2 ;;
    --rtol) rtol="$2"; shift 2 ;;
    --atol) atol="$2"; shift 2 ;;
    --grep) greps+=("$2"); shift 2 ;;
    --line-rtol) linertol="${linertol}${2}=${3};"; shift 3 ;;
    --gpu) gpu="$2"; shift 2 ;;
    --gpus) gpus="$2"; shift 2 ;;
    --) shift; break ;;
    *) echo "run_example.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[ $# -gt 0 ] || { echo "run_example.sh: no command given" >&2; exit 2; }

if [ -n "$gpu" ]; then
  if [ "$gpu" != 1 ]; then
    echo "SKIP: PETSc was built without CUDA"
    exit 77
  fi
  if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
    echo "SKIP: no GPU visible"
    exit 77
  fi
  visible=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
  if [ "$visible" -lt "$gpus" ]; then
    echo "SKIP: $gpus GPUs needed, $visible visible"
    exit 77
  fi
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mx_example.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT

echo "+ $*"
"$@" >"$tmp/out" 2>"$tmp/err"
rc=$?
cat "$tmp/out"
if [ -s "$tmp/err" ]; then
  echo "--- stderr ---"
  cat "$tmp/err"
fi
if [ $rc -ne 0 ]; then
  echo "FAIL: the command exited with status $rc"
  exit 1
fi

status=0
for re in ${greps[@]+"${greps[@]}"}; do
  if ! grep -Eq -- "$re" "$tmp/out"; then
    echo "FAIL: no output line matches /$re/"
    status=1
  fi
done

if [ -n "$expected" ]; then
  grep -Ev '^(time:|compare:|matrix type:|matxtract:|vector type:|processes:|ghosts per rank:|partition:)' "$tmp/out" >"$tmp/filtered"
  if [ "${MX_UPDATE_EXPECTED:-0}" = 1 ]; then
    cp "$tmp/filtered" "$expected" && echo "UPDATED: $expected"
    exit $status
  fi
  if [ ! -f "$expected" ]; then
    echo "FAIL: expected output $expected does not exist (run with MX_UPDATE_EXPECTED=1 to create it)"
    exit 1
  fi
  if ! awk -v rtol="$rtol" -v atol="$atol" -v linertol="$linertol" '
    function isint(s) { return s ~ /^[-+]?[0-9]+$/ }
    function isnum(s) { return s ~ /^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$/ }
    function strip(s) { sub(/^[(\[]+/, "", s); sub(/[,;:)\]]+$/, "", s); return s }
    function abs(v) { return v < 0 ? -v : v }
    function tokeq(a, b, lr,   x, y, d, m) {
      if (a == b) return 1
      x = strip(a); y = strip(b)
      if (!isnum(x) || !isnum(y)) return 0
      if (lr < 0 && (isint(x) || isint(y))) return 0
      d = abs(x - y); m = abs(x) > abs(y) ? abs(x) : abs(y)
      return d <= atol + (lr > rtol ? lr : rtol) * m
    }
    function line_rtol(line,   n, parts, k, eq) {
      n = split(linertol, parts, ";")
      for (k = 1; k <= n; k++) {
        eq = index(parts[k], "=")
        if (eq > 1 && index(line, substr(parts[k], 1, eq - 1)) == 1) return substr(parts[k], eq + 1) + 0
      }
      return -1
    }
    FNR == NR { want[++ne] = $0; next }
    { got[++ng] = $0 }
    END {
      bad = 0
      n = ne > ng ? ne : ng
      for (i = 1; i <= n; i++) {
        if (i > ne || i > ng) { bad = 1; break }
        na = split(want[i], ea, /[ \t]+/); nb = split(got[i], ga, /[ \t]+/)
        if (na != nb) { bad = 1; break }
        lr = line_rtol(want[i])
        for (k = 1; k <= na; k++) if (!tokeq(ea[k], ga[k], lr)) { bad = 1; break }
        if (bad) break
      }
      if (bad) {
        printf "FAIL: output differs from the expected output at line %d (rtol %s, atol %s%s)\n", i, rtol, atol, (lr >= 0 ? ", this line " lr : "")
        printf "  expected: %s\n  got:      %s\n", (i <= ne ? want[i] : "<end of file>"), (i <= ng ? got[i] : "<end of output>")
        exit 1
      }
    }' "$expected" "$tmp/filtered"; then
    echo "--- diff -u expected got (filtered) ---"
    diff -u "$expected" "$tmp/filtered"
    status=1
  fi
fi
[ $status -eq 0 ] && echo "PASS"
exit $status
