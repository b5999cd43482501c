#!/bin/bash
# The one regenerating command of the predictor, on the GPU host (tuning/predictor/README.md):
#   bash tuning/predictor/run_labels.sh [LABELS.PY ARGS...]      e.g. --max-nnz 5000000 --limit 60
# setup + build as tuning/gpu_cycle.sh does them (PETSc+CUDA bundle, build-gpu/, sm_90), then
#   1. labels.py   BO labels of the whole corpus (train and test), one runner per GPU
#   2. train.py    RF vs GB vs AdaBoost by grouped CV on train; model.txt (+ the C source if EMBED=1)
#   3. labels.py   --plans: the measured time of each test matrix's predicted plan
#   4. report.py   tuning/results/<gpu>/predictor-<date>/ (copied into $OUT/predictor-results.tgz)
# Work files go to $OUT/predictor (labels.jsonl files are appended to: a rerun continues).
set -euo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-$PWD/gpu-out}
W=$OUT/predictor
mkdir -p "$W"
BUILD_TARGETS="matxtract-gen matxtract-predictor matxtract-label-runner" bash tuning/gpu_cycle.sh setup build
. tuning/gpu_env.sh
export PYTHONUNBUFFERED=1
build-gpu/tuning/predictor/matxtract-predictor names > "$W/names.txt"
python3 tuning/predictor/labels.py -o "$W/labels" --build build-gpu "$@"
python3 tuning/predictor/train.py "$W/labels/labels.jsonl" -o "$W/train" --names "$W/names.txt" ${EMBED:+--embed}
python3 tuning/predictor/labels.py -o "$W/measured" --build build-gpu --split test --plans "$W/train/predictions.json"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | grep -oiE 'h100|h200|a100|l40s|b200' | tr A-Z a-z || echo gpu)
res=tuning/results/${gpu:-gpu}/predictor-$(date -u +%F)
python3 tuning/predictor/report.py --labels "$W/labels/labels.jsonl" --measured "$W/measured/labels.jsonl" \
  --train "$W/train" -o "$res" --command "bash tuning/predictor/run_labels.sh $*"
cp "$W/train/model.txt" "$W/train/cv.csv" "$W/train/train_summary.json" "$res/"
tar czf "$OUT/predictor-results.tgz" "$res" "$W/labels/labels.jsonl" "$W/measured/labels.jsonl" "$W/train"
