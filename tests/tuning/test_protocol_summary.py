#!/usr/bin/env python3
"""test_protocol_summary.py E2E_DIR - tuning/e2e/protocol_summary.py on known numbers: medians over
repetitions, the ratios' directions, geometric means, worst cases and each issue-39 criterion's PASS/FAIL.
Exits 1 on a wrong result."""
import math
import sys

sys.path.insert(0, sys.argv[1])
import protocol_summary as ps  # noqa: E402
from checks import expect, finish  # noqa: E402 (beside this file)


def row(case, mtype, setup, steady, t100, t1000, t3000, bpn, nnz=2000000, check="ok"):
    return {"matrix": case, "values": "unique", "rows": "1000", "nnz": str(nnz), "type": mtype, "vec_type": "seqcuda", "check": check,
            "rel_err": "0" if check == "ok" else "1e-3", "setup_s": str(setup), "convert_s": "", "first_mult_s": "",
            "first_batch_per_mult_s": "", "steady_per_mult_s": str(steady), "total_100_s": str(t100), "total_1000_s": str(t1000),
            "total_3000_s": str(t3000), "total_its_s": str(t3000), "dev_bytes_per_nnz": str(bpn), "mx_cold_kernel": "segment" if mtype == "matxtract" else "",
            "mx_crux_tc": "0", "mx_crux_tr": "0", "mx_crux_source": "default", "mx_hot_mode": "none", "mx_compress_in_use": "0",
            "mx_hub_columns": "0", "mx_plan_settled": "1"}


def close(a, b):
    return a is not None and abs(a - b) <= 1e-9 * max(1.0, abs(b))


# case A: matxtract 2x faster at 1000, setup faster, bytes 0.8; two base runs (median of 1.0 and 3.0 = 2.0)
rows = [row("A", "aijcusparse", 0.2, 2e-4, 0.4, 1.0, 3.0, 14.0), row("A", "aijcusparse", 0.2, 2e-4, 0.4, 3.0, 3.0, 14.0),
        row("A", "matxtract", 0.1, 1e-4, 0.2, 1.0, 1.5, 11.2),
        # case B: matxtract 1.25x at 1000, setup slower (1.25x more), bytes 1.2 (over 1.15)
        row("B", "aijcusparse", 0.1, 1e-4, 0.3, 1.0, 2.0, 10.0), row("B", "matxtract", 0.125, 0.8e-4, 0.35, 0.8, 1.6, 12.0),
        # case C: a wrong matxtract product only: the case has no matxtract median
        row("C", "aijcusparse", 0.1, 1e-4, 0.3, 1.0, 2.0, 10.0, nnz=50000), row("C", "matxtract", 0.1, 1e-4, 0.3, 1.0, 2.0, 10.0, check="FAIL")]
cs = ps.cases(rows)
a, b, c = cs
expect(ps.base_type(rows) == "aijcusparse" and ps.base_type([rows[-1]]) == "aij", "base type: aijcusparse when present, else aij")
expect(a["base"]["n"] == 2 and close(a["base"]["total_1000_s"], 2.0), "median over repetitions")
expect(close(a["total@1000"], 2.0) and close(a["setup"], 2.0) and close(a["steady"], 2.0), "ratios are base / matxtract")
expect(close(a["bytes"], 0.8), "bytes ratio is matxtract / base")
expect(close(b["total@1000"], 1.25) and close(b["setup"], 0.8) and close(b["bytes"], 1.2), "case B's ratios")
expect(c["mx"] is None and c["total@1000"] is None, "a wrong product is left out of the medians")
expect(close(ps.geomean([2.0, 1.25]), math.sqrt(2.5)), "geomean")
expect(ps.separation(0.10, 0.12, 0.08, 0.09) == "apart" and ps.separation(0.10, 0.12, 0.11, 0.13) == "overlap"
       and ps.separation(0.10, 0.12, 0.13, 0.14) == "apart (slower)" and ps.separation(None, None, 0.1, 0.2) == "", "separation")
expect(ps.worst(cs, "setup") == (0.8, "B") and ps.worst(cs, "bytes", largest=True) == (1.2, "B"), "worst cases")
crit = dict((name.split(":")[0], verdict) for name, verdict, _ in ps.criteria(cs))
# total@1000 geomean sqrt(2.5) = 1.58 >= 1.30, no case < 1: PASS; total@100: A 2.0, B 0.857: FAIL; setup B 0.8: FAIL;
# bytes B 1.2 > 1.15: FAIL; steady geomean sqrt(2 * 1.25) = 1.581 >= 1.58 (issue 39's bar): PASS
expect(crit == {"total@1000": "PASS", "total@100": "FAIL", "setup": "FAIL", "device bytes": "FAIL", "steady": "PASS"},
       "criteria verdicts %s" % crit)
crit = dict((name.split(":")[0], verdict) for name, verdict, _ in ps.criteria(ps.cases(rows[:3])))
expect(crit["total@100"] == "PASS" and crit["setup"] == "PASS" and crit["device bytes"] == "PASS", "case A alone passes")
slow = [row("D", "aijcusparse", 0.1, 1e-4, 0.3, 1.0, 2.0, 10.0), row("D", "matxtract", 0.1, 0.9e-4, 0.3, 0.9, 2.0, 10.0)]
crit = dict((name.split(":")[0], verdict) for name, verdict, _ in ps.criteria(ps.cases(slow)))
expect(crit["total@1000"] == "FAIL", "total@1000 1.11x: below the 1.30x geomean")
expect(crit["steady"] == "FAIL", "steady 1.11x: below issue 39's 1.58x")
crit = dict((name.split(":")[0], verdict) for name, verdict, _ in ps.criteria(ps.cases(slow), steady_min=1.0))
expect(crit["steady"] == "PASS", "steady 1.11x: above a bar of 1.00x (--steady-min 1)")
cpu = [dict(r, dev_bytes_per_nnz="") for r in rows[:3]]
crit = dict((name.split(":")[0], verdict) for name, verdict, _ in ps.criteria(ps.cases(cpu)))
expect(crit["device bytes"] == "n/a", "no device bytes (CPU): n/a")
text = ps.markdown(cs, ps.criteria(cs), {}, rows, [{"case": "E", "type": "matxtract", "rep": "1", "rc": "skipped", "log": ""}])
expect("wrong product: C matxtract" in text and "run skipped: E matxtract" in text and "C: no correct matxtract run" in text,
       "the problems are listed")
expect("| **FAIL** |" in text and "| **PASS** |" in text, "the criteria table")
finish()
