#!/usr/bin/env python3
"""test_setup_table.py BENCH_DIR - tuning/bench/setup_table.py on known numbers: the break-even rule
in each of its four cases, and the whole table (ratios, the issue's counts, the amortization rows)
from a small spmv_petsc.csv written here. Exits 1 on the first wrong result."""
import contextlib
import csv
import io
import os
import sys
import tempfile

sys.path.insert(0, sys.argv[1])
import setup_table  # noqa: E402
from checks import expect, finish  # noqa: E402 (beside this file)


def check_breakeven():
    # setup ms, t us (matxtract), setup ms, t us (base)
    expect(setup_table.breakeven(10.0, 90.0, 12.0, 100.0) == "0", "cheaper and faster: never behind")
    expect(setup_table.breakeven(12.0, 90.0, 10.0, 100.0) == "200", "2 ms more, 10 us saved per MatMult: 200")
    expect(setup_table.breakeven(12.0, 99.9, 10.0, 100.0) == "20001", "a fraction rounds up")
    expect(setup_table.breakeven(10.0, 110.0, 12.0, 100.0) == "ahead < 200", "cheaper, slower: ahead for 200 MatMults")
    expect(setup_table.breakeven(12.0, 110.0, 10.0, 100.0) == "never", "dearer and slower: never")
    expect(setup_table.breakeven(10.0, 110.0, 10.0, 100.0) == "never", "as dear and slower: never")


ROWS = [  # matrix, nnz, variant, t_med_us, setup_ms, predict_ms
    ("big", 2000000, "aijcusparse", 100.0, 50.0, ""),
    ("big", 2000000, "matxtract", 80.0, 45.0, 1.0),
    ("big", 2000000, "matxtract_1_1", 70.0, 65.0, 0.0),
    ("small", 500000, "aijcusparse", 10.0, 5.0, ""),
    ("small", 500000, "matxtract", 12.0, 6.0, 0.5),
    ("small", 500000, "matxtract_1_1", 9.0, 7.0, 0.0),
    ("tiny", 1000, "aijcusparse", 1.0, 2.0, ""),
    ("tiny", 1000, "matxtract", 1.0, 2.0, 0.0),
    ("tiny", 1000, "matxtract_1_1", 1.0, 2.0, 0.0),
]


def check_table():
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "spmv_petsc.csv")
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["matrix", "nnz", "variant", "t_med_us", "setup_ms", "predict_ms"])
            w.writerows(ROWS)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            setup_table.main([path])
    text = out.getvalue()
    expect("| big | 2.0 | 50.0 | 45.0 | 65.0 | 0.90 | 1.30 |" in text, "ratios of the >= 1M matrix")
    expect("matrices >= 1M nonzeros: 1; (0,0) <= 1.0x: 1; every crux <= 1.2x: 0" in text, "the issue's counts skip the small matrix")
    expect("| big | 100.0 | 80.0 | 0 | 70.0 | 500 |" in text, "amortization row: (0,0) never behind, (1,1) after 500 MatMults")
    expect("| small | 10.0 | 12.0 | never | 9.0 | 2000 |" in text, "amortization row of the small matrix")
    expect("matrices: 2; median share 6.0%; above 5%: 1; small 10.0% (0.50 of 5.0 ms)" in text,
           "prediction cost: 2% and 10% of the base's setup (tiny: no prediction, skipped), median 6%, one above 5%")


check_breakeven()
check_table()
finish()
