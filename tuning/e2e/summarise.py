#!/usr/bin/env python3
"""Summarise the end-to-end study written by tuning/e2e/run.sh (Python 3 standard library only).

    python3 tuning/e2e/summarise.py OUTDIR

Reads OUTDIR/runs.tsv (one line per run: matrix, example, mat_type, iterations, rep, rc, log), the logs
it names (the examples' "time:" lines, "iterations:", the "matxtract: plan after ..." line and the
-info decisions of matxtract) and OUTDIR/env.txt. Writes
  OUTDIR/e2e_runs.csv  every run, parsed;
  OUTDIR/e2e.csv       one row per (matrix, example, mat_type, iterations): medians over the repetitions;
  OUTDIR/e2e.md        the tables, the issue-11 PageRank criterion, and what went wrong (failed runs,
                       iteration counts other than asked).
Definitions (seconds, wall clock): setup_s = MatConvert from AIJ + first MatMult (+ KSPSetUp for CG);
solve_s = the iterations; total_s = setup_s + solve_s; input_s = reading the file and building the AIJ
matrix (the same for every type); app_total_s = the example's own total (input included).
Exit status 1 when a run failed or did not make exactly the iterations asked.
"""
import csv
import os
import re
import statistics
import sys

NUM = r"([-+0-9.eE]+|nan|inf)"
PAGERANK = {
    "input_read_s": re.compile(r"^time: setup, read/generate the graph: " + NUM + " s"),
    "input_aij_s": re.compile(r"^time: setup, build P in AIJ: " + NUM + " s"),
    "convert_s": re.compile(r"^time: setup, convert P to \S+: " + NUM + " s"),
    "first_mult_s": re.compile(r"^time: setup, first MatMult: " + NUM + " s"),
    "solve_s": re.compile(r"^time: iterations: " + NUM + " s"),
    "app_total_s": re.compile(r"^time: total: " + NUM + " s"),
}
KSPSOLVE = {
    "input_read_s": re.compile(r"^time: setup, read/generate in AIJ: " + NUM + " s"),
    "convert_s": re.compile(r"^time: setup, convert to \S+: " + NUM + " s"),
    "first_mult_s": re.compile(r"^time: setup, first MatMult: " + NUM + " s"),
    "kspsetup_s": re.compile(r"^time: setup, KSPSetUp \(preconditioner\): " + NUM + " s"),
    "solve_s": re.compile(r"^time: solve: " + NUM + " s"),
    "app_total_s": re.compile(r"^time: total: " + NUM + " s"),
}
ITS = re.compile(r"^iterations: (\d+)")
MTYPE = re.compile(r"^matrix type: (\S+)")
VTYPE = re.compile(r"^vector type: (\S+)")
EDGES = re.compile(r"^edges: (\d+)")
NODES = re.compile(r"^nodes: (\d+)")
ROWSNNZ = re.compile(r"^rows: (\d+), nonzeros: (\d+)")
PLAN = re.compile(r"^matxtract: plan after the \w+: crux \(([^,]+), ([^)]+)\) from (\w+), hot mode (\w+) \(requested (\w+), "
                  r"from (\w+)\), cold kernel (\w+) \(from (\w+)\), builds (\d+), predicted (.*?), upgrade (.*?), "
                  r"MatMult on the (\w+), " + NUM + " us measured")
# -info lines of src/petsc/matxtract_plan.c ("[0] <mat> Func(): matxtract: ...")
UPGRADING = re.compile(r"matxtract: upgrading to crux \(([^,]+),([^)]+)\) hot mode (\w+) cold kernel (\w+) after (\d+) MatMults")
PREDICTED = re.compile(r"matxtract: predicted plan crux \(([^,]+),([^)]+)\) hot mode (\w+) cold kernel (\w+).* after (\d+) MatMults")
GUARD = re.compile(r"matxtract: guard: .*: (keeping the upgrade|rebuilding the previous plan)")
STAYS = re.compile(r"matxtract: plan stays .*?: (.*)$")


def g(x):
    """A crux coordinate as %g (PETSc prints 0. for 0)."""
    try:
        return f"{float(x):g}"
    except ValueError:
        return x


def read_env(path):
    env = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                if "=" in line:
                    k, v = line.rstrip("\n").split("=", 1)
                    env[k] = v
    return env


def parse_log(path, example):
    r = {}
    pats = PAGERANK if example == "pagerank" else KSPSOLVE
    try:
        lines = open(path, errors="replace").read().splitlines()
    except OSError:
        return r
    for line in lines:
        for k, p in pats.items():
            m = p.match(line)
            if m:
                r[k] = float(m.group(1))
        for key, p in (("iterations_done", ITS), ("matrix_type", MTYPE), ("vector_type", VTYPE)):
            m = p.match(line)
            if m:
                r[key] = m.group(1)
        m = EDGES.match(line)
        if m:
            r["nnz"] = int(m.group(1))
        m = NODES.match(line)
        if m:
            r["rows"] = int(m.group(1))
        m = ROWSNNZ.match(line)
        if m:
            r["rows"], r["nnz"] = int(m.group(1)), int(m.group(2))
        m = PLAN.match(line)
        if m:
            tc, tr, src, mode, _mreq, _msrc, cold, _csrc, builds, pred, upg, where, tmult = m.groups()
            r["final_plan"] = f"({g(tc)},{g(tr)}) {mode}/{cold}"
            r["plan_source"] = src
            r["builds"] = int(builds)
            r["predicted_plan"] = re.sub(r"crux \(([^,]+), ([^)]+)\) (\w+) (\w+)",
                                         lambda q: f"({g(q.group(1))},{g(q.group(2))}) {q.group(3)}/{q.group(4)}", pred)
            r["upgrade"] = upg
            r["matmult_on"] = where
            r["mult_us_measured"] = float(tmult)
        m = UPGRADING.search(line)
        if m:
            r["upgrade_after_mults"] = int(m.group(5))
        m = PREDICTED.search(line)
        if m:
            r["predicted_after_mults"] = int(m.group(5))
        m = GUARD.search(line)
        if m:
            r["guard"] = "kept upgrade" if m.group(1).startswith("keeping") else "kept previous"
        m = STAYS.search(line)
        if m:
            r["why_no_upgrade"] = m.group(1).strip()
    if "convert_s" in r and "first_mult_s" in r and "solve_s" in r:
        r["setup_s"] = r["convert_s"] + r["first_mult_s"] + r.get("kspsetup_s", 0.0)
        r["total_s"] = r["setup_s"] + r["solve_s"]
        r["input_s"] = r.get("input_read_s", 0.0) + r.get("input_aij_s", 0.0)
    return r


EVENTS = ("MatConvert", "MatMult", "MatXtractBuild", "MatXtractMult", "MatCUSPARSCopyTo", "KSPSolve")
EVENT = re.compile(r"^(\S+)\s+(\d+) +\S+ +([-+0-9.eE]+) ")


def log_view_events(path):
    """{event: (count, max seconds)} from a -log_view table, for EVENTS."""
    ev = {}
    try:
        for line in open(path, errors="replace"):
            m = EVENT.match(line)
            if m and m.group(1) in EVENTS:
                ev[m.group(1)] = (int(m.group(2)), float(m.group(3)))
    except OSError:
        pass
    return ev


def separation(b_min, b_max, x_min, x_max):
    """What the repetitions say beyond the medians: "matxtract faster" when its slowest total is below
    the base type's fastest, "matxtract slower" the other way round, else "within the spread"."""
    if x_max < b_min:
        return "matxtract faster"
    if b_max < x_min:
        return "matxtract slower"
    return "within the spread"


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def f(x, fmt="{:.3f}"):
    return "-" if x is None or x == "" else fmt.format(x)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    env = read_env(os.path.join(out, "env.txt"))
    base = env.get("base_type", "aijcusparse")
    runs = []
    with open(os.path.join(out, "runs.tsv")) as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            row["iterations"] = int(row["iterations"])
            row["rep"] = int(row["rep"])
            row["rc"] = int(row["rc"])
            row.update(parse_log(os.path.join(out, row["log"]), row["example"]))
            runs.append(row)
    problems = []
    for r in runs:
        if r["rc"] != 0:
            problems.append(f"{r['log']}: exit status {r['rc']}")
        elif "total_s" not in r:
            problems.append(f"{r['log']}: no timing lines")
        elif int(r.get("iterations_done", -1)) != r["iterations"]:
            problems.append(f"{r['log']}: {r.get('iterations_done', '?')} iterations, asked {r['iterations']}")
    run_cols = ["matrix", "example", "mat_type", "iterations", "rep", "rc", "iterations_done", "setup_s", "solve_s", "total_s",
                "convert_s", "first_mult_s", "kspsetup_s", "input_s", "app_total_s", "matrix_type", "vector_type", "rows", "nnz",
                "final_plan", "plan_source", "builds", "predicted_plan", "predicted_after_mults", "upgrade", "upgrade_after_mults",
                "guard", "why_no_upgrade", "matmult_on", "mult_us_measured", "log"]
    with open(os.path.join(out, "e2e_runs.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=run_cols, extrasaction="ignore")
        w.writeheader()
        for r in runs:
            w.writerow({k: (f"{v:.6f}" if isinstance(v, float) else v) for k, v in r.items()})

    # medians per (matrix, example, type, N), in the order of first appearance
    groups = {}
    for r in runs:
        groups.setdefault((r["matrix"], r["example"], r["mat_type"], r["iterations"]), []).append(r)
    rows = []
    for (mat, ex, typ, n), rs in groups.items():
        ok = [r for r in rs if r["rc"] == 0 and "total_s" in r]
        row = dict(matrix=mat, example=ex, mat_type=typ, iterations=n, reps=len(ok))
        for c in ("setup_s", "solve_s", "total_s", "input_s", "app_total_s", "convert_s", "first_mult_s"):
            row[c] = med([r.get(c) for r in ok])
        totals = [r["total_s"] for r in ok]
        row["total_min_s"] = min(totals) if totals else None
        row["total_max_s"] = max(totals) if totals else None
        row["per_iteration_us"] = row["solve_s"] / n * 1e6 if row["solve_s"] is not None and n else None
        row["iterations_done"] = " ".join(sorted({str(r.get("iterations_done", "?")) for r in ok}))
        row["nnz"] = next((r["nnz"] for r in ok if "nnz" in r), None)
        plans = sorted({r["final_plan"] for r in ok if "final_plan" in r})
        row["final_plan"] = " | ".join(plans) if plans else typ
        ups = [r.get("upgrade") for r in ok if r.get("upgrade")]
        row["upgrade"] = "; ".join(f"{u} {ups.count(u)}/{len(ok)}" for u in sorted(set(ups))) if ups else ""
        after = [r["upgrade_after_mults"] for r in ok if "upgrade_after_mults" in r]
        row["upgrade_after_mults"] = " ".join(str(a) for a in sorted(set(after)))
        row["predicted_plan"] = " | ".join(sorted({r["predicted_plan"] for r in ok if r.get("predicted_plan")}))
        row["plan_source"] = " | ".join(sorted({r["plan_source"] for r in ok if r.get("plan_source")}))
        rows.append(row)
    by = {(r["matrix"], r["example"], r["mat_type"], r["iterations"]): r for r in rows}
    for r in rows:
        b = by.get((r["matrix"], r["example"], base, r["iterations"]))
        r["speedup_total_vs_base"] = (b["total_s"] / r["total_s"] if r["mat_type"] != base and b and b["total_s"] and r["total_s"]
                                      else None)
    cols = ["matrix", "example", "mat_type", "iterations", "setup_s", "solve_s", "total_s", "per_iteration_us", "final_plan",
            "reps", "total_min_s", "total_max_s", "speedup_total_vs_base", "convert_s", "first_mult_s", "input_s", "app_total_s",
            "nnz", "iterations_done", "plan_source", "predicted_plan", "upgrade", "upgrade_after_mults"]
    with open(os.path.join(out, "e2e.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=cols, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if v is None else f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()})

    # markdown
    L = [f"# End to end: default matxtract vs {base}\n"]
    L.append(f"- Mode: {env.get('mode', '?')}; GPU: {env.get('gpu') or '-'}; {env.get('nvcc') or ''}; PETSc {env.get('petsc', '?')} "
             f"(PETSC_OPTIONS `{env.get('petsc_options', '')}`)")
    L.append(f"- Date: {env.get('date', '?')}; commit {env.get('commit', '?')}; host CPUs {env.get('host_cpus', '?')}")
    L.append(f"- Command: `{env.get('command', '?')}`; timed runs took {env.get('timed_runs_s', '?')} s")
    L.append("- matxtract at default options: the predictor and the online upgrade on (`-mat_type matxtract`, nothing "
             "else); vectors " + ("on the GPU (`-vec_type cuda`)" if env.get("mode") == "gpu" else "on the host") + ".")
    L.append("- Seconds, wall clock, median of the repetitions (each column its own median). setup = MatConvert from AIJ + "
             "first MatMult (+ KSPSetUp for CG); solve = the N iterations (an upgrade is paid in there); total = setup + "
             "solve (reading the matrix and building the AIJ matrix, the same for both types, are left out: column input_s "
             "in e2e.csv). speedup = total of the base type / total of matxtract (> 1: matxtract faster). PageRank: power "
             "method, -pagerank_tol 0; CG: no preconditioner, -ksp_norm_type none; both exactly N iterations.\n")

    def cell_pair(mat, ex, n):
        return by.get((mat, ex, base, n)), by.get((mat, ex, "matxtract", n))

    kron = [m for m in dict.fromkeys(r["matrix"] for r in rows if r["example"] == "pagerank") if m.startswith("kron")]
    if kron:
        L.append("## Issue 11 criterion: PageRank (power) on the Kronecker graphs, default options, setup included\n")
        L.append(f"| matrix | iterations | total {base} | total matxtract | speedup | wanted | verdict | repetitions |")
        L.append("|---|---|---|---|---|---|---|---|")
        for mat in kron:
            for n, want in ((100, "no slower"), (1000, "faster")):
                b, x = cell_pair(mat, "pagerank", n)
                if not b or not x or b["total_s"] is None or x["total_s"] is None:
                    L.append(f"| {mat} | {n} | - | - | - | {want} | not run | - |")
                    continue
                ok = x["total_s"] <= b["total_s"] if n == 100 else x["total_s"] < b["total_s"]
                L.append(f"| {mat} | {n} | {b['total_s']:.4f} ({b['total_min_s']:.4f}-{b['total_max_s']:.4f}) | "
                         f"{x['total_s']:.4f} ({x['total_min_s']:.4f}-{x['total_max_s']:.4f}) | {b['total_s'] / x['total_s']:.3f}x | "
                         f"{want} | {'PASS' if ok else 'FAIL'} | "
                         f"{separation(b['total_min_s'], b['total_max_s'], x['total_min_s'], x['total_max_s'])} |")
        L.append("\n(verdict on the medians; in parentheses min-max of the repetitions; repetitions: whether every "
                 "repetition of one type beat every repetition of the other)\n")

    for ex, title in (("pagerank", "PageRank (power method)"), ("cg", "CG (ksp_solve, no preconditioner)")):
        mats = list(dict.fromkeys(r["matrix"] for r in rows if r["example"] == ex))
        if not mats:
            continue
        L.append(f"## {title}\n")
        L.append(f"| matrix | nnz | its | setup {base} | setup mx | solve {base} | solve mx | total {base} | total mx | speedup | "
                 f"per it {base} (us) | per it mx (us) | matxtract plan at the end | upgrade (after MatMults) |")
        L.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for mat in mats:
            for n in sorted({r["iterations"] for r in rows if r["matrix"] == mat and r["example"] == ex}):
                b, x = cell_pair(mat, ex, n)
                b = b or {}
                x = x or {}
                nnz = b.get("nnz") or x.get("nnz")
                up = x.get("upgrade", "")
                if x.get("upgrade_after_mults"):
                    up += f" ({x['upgrade_after_mults']})"
                L.append(f"| {mat} | {f(nnz, '{:,}')} | {n} | {f(b.get('setup_s'))} | {f(x.get('setup_s'))} | {f(b.get('solve_s'))} | "
                         f"{f(x.get('solve_s'))} | {f(b.get('total_s'))} | {f(x.get('total_s'))} | "
                         f"{f(x.get('speedup_total_vs_base'), '{:.3f}x')} | {f(b.get('per_iteration_us'), '{:.1f}')} | "
                         f"{f(x.get('per_iteration_us'), '{:.1f}')} | {x.get('final_plan', '-')} | {up or '-'} |")
        L.append("")
    L.append("Predicted plans (matxtract, per matrix): " + "; ".join(
        f"{r['matrix']}: {r['predicted_plan'] or 'not predicted'}" for r in rows
        if r["mat_type"] == "matxtract" and r["iterations"] == max(q["iterations"] for q in rows)) + ".\n")
    prof = []
    for mat in dict.fromkeys(r["matrix"] for r in rows):
        for typ in dict.fromkeys(r["mat_type"] for r in rows):
            ev = log_view_events(os.path.join(out, "logs", f"{mat}_{typ}_profile.log"))
            if ev:
                prof.append((mat, typ, ev))
    if prof:
        L.append("## -log_view of the profile runs (100 iterations, untimed; count / seconds)\n")
        L.append("| matrix | type | " + " | ".join(EVENTS) + " |")
        L.append("|---|---|" + "---|" * len(EVENTS))
        for mat, typ, ev in prof:
            L.append(f"| {mat} | {typ} | " + " | ".join(f"{ev[e][0]} / {ev[e][1]:.4g}" if e in ev else "-" for e in EVENTS) + " |")
        L.append("")
    if problems:
        L.append("## Problems\n")
        L.extend(f"- {p}" for p in problems)
        L.append("")
    L.append("Files: e2e.csv (medians), e2e_runs.csv (every run), logs/ (each run's output with -info :mat; *_profile.log: "
             "-log_view and the matrix ::ascii_info_detail at 100 iterations), env.txt.")
    with open(os.path.join(out, "e2e.md"), "w") as fh:
        fh.write("\n".join(L) + "\n")
    print(f"summarise.py: {len(runs)} runs, {len(rows)} rows -> {out}/e2e.csv, e2e_runs.csv, e2e.md"
          + (f"; {len(problems)} problem(s)" if problems else ""))
    for p in problems:
        print("  " + p)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
