#!/usr/bin/env python3
"""test_ab_env.py ROOT - tuning/bench/ab_env.sh (A/B of environment knobs, one benchmark run per setting)
with a stand-in benchmark (BIN) that prints its arguments and the knobs it sees: ab.md has one heading
per setting, in order, each followed by that run's output; each run saw its own setting's variables
and none of another's, got the benchmark arguments and its own -o folder. Exits 1 on a wrong result."""
import os
import stat
import subprocess
import sys
import tempfile

from checks import expect, finish  # beside this file

ROOT = sys.argv[1]
FAKE = """#!/bin/sh
echo "args: $*"
echo "knobs: A=${MX_AB_A:-unset} B=${MX_AB_B:-unset}"
"""

with tempfile.TemporaryDirectory() as tmp:
    fake = os.path.join(tmp, "bench")
    with open(fake, "w") as f:
        f.write(FAKE)
    os.chmod(fake, stat.S_IRWXU)
    out = os.path.join(tmp, "ab")
    p = subprocess.run(["bash", os.path.join(ROOT, "tuning/bench/ab_env.sh"), out, "", "MX_AB_A=1 MX_AB_B=2", "MX_AB_B=7", "--", "-gen", "lap2d:30"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, timeout=60, env=dict(os.environ, BIN=fake))
    expect(p.returncode == 0, "ab_env.sh runs (exit status %d)" % p.returncode)
    want = []
    for k, (name, knobs) in enumerate((("defaults", "A=unset B=unset"), ("MX_AB_A=1 MX_AB_B=2", "A=1 B=2"), ("MX_AB_B=7", "A=unset B=7"))):
        want += ["## setting %d: '%s'" % (k, name), "args: -gen lap2d:30 -o %s/ab-%d" % (out, k), "knobs: " + knobs]
    got = open(os.path.join(out, "ab.md")).read().splitlines()
    expect(got == want, "ab.md: each setting's heading, then its run with its own knobs, arguments and -o folder")
    if got != want:
        print("\n".join(got))
finish()
