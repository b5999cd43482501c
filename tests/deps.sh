#!/bin/bash
# deps.sh - install what building and testing matxtract needs on Debian 12, only where missing.
# Sourced by tests/run.sh and examples/demo.sh. Needs root (or sudo) the first time. Runs with
# errexit and hands the caller's errexit setting back (tests/run.sh must fail when a test fails).
case $- in *e*) mx_errexit=1 ;; *) mx_errexit=0 ;; esac
set -e
mx_need=""
# python3-pandas, -matplotlib, -sklearn: the tuning scripts' smoke tests (tests/tuning/README.md)
for p in petsc-dev libpetsc3.18-dev-examples python3-petsc4py python3-pandas python3-matplotlib python3-sklearn cmake pkg-config gcc g++ make; do
  dpkg -s "$p" >/dev/null 2>&1 || mx_need="$mx_need $p"
done
if [ -n "$mx_need" ]; then
  mx_sudo=""; [ "$(id -u)" -eq 0 ] || mx_sudo=sudo
  echo "installing:$mx_need"
  $mx_sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $mx_sudo apt-get install -y -qq $mx_need >/dev/null
fi
# The CUDA toolkit is optional: found on PATH or in /usr/local/cuda, the GPU kernels are built too.
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH=/usr/local/cuda/bin:$PATH; fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
[ "$mx_errexit" = 1 ] || set +e
