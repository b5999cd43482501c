"""fake_runner.py - SYNTHETIC stand-in for matxtract-label-runner, only to test labels.py, train.py and
report.py without a GPU. Same protocol (features / matrix / ready, then one JSON answer per
"TAU_C TAU_R MODE COLD" line); the features are real (matxtract-predictor features), the times are
an invented smooth function of the plan plus noise, and every answer carries "fake": true. Never use
its output as labels: train.py refuses to embed a model trained on fake records.

    fake_runner.py --tool BUILD/tuning/predictor/matxtract-predictor (-f FILE | -gen SPEC)
"""
import argparse
import json
import math
import random
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("-f")
    ap.add_argument("-gen")
    a, _ = ap.parse_known_args()
    src = ["-f", a.f] if a.f else ["-gen", a.gen]
    feats = json.loads(subprocess.run([a.tool, "features"] + src, check=True, capture_output=True, text=True).stdout)
    nnz = feats["nnz"]
    rng = random.Random(int(nnz) * 31 + int(feats["nrows"]))
    # invented optimum: skewed column lengths favour a larger hot region
    opt_c = min(1.0, 0.2 + feats["col_gini"])
    opt_r = opt_c * 0.5
    base = 5.0 + nnz * 4e-6
    print("features " + json.dumps(feats))
    print("matrix " + json.dumps(dict(nrows=feats["nrows"], ncols=feats["ncols"], nnz=nnz, gpu="FAKE", fake=True)))
    print("ready", flush=True)
    cold_f = {"segment": 1.0, "merge": 1.02 - 0.05 * feats["row_gini"], "cusparse": 1.01, "auto": 1.0}
    for line in sys.stdin:
        t = line.split()
        if not t or t[0] == "quit":
            break
        tc, tr, mode, cold = float(t[0]), float(t[1]), t[2], t[3]
        hot = tr > 0
        gain = 0.25 * feats["col_gini"] * math.exp(-((tc - opt_c) ** 2 + (tr - opt_r) ** 2) / 0.08) if hot else 0.0
        mode_f = 1.0 if not hot else (1.0 if (mode == "du") == (feats["chunk8_sorted_density"] > 0.3) else 1.03)
        t_us = base * (1.0 - gain) * mode_f * cold_f[cold]
        noise = [t_us * (1 + rng.gauss(0, 0.005)) for _ in range(5)]
        build = 1e-6 * nnz * (30 + 40 * tc) if hot else 0.01
        print(json.dumps(dict(ok=1, fake=True, tc=tc, tr=tr, mode_req=mode, cold=cold, cold_run=cold,
                              mode=("du" if mode == "du" else "se") if hot else "none", hot_nnz=int(nnz * tr),
                              hot_share=tr, build_ms=build, upload_ms=1e-6 * nnz * 3, rel_err=0.0,
                              t_us=sorted(noise)[2], rep_min_us=min(noise), rep_max_us=max(noise),
                              q1_us=sorted(noise)[1], q3_us=sorted(noise)[3], min_us=min(noise), max_us=max(noise))),
              flush=True)


if __name__ == "__main__":
    main()
