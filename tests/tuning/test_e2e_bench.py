#!/usr/bin/env python3
"""test_e2e_bench.py MATXTRACT_E2E E2E_DIR [--gpu] - smoke test of matxtract-e2e (tuning/e2e/e2e_bench.c) and
of protocol_summary.py on its output: a tiny generated matrix, -its 200, two types into one CSV; the CSV's
columns, one row per run, the products checked (rel_err <= 1e-12), the batches and totals that 200 MatMults
give; a perturbed product (-e2e_fault) must fail the run (exit status 2, check FAIL); a CSV with other
columns must be refused. Host part (label petsc): aij and matxtract with -cpu. --gpu (label gpu):
aijcusparse and matxtract on the GPU, exit 77 (skipped) when the program finds no usable GPU.
Exits 1 on a wrong result."""
import csv
import os
import subprocess
import sys
import tempfile

from checks import expect, finish  # beside this file

BIN, E2E_DIR = sys.argv[1], sys.argv[2]
GPU = "--gpu" in sys.argv[3:]
sys.path.insert(0, E2E_DIR)
import protocol_summary  # noqa: E402

COLUMNS = ["matrix", "source", "values", "rows", "cols", "nnz", "type", "vec_type", "gpu", "its", "setup_s", "first_batch_per_mult_s",
           "steady_per_mult_s", "total_100_s", "total_1000_s", "total_3000_s", "dev_bytes_per_nnz", "rel_err", "check",
           "mx_crux_tc", "mx_cold_kernel", "mx_plan_settled", "mx_device_bytes", "mx_build_peak_bytes", "mx_compress_values", "batches_s"]
SPEC = "lap2d:24@unique"  # 576 rows, 2,784 nonzeros


def run(args, csv_path):
    p = subprocess.run([BIN, "-gen", SPEC, "-its", "200", "-o", csv_path] + args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True, timeout=120)
    return p.returncode, p.stdout


def rows_of(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def check_row(r, mtype):
    what = "%s row" % mtype
    expect(r["type"] == mtype and r["matrix"] == SPEC and r["values"] == "unique", what + ": type, name and values label")
    expect(r["rows"] == "576" and r["cols"] == "576" and r["nnz"] == "2784", what + ": rows, cols, nnz (lap2d:24)")
    expect(r["its"] == "200" and r["check"] == "ok" and float(r["rel_err"]) <= 1e-12, what + ": 200 its, product checked (rel_err %s)" % r["rel_err"])
    expect(float(r["setup_s"]) > 0 and float(r["steady_per_mult_s"]) > 0 and float(r["first_batch_per_mult_s"]) > 0, what + ": times > 0")
    batches = [float(b) for b in r["batches_s"].split(";")]
    expect(len(batches) == 2, what + ": two batches of 100")
    expect(abs(float(r["total_100_s"]) - (float(r["setup_s"]) + batches[0])) <= 1e-5 * float(r["total_100_s"]) + 1e-9,
           what + ": total_100 = setup + the first batch")
    expect(r["total_1000_s"] == "" and r["total_3000_s"] == "", what + ": no total after 1000 or 3000 of 200 MatMults")
    expect(bool(r["mx_cold_kernel"]) == (mtype == "matxtract"), what + ": plan columns only for matxtract")
    if GPU:
        expect(r["gpu"] != "cpu" and r["vec_type"] == "seqcuda" and float(r["dev_bytes_per_nnz"]) > 0, what + ": GPU, device vectors and bytes")
    else:
        expect(r["gpu"] == "cpu" and r["dev_bytes_per_nnz"] == "", what + ": CPU run, no device bytes")


with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "e2e.csv")
    types = ["aijcusparse", "matxtract"] if GPU else ["aij", "matxtract"]
    extra = [] if GPU else ["-cpu"]
    if GPU:
        rc, text = run(["-type", "aijcusparse"], out)
        if rc != 0 and "needs a usable GPU" in text:
            print("no usable GPU: skipped")
            sys.exit(77)
        os.remove(out)
    for t in types:
        rc, text = run(["-type", t] + extra, out)
        expect(rc == 0, "-type %s runs (exit status %d)" % (t, rc))
        if rc:
            print(text)
    rows = rows_of(out)
    with open(out) as f:
        header = f.readline().strip().split(",")
    expect(all(c in header for c in COLUMNS), "the CSV has the protocol's columns (missing: %s)" % [c for c in COLUMNS if c not in header])
    expect(len(rows) == 2, "one row per run, the header once")
    for r, t in zip(rows, types):
        check_row(r, t)

    rc, text = run(["-type", "matxtract", "-e2e_fault"] + extra, out)
    rows = rows_of(out)
    expect(rc == 2 and len(rows) == 3 and rows[-1]["check"] == "FAIL", "a perturbed product fails the run (exit status %d)" % rc)

    other = os.path.join(tmp, "other.csv")
    with open(other, "w") as f:
        f.write("matrix,type,seconds\n")
    rc, text = run(["-type", types[0]] + extra, other)
    expect(rc != 0 and "other columns" in text, "a CSV with other columns is refused")

    md = os.path.join(tmp, "protocol.md")
    rc = protocol_summary.main(["-o", md, out])
    with open(md) as f:
        text = f.read()
    expect(rc == 1 and "wrong product" in text, "the summary reports the wrong product (exit status 1)")
    cases = protocol_summary.cases(rows_of(out))
    expect(len(cases) == 1 and cases[0]["base"]["n"] == 1 and cases[0]["mx"]["n"] == 1, "the summary pairs the two correct runs")
    expect(cases[0]["total@100"] is not None and cases[0]["total@1000"] is None, "the summary's total@100 ratio, no total@1000")
finish()
