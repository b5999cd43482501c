#!/usr/bin/env python3
"""test_ncu_profile.py ROOT BUILD_DIR - the Nsight Compute drivers on the GPU host: tuning/profile/ncu_cold.sh
profiles 2 launches of matxtract-bench's seg00 range on a small stencil (its raw CSV holds them and
summary.md a kernel row with 2 launches), tuning/profile/ncu_pack.sh one segment kernel launch of
cold-pack-bench on a small unweighted graph (its report has the kernel's duration). Exit 77 (skipped)
without ncu on PATH or without a GPU named by nvidia-smi. Exits 1 on a wrong result."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

from checks import expect, finish, skip  # beside this file

ROOT, BUILD = sys.argv[1], sys.argv[2]
gpus = subprocess.run(["nvidia-smi", "-L"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, universal_newlines=True).stdout \
    if shutil.which("nvidia-smi") else ""
if not shutil.which("ncu") or "GPU " not in gpus:
    skip("no ncu on PATH or no GPU")


def run(script, out, args, env_extra):
    env = dict(os.environ, **env_extra)
    p = subprocess.run(["bash", os.path.join(ROOT, "tuning/profile", script), out] + args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True, timeout=280, env=env)
    return p.returncode, p.stdout


with tempfile.TemporaryDirectory() as tmp:
    cold = os.path.join(tmp, "cold")
    rc, text = run("ncu_cold.sh", cold, ["lap2d:300"], {"PROFILE_RANGES": "seg00", "PROFILE_SKIP": "0", "PROFILE_LAUNCHES": "2",
                                                        "BIN": os.path.join(BUILD, "tuning/bench/matxtract-bench")})
    raw = open(os.path.join(cold, "lap2d_300-seg00.csv")).read()
    launches = len(re.findall(r'^"\d+"', raw, re.M))
    expect(rc == 0 and "ncu status 0 (2 launches)" in text and launches == 2, "ncu_cold.sh: 2 launches of seg00 profiled (%d)" % launches)
    summary = open(os.path.join(cold, "summary.md")).read()
    expect(re.search(r"^\| .+ \| 2 \| [0-9.]+ \|", summary, re.M) is not None, "summary.md: a kernel row with 2 launches and its time")
    pack = os.path.join(tmp, "pack")
    # PACK_KERNEL: any segment kernel (the packed one is chosen by the matrix; the plain one always runs)
    rc, text = run("ncu_pack.sh", pack, ["kron:14:16@ones"], {"BIN": os.path.join(BUILD, "tuning/bench/cold-pack-bench"),
                                                             "PACK_KERNEL": "mx_cold_segment_kernel"})
    report = open(os.path.join(pack, "ncu-kron_14_16_ones.txt")).read()
    expect(rc == 0 and "ncu status 0" in text and "Duration" in report, "ncu_pack.sh: the packed kernel's report with its duration")
    if "Duration" not in report:
        print(text, report[-3000:])
finish()
