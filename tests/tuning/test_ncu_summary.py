#!/usr/bin/env python3
"""test_ncu_summary.py PROFILE_DIR - tuning/profile/ncu_summary.py on a known `ncu --csv --page raw` file
(ncu's header line, its units line, then one line per launch; a log line before them): one table row
per kernel in order of first appearance with its launch count and medians (time in us from ns, DRAM
MB, L2 and L1 hit rates as percentages of the medians), and a column per PROFILE_EXTRA_METRICS name.
Exits 1 on a wrong result."""
import os
import subprocess
import sys
import tempfile

from checks import expect, finish  # beside this file

PROFILE_DIR = sys.argv[1]
METRICS = ["gpu__time_duration.sum", "dram__bytes_read.sum", "lts__t_sectors_srcunit_tex_op_read.sum",
           "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
           "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum", "launch__grid_size", "my__extra.sum"]
# kernel, then the metrics above: seg x3 (medians 20,000 ns, 8e6 B, 1e6 / 2.5e5 L2, 4e6 / 1e6 L1), alg2 x2
LAUNCHES = [("mx_seg(int)", [20000, 8e6, 1e6, 2.5e5, 4e6, 1e6, 132, 5]), ("mx_seg(int)", [30000, 9e6, 2e6, 5e5, 5e6, 2e6, 132, 6]),
            ("csrmv_v3_kernel", [50000, 1.6e7, 3e6, 3e6, 1e7, 5e6, 264, 7]), ("mx_seg(int)", [10000, 7e6, 1e6, 2.5e5, 4e6, 1e6, 132, 7]),
            ("csrmv_v3_kernel", [70000, 1.8e7, 3e6, 3e6, 1e7, 5e6, 264, 9])]


def q(cells):
    return ",".join('"%s"' % c for c in cells) + "\n"


with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "lap2d_100-seg00.csv")
    with open(path, "w") as f:
        f.write("==PROF== Connected to process 1234\n")
        f.write(q(["ID", "Process ID", "Kernel Name"] + METRICS))
        f.write(q(["", "", ""] + ["nsecond", "byte", "sector", "sector", "sector", "sector", "", ""]))
        for k, (name, values) in enumerate(LAUNCHES):
            f.write(q([str(k), "1234", name] + ["{:,}".format(v) if v >= 1000 else str(v) for v in values]))
    p = subprocess.run([sys.executable, os.path.join(PROFILE_DIR, "ncu_summary.py"), path], stdout=subprocess.PIPE, universal_newlines=True,
                       env=dict(os.environ, PROFILE_EXTRA_METRICS="my__extra.sum"), timeout=60)
    text = p.stdout
    expect(p.returncode == 0 and "## lap2d_100-seg00.csv (5 launches profiled)" in text, "the file's heading with 5 launches")
    head = [l for l in text.splitlines() if l.startswith("| kernel |")]
    expect(len(head) == 1 and head[0].endswith("| regs | my__extra.sum |"), "the extra metric's column")
    rows = [l for l in text.splitlines() if l.startswith("| mx_seg") or l.startswith("| csrmv")]
    expect([r.split(" | ")[0] for r in rows] == ["| mx_seg", "| csrmv_v3_kernel"], "one row per kernel, the name without its arguments")
    if len(rows) == 2:
        seg = [c.strip() for c in rows[0].strip("|").split("|")]
        expect(seg[1:5] == ["3", "20.0", "8.0", "1.0"], "mx_seg: 3 launches, 20.0 us, 8.0 DRAM MB, 1.0 M L2 sectors (%s)" % seg[1:5])
        expect(seg[5] == "25.0" and seg[8] == "25.0", "mx_seg: L2 hit 25.0 %, L1 hit 25.0 %")
        alg = [c.strip() for c in rows[1].strip("|").split("|")]
        expect(alg[1:3] == ["2", "60.0"] and alg[5] == "100.0" and alg[-1] == "8.0", "csrmv: 2 launches, 60.0 us, L2 hit 100 %, extra median 8.0")
finish()
