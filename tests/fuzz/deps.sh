#!/bin/bash
# deps.sh - what the fuzz build needs besides tests/deps.sh (Debian 12): clang 14 and its runtime
# libraries (libFuzzer, ASan, UBSan), installed only where missing. Sourced by tests/fuzz/run.sh.
mx_fuzz_need=""
for p in clang-14 libclang-rt-14-dev cmake make; do
  dpkg -s "$p" >/dev/null 2>&1 || mx_fuzz_need="$mx_fuzz_need $p"
done
if [ -n "$mx_fuzz_need" ]; then
  mx_sudo=""; [ "$(id -u)" -eq 0 ] || mx_sudo=sudo
  echo "installing:$mx_fuzz_need"
  $mx_sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $mx_sudo apt-get install -y -qq $mx_fuzz_need >/dev/null
fi
