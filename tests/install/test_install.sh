#!/bin/bash
# test_install.sh BUILD_DIR SOURCE_DIR: install into a scratch prefix, then build and run a consumer
# with find_package(MatXtract), and compile it again with the flags pkg-config gives.
set -euo pipefail
build=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
cmake -S "$src" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/consumer" >/dev/null
LD_LIBRARY_PATH="$tmp/prefix/lib:${LD_LIBRARY_PATH:-}" "$tmp/consumer/consumer" | grep -q "consumer ok"
pcdir=$(dirname "$(find "$tmp/prefix" -name matxtract.pc)")
flags=$(PKG_CONFIG_PATH="$pcdir:${PKG_CONFIG_PATH:-}" pkg-config --cflags --libs matxtract)
mpicc "$src/consumer.c" -o "$tmp/consumer_pc" $flags
petsc_libdir=$(PKG_CONFIG_PATH="$pcdir:${PKG_CONFIG_PATH:-}" pkg-config --variable=libdir PETSc)
LD_LIBRARY_PATH="$pcdir/..:$petsc_libdir:${LD_LIBRARY_PATH:-}" "$tmp/consumer_pc" | grep -q "consumer ok"
echo "install ok: find_package and pkg-config"
