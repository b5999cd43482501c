#!/usr/bin/env python3
"""Summarise `ncu --csv --page raw` files written by ncu_cold.sh (one file per matrix and NVTX
range): one table row per kernel name (median over its launches), per input file."""
import csv
import os
import statistics
import sys

COLS = [  # (header, metric, scale)
    ("us", "gpu__time_duration.sum", 1e-3),
    ("DRAM rd MB", "dram__bytes_read.sum", 1e-6),
    ("L2 sect rd (M)", "lts__t_sectors_srcunit_tex_op_read.sum", 1e-6),
    ("L2 hit %", None, None),
    ("L1 req (M)", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", 1e-6),
    ("L1 sect (M)", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", 1e-6),
    ("L1 hit %", None, None),
    ("warps act %", "sm__warps_active.avg.pct_of_peak_sustained_active", 1),
    ("inst (M)", "smsp__inst_executed.sum", 1e-6),
    ("L2 thr %", "lts__throughput.avg.pct_of_peak_sustained_elapsed", 1),
    ("L1 thr %", "l1tex__throughput.avg.pct_of_peak_sustained_elapsed", 1),
    ("DRAM thr %", "dram__throughput.avg.pct_of_peak_sustained_elapsed", 1),
    ("stall lsb %", "smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct", 1),
    ("stall lg %", "smsp__warp_issue_stalled_lg_throttle_per_warp_active.pct", 1),
    ("stall bar %", "smsp__warp_issue_stalled_barrier_per_warp_active.pct", 1),
    ("grid", "launch__grid_size", 1),
    ("block", "launch__block_size", 1),
    ("regs", "launch__registers_per_thread", 1),
]


def num(s):
    try:
        return float(s.replace(",", ""))
    except ValueError:
        return float("nan")


def read_rows(path):
    with open(path, newline="") as f:
        lines = [l for l in f if l.startswith('"')]
    rows = list(csv.reader(lines))
    if not rows:
        return []
    head = rows[0]
    out = []
    for r in rows[2:]:  # rows[1] holds the units
        if len(r) == len(head) and r[0].isdigit():
            out.append(dict(zip(head, r)))
    return out


def by_kernel(rows):
    """(kernel name, its launches) in order of first appearance."""
    groups = {}
    for r in rows:
        groups.setdefault(r.get("Kernel Name", "?"), []).append(r)
    return groups.items()


def med(rs, m):
    return statistics.median(num(r.get(m, "nan")) for r in rs)


def extra_cols():
    """PROFILE_EXTRA_METRICS (ncu_cold.sh's environment): one more column each, unscaled, by name."""
    names = os.environ.get("PROFILE_EXTRA_METRICS", "")
    return [(m, m, 1) for m in names.split(",") if m]


def main():
    for path in sys.argv[1:]:
        rows = read_rows(path)
        cols = COLS + extra_cols()
        print(f"## {path.rsplit('/', 1)[-1]} ({len(rows)} launches profiled)\n")
        print("| kernel | launches | " + " | ".join(c[0] for c in cols) + " |")
        print("|---" * (len(cols) + 2) + "|")
        for name, rs in by_kernel(rows):
            cells = []
            for h, m, sc in cols:
                if h == "L2 hit %":
                    v = 100 * med(rs, "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum") / max(
                        med(rs, "lts__t_sectors_srcunit_tex_op_read.sum"), 1)
                elif h == "L1 hit %":
                    v = 100 * med(rs, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum") / max(
                        med(rs, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"), 1)
                else:
                    v = med(rs, m) * sc
                cells.append(f"{v:.1f}" if abs(v) < 1e5 else f"{v:.0f}")
            print(f"| {name.split('(')[0][:70]} | {len(rs)} | " + " | ".join(cells) + " |")
        print()


if __name__ == "__main__":
    main()
