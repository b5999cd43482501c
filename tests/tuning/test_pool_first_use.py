#!/usr/bin/env python3
"""test_pool_first_use.py POOL_FIRST_USE - smoke test of matxtract-pool-first-use (tuning/bench/pool_first_use.cu):
each way of getting a pool in its own process (created, maxsize, default, malloc, mallocbig, twopools)
prints its one line of timings, every time a number >= 0; sizes prints one line per size (256 KiB to
32 MiB, 8 sizes). Exit 77
(skipped) when the program finds no CUDA device. Exits 1 on a wrong result."""
import re
import subprocess
import sys

from checks import expect, finish, skip  # beside this file

BIN = sys.argv[1]
WAYS = ["created", "maxsize", "default", "malloc", "mallocbig", "twopools"]


def run(way):
    p = subprocess.run([BIN, way], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, timeout=120)
    return p.returncode, p.stdout


rc, text = run(WAYS[0])
if rc == 77 and "no CUDA device" in text:
    skip("no CUDA device")
for way in WAYS:
    if way != WAYS[0]:
        rc, text = run(way)
    times = [float(t) for t in re.findall(r"([0-9]+\.[0-9]+) ms", text)]
    expect(rc == 0 and text.startswith(way + ": ") and len(times) >= 2 and min(times) >= 0,
           "%s: exit status %d, its line with %d times >= 0" % (way, rc, len(times)))
    if rc:
        print(text)
rc, text = run("sizes")
lines = [l for l in text.splitlines() if re.match(r"sizes: +\d+ KiB alloc [0-9.]+ ms, memset\+sync [0-9.]+ ms, free [0-9.]+ ms$", l)]
expect(rc == 0 and len(lines) == 8, "sizes: exit status %d, one line per size of 256 KiB to 32 MiB (%d)" % (rc, len(lines)))
finish()
