#!/bin/bash
# deps_errexit.sh - sourcing tests/deps.sh hands the caller's errexit back: on stays on (the test
# command must fail when a test fails), off stays off. A stand-in dpkg that reports every package
# installed keeps apt out of it (the GPU host has no network). Exit 0 pass, 1 fail.
set -u
cd "$(dirname "$0")/.."
stub=$(mktemp -d)
trap 'rm -rf "$stub"' EXIT
printf '#!/bin/sh\nexit 0\n' > "$stub/dpkg"
chmod +x "$stub/dpkg"
on=$(PATH="$stub:$PATH" bash -c 'set -e; source tests/deps.sh >/dev/null; case $- in *e*) echo on ;; *) echo off ;; esac')
off=$(PATH="$stub:$PATH" bash -c 'set +e; source tests/deps.sh >/dev/null; case $- in *e*) echo on ;; *) echo off ;; esac')
echo "errexit on before: $on after; off before: $off after"
[ "$on" = on ] && [ "$off" = off ]
