#!/usr/bin/env python3
"""test_amortization.py ROOT - the amortization study's driver tuning/amortization/run.sh and its table
and plots (plot.py). The GPU runs are replaced by a stand-in matxtract-amortize in a stand-in build
folder that prints known CSV lines among log lines (aijcusparse: setup 2 ms, 100 us per iteration;
matxtract at (0,0): 5 ms, 50 us; at the given crux: 10 ms, 40 us) and fails on rgg20. run.sh must keep
the CSV lines alone, rename the crux run matxtract_hot, pass each matrix's name, spec, solver and crux,
report the failed matrix and go on; plot.py's amortization.md must give the ratios (2.00x, 2.50x) and
break-even iterations ((5 - 2) ms / 50 us = 60.0, (10 - 2) / 60 us = 133.3) and one figure per matrix.
Needs matplotlib (Debian's python3-matplotlib): exit 77 (skipped) without it. Exits 1 on a wrong result."""
import csv
import os
import stat
import subprocess
import sys
import tempfile

from checks import expect, finish, needs  # beside this file

needs("matplotlib")

ROOT = sys.argv[1]
MATRICES = {"kron18": ("kron:18:16", "power", "0.9,0.8"), "kron20": ("kron:20:16", "power", "0.9,0.8"),
            "rgg20": ("rgg:20", "power", "0.6,0.3"), "lap2d_1000": ("lap2d:1000", "cg", "0.7,0.5"),
            "lap3d_100": ("lap3d:100", "cg", "0.7,0.5"), "band_1M_8": ("band:1000000:8", "power", "0.7,0.5")}
# arguments: -gen SPEC -name NAME -solver S -its N -types T [-mat_matxtract_crux C]
STUB = r"""#!/bin/bash
while [ $# -gt 0 ]; do
  case $1 in -gen) spec=$2 ;; -name) name=$2 ;; -solver) solver=$2 ;; -types) types=$2 ;; -mat_matxtract_crux) crux=$2 ;; esac
  shift 2
done
[ "$name" = rgg20 ] && { echo "stand-in: failing on purpose" >&2; exit 1; }
echo "amortize: $name ($spec), a log line, not CSV"
echo "$name $spec $solver $crux" >> "$(dirname "$0")/calls.txt"
for t in ${types//,/ }; do
  if [ "$t" = aijcusparse ]; then echo "$name,aijcusparse,$solver,0.002,0.0001,200,,,"
  elif [ -z "$crux" ]; then echo "$name,matxtract,$solver,0.005,0.00005,200,0,0,0"
  else echo "$name,matxtract,$solver,0.010,0.00004,200,$crux,0.4"; fi
done
"""

with tempfile.TemporaryDirectory() as tmp:
    build, out, bindir = os.path.join(tmp, "build"), os.path.join(tmp, "out"), os.path.join(tmp, "bin")
    exe = os.path.join(build, "tuning/amortization/matxtract-amortize")
    os.makedirs(os.path.dirname(exe))
    os.makedirs(bindir)
    with open(exe, "w") as f:
        f.write(STUB)
    os.chmod(exe, stat.S_IRWXU)
    os.symlink(sys.executable, os.path.join(bindir, "python3"))  # plot.py needs this python's matplotlib
    env = dict(os.environ, PATH=bindir + os.pathsep + os.environ["PATH"])
    p = subprocess.run(["bash", os.path.join(ROOT, "tuning/amortization/run.sh"), out, build], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True, timeout=120, env=env)
    expect(p.returncode == 0, "run.sh runs to the end (exit status %d)" % p.returncode)
    expect("FAILED rgg20" in p.stdout and "FAILED rgg20 hot" in p.stdout and p.stdout.count("FAILED") == 2, "the failed matrix is reported")
    calls = sorted(l.split() for l in open(os.path.join(build, "tuning/amortization/calls.txt")))
    want = sorted([n, s, sv] for n, (s, sv, _) in MATRICES.items() if n != "rgg20") + \
        sorted([n, s, sv, c] for n, (s, sv, c) in MATRICES.items() if n != "rgg20")
    expect(calls == sorted(want), "each matrix run with its name, spec and solver, then with its crux")
    rows = list(csv.DictReader(open(os.path.join(out, "amortization.csv"))))
    expect(len(rows) == 15 and sorted({r["type"] for r in rows}) == ["aijcusparse", "matxtract", "matxtract_hot"],
           "amortization.csv: the CSV lines alone, 3 per matrix, the crux run as matxtract_hot (%d rows)" % len(rows))
    md = open(os.path.join(out, "amortization.md")).read()
    expect("| kron18 | power | matxtract (0,0) | 5.00 | 50.0 | 2.00x | 60.0 |" in md, "amortization.md: matxtract at (0,0): 2.00x, break-even 60.0")
    expect("| lap2d_1000 | cg | matxtract_hot (0.7,0.5) | 10.00 | 40.0 | 2.50x | 133.3 |" in md,
           "amortization.md: matxtract at the crux: 2.50x, break-even 133.3")
    expect("| band_1M_8 | power | aijcusparse | 2.00 | 100.0 |  |  |" in md, "amortization.md: the base row")
    pngs = sorted(n for n in os.listdir(out) if n.endswith(".png"))
    expect(pngs == sorted("amortization_%s.png" % n for n in MATRICES if n != "rgg20"), "one figure per matrix that ran")
    if p.returncode:
        print(p.stdout)
finish()
