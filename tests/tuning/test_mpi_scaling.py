#!/usr/bin/env python3
"""test_mpi_scaling.py ROOT - the MPI scaling driver tuning/mpi/scaling.sh (1 and 2 ranks, one GPU each)
with stand-ins for what needs the GPU host: nvidia-smi (lists 2 GPUs, then 1), mpiexec (runs the
program once, telling it the rank count) and matxtract-amortize (known times per rank count and type:
aijcusparse 200 / 125 us per iteration, matxtract 100 / 50 us, between log lines). With 2 GPUs
mpi_scaling.csv has every matrix on 1 and 2 ranks, prefixed with the rank count, and the table the
speedups 1 -> 2 (1.60x, 2.00x) and matxtract vs aijcusparse on 2 (2.50x); with 1 GPU the 2-rank runs
are skipped and said so, and their cells are "-". Exits 1 on a wrong result."""
import csv
import os
import stat
import subprocess
import sys
import tempfile

from checks import expect, finish  # beside this file

ROOT = sys.argv[1]
MATRICES = ["lap3d_200", "lap3d_250", "kron20", "kron21"]
MPIEXEC = """#!/bin/bash
[ "$1" = -n ] || { echo "stand-in mpiexec: -n N first" >&2; exit 2; }
export STUB_NP=$2
shift 2
exec "$@"
"""
NVIDIA_SMI = """#!/bin/bash
for i in $(seq 0 $((STUB_GPUS - 1))); do echo "GPU $i: Stand-in GPU (UUID: GPU-$i)"; done
"""
AMORTIZE = r"""#!/bin/bash
while [ $# -gt 0 ]; do
  case $1 in -name) name=$2 ;; -solver) solver=$2 ;; -types) types=$2 ;; esac
  shift 2
done
echo "log line of rank 0"
for t in ${types//,/ }; do
  case $t$STUB_NP in aijcusparse1) us=200 ;; aijcusparse2) us=125 ;; matxtract1) us=100 ;; matxtract2) us=50 ;; esac
  echo "$name,$t,$solver,0.01,$(awk -v us=$us 'BEGIN { print us * 1e-6 }'),200,0,0,0"
done
"""


def script(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, stat.S_IRWXU)


def run(tmp, gpus):
    out = os.path.join(tmp, "out%d" % gpus)
    env = dict(os.environ, PATH=os.path.join(tmp, "bin") + os.pathsep + os.environ["PATH"], STUB_GPUS=str(gpus))
    p = subprocess.run(["bash", os.path.join(ROOT, "tuning/mpi/scaling.sh"), out, os.path.join(tmp, "build")], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, universal_newlines=True, timeout=120, env=env)
    return p.returncode, p.stdout, out


with tempfile.TemporaryDirectory() as tmp:
    script(os.path.join(tmp, "bin", "mpiexec"), MPIEXEC)
    script(os.path.join(tmp, "bin", "nvidia-smi"), NVIDIA_SMI)
    script(os.path.join(tmp, "build", "tuning/amortization/matxtract-amortize"), AMORTIZE)
    rc, text, out = run(tmp, 2)
    expect(rc == 0, "scaling.sh runs with 2 GPUs (exit status %d)" % rc)
    rows = list(csv.DictReader(open(os.path.join(out, "mpi_scaling.csv"))))
    got = sorted((r["np"], r["matrix"], r["type"]) for r in rows)
    expect(got == sorted((np, m, t) for np in "12" for m in MATRICES for t in ("aijcusparse", "matxtract")),
           "mpi_scaling.csv: every matrix and type on 1 and 2 ranks, the CSV lines alone (%d rows)" % len(rows))
    expect("| kron20 | aijcusparse | 200.0 | 125.0 | 1.60x | 1.00x |" in text and "| kron20 | matxtract | 100.0 | 50.0 | 2.00x | 2.50x |" in text,
           "the table: per-iteration times, speedup 1 -> 2, matxtract vs aijcusparse on 2")
    rc, text, out = run(tmp, 1)
    rows = list(csv.DictReader(open(os.path.join(out, "mpi_scaling.csv"))))
    expect(rc == 0 and "only 1 GPU(s): skipping np=2" in text and {r["np"] for r in rows} == {"1"}, "with 1 GPU: np=2 skipped")
    expect("| lap3d_250 | matxtract | 100.0 | - | - | - |" in text, "with 1 GPU: the 2-rank cells are -")
    if rc:
        print(text)
finish()
