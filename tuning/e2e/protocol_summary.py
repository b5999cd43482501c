#!/usr/bin/env python3
"""Summarise the end-to-end protocol runs of tuning/e2e/protocol.sh (Python 3 standard library only).

    python3 tuning/e2e/protocol_summary.py [-o FILE.md] [--steady-min X] INPUT [INPUT ...]

INPUT: an OUTDIR of protocol.sh (its e2e_protocol.csv, runs.tsv and env.txt) or a CSV file of matxtract-e2e.
Several inputs combine (repetitions made by separate calls). Per (case, type) the median of the runs whose
product was correct; per case the ratios
  setup, steady, total@100/1000/3000:  base / matxtract   (> 1: matxtract faster; base = aijcusparse, or aij
                                                           in a CPU dry run)
  device bytes:                        matxtract / base   (< 1: matxtract holds less)
then the geometric means (all cases, and the cases of >= 1M nonzeros: the smaller ones fit in L2 and
measure launch overhead, BENCHMARKING.md section 3), the worst case of each column, and the issue-39
criteria, each PASS / FAIL (n/a when a column has no data, e.g. device bytes on the CPU):
  total@1000: geomean >= 1.30 and no case < 1.00;   total@100: no case < 1.00;
  setup: matxtract no slower in every case (setup ratio >= 1.00);
  device bytes: matxtract / base <= 1.15 in every case;   steady: geomean >= --steady-min (default 1.58: issue
  39's "no lower than today", measured on an H100 when the issue was filed; other GPUs give other ratios).
Writes FILE.md (and FILE.csv: the per-case table) when -o is given; prints the markdown. Exit status 1 when a
run computed a wrong product or failed, or no case has both types.
"""
import argparse
import csv
import math
import os
import statistics
import sys

MX = "matxtract"
METRICS = ["setup_s", "convert_s", "first_mult_s", "first_batch_per_mult_s", "steady_per_mult_s",
           "total_100_s", "total_1000_s", "total_3000_s", "total_its_s", "dev_bytes_per_nnz"]
TOTALS = [("total@100", "total_100_s"), ("total@1000", "total_1000_s"), ("total@3000", "total_3000_s")]
BIG_NNZ = 1000000
BYTES_MAX = 1.15
TOTAL1000_GEOMEAN_MIN = 1.30
STEADY_GEOMEAN_MIN = 1.58


def num(s):
    """A CSV field as a float (None for an empty or unreadable field)."""
    try:
        v = float(s)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(v) else v


def load(inputs):
    """Rows of matxtract-e2e (dicts), the failed or skipped runs (runs.tsv) and the first env.txt found."""
    rows, failed, env = [], [], {}
    for path in inputs:
        csv_path = os.path.join(path, "e2e_protocol.csv") if os.path.isdir(path) else path
        if os.path.isfile(csv_path):
            with open(csv_path, newline="") as f:
                rows += list(csv.DictReader(f))
        if not os.path.isdir(path):
            continue
        runs = os.path.join(path, "runs.tsv")
        if os.path.isfile(runs):
            with open(runs, newline="") as f:
                failed += [r for r in csv.DictReader(f, delimiter="\t") if r.get("rc") != "0"]
        envf = os.path.join(path, "env.txt")
        if not env and os.path.isfile(envf):
            with open(envf) as f:
                env = dict(line.rstrip("\n").split("=", 1) for line in f if "=" in line)
    return rows, failed, env


def base_type(rows):
    """aijcusparse when any run has it, else aij (the CPU dry run)."""
    return "aijcusparse" if any(r["type"] == "aijcusparse" for r in rows) else "aij"


def median_runs(runs):
    """The median of each metric over runs (None where no run has it), the run count, and the range of
    total_1000_s (None with fewer than two runs that have it)."""
    med = {}
    for m in METRICS:
        vals = [v for v in (num(r.get(m)) for r in runs) if v is not None]
        med[m] = statistics.median(vals) if vals else None
    med["n"] = len(runs)
    t1000 = [v for v in (num(r.get("total_1000_s")) for r in runs) if v is not None]
    med["min_total_1000_s"], med["max_total_1000_s"] = (min(t1000), max(t1000)) if len(t1000) >= 2 else (None, None)
    return med


def ratio(a, b):
    """a / b, or None when either is missing or b is not positive."""
    return a / b if a is not None and b is not None and b > 0 else None


def separation(bmin, bmax, xmin, xmax):
    """Whether the two types' runs are apart: every matxtract run below (above) every base run."""
    if None in (bmin, bmax, xmin, xmax):
        return ""
    if xmax < bmin:
        return "apart"
    if xmin > bmax:
        return "apart (slower)"
    return "overlap"


def cases(rows):
    """One dict per case (first-seen order): the two types' medians and the ratios."""
    base = base_type(rows)
    order, groups = [], {}
    for r in rows:
        if r.get("check") != "ok":
            continue
        key = r["matrix"]
        if key not in groups:
            groups[key] = {}
            order.append(key)
        groups[key].setdefault(r["type"], []).append(r)
    out = []
    for name in order:
        g = groups[name]
        first = (g.get(base) or g.get(MX))[0]
        c = {"case": name, "values": first["values"], "rows": int(first["rows"]), "nnz": int(first["nnz"]),
             "base": median_runs(g[base]) if base in g else None, "mx": median_runs(g[MX]) if MX in g else None,
             "plan": plan_text(g[MX][-1]) if MX in g else ""}
        b, x = c["base"] or {}, c["mx"] or {}
        c["setup"] = ratio(b.get("setup_s"), x.get("setup_s"))
        c["steady"] = ratio(b.get("steady_per_mult_s"), x.get("steady_per_mult_s"))
        for label, col in TOTALS:
            c[label] = ratio(b.get(col), x.get(col))
        c["bytes"] = ratio(x.get("dev_bytes_per_nnz"), b.get("dev_bytes_per_nnz"))
        c["spread@1000"] = separation(b.get("min_total_1000_s"), b.get("max_total_1000_s"), x.get("min_total_1000_s"),
                                      x.get("max_total_1000_s"))
        out.append(c)
    return out


def plan_text(r):
    """matxtract's plan after the run, in a few words."""
    if not r.get("mx_cold_kernel"):
        return ""
    text = "(%s,%s) %s %s/%s" % (r["mx_crux_tc"], r["mx_crux_tr"], r["mx_crux_source"], r["mx_hot_mode"], r["mx_cold_kernel"])
    if r.get("mx_compress_in_use") == "1":
        text += " pack %s/%s" % (r["mx_compress_values"], r["mx_compress_columns"])
    if r.get("mx_hub_columns") not in (None, "", "0"):
        text += " hub %s" % r["mx_hub_columns"]
    if r.get("mx_plan_settled") != "1":
        text += " unsettled"
    return text


def geomean(vals):
    vals = [v for v in vals if v is not None and v > 0]
    return math.exp(sum(math.log(v) for v in vals) / len(vals)) if vals else None


def worst(cs, key, largest=False):
    """(value, case) of the worst case of a column: the smallest ratio (largest for bytes)."""
    have = [(c[key], c["case"]) for c in cs if c[key] is not None]
    if not have:
        return None, ""
    return max(have) if largest else min(have)


def worst_cell(cs, key, suffix, largest=False):
    """The worst case of a column as "value (case)", "-" without data."""
    v, case = worst(cs, key, largest)
    return "-" if v is None else "%s (%s)" % (fmt(v, suffix), case)


def criteria(cs, steady_min=STEADY_GEOMEAN_MIN):
    """The issue-39 criteria: (name, verdict PASS/FAIL/n/a, detail)."""
    both = [c for c in cs if c["base"] and c["mx"]]
    out = []

    def verdict(ok, have):
        return "n/a" if not have else ("PASS" if ok else "FAIL")

    g, w = geomean(c["total@1000"] for c in both), worst(both, "total@1000")[0]
    out.append(("total@1000: geomean >= %.2fx and no case < 1.00x" % TOTAL1000_GEOMEAN_MIN,
                verdict(g is not None and g >= TOTAL1000_GEOMEAN_MIN and w >= 1.0, g is not None),
                "geomean %s, worst %s" % (fmt(g, "x"), worst_cell(both, "total@1000", "x"))))
    w = worst(both, "total@100")[0]
    out.append(("total@100: no case < 1.00x", verdict(w is not None and w >= 1.0, w is not None), "worst " + worst_cell(both, "total@100", "x")))
    w = worst(both, "setup")[0]
    out.append(("setup: matxtract no slower in every case (ratio >= 1.00)", verdict(w is not None and w >= 1.0, w is not None),
                "worst " + worst_cell(both, "setup", "x")))
    w = worst(both, "bytes", largest=True)[0]
    out.append(("device bytes: matxtract / base <= %.2f in every case" % BYTES_MAX, verdict(w is not None and w <= BYTES_MAX, w is not None),
                "worst " + worst_cell(both, "bytes", "", largest=True)))
    g = geomean(c["steady"] for c in both)
    out.append(("steady: geomean >= %.2fx" % steady_min, verdict(g is not None and g >= steady_min, g is not None),
                "geomean %s, worst %s" % (fmt(g, "x"), worst_cell(both, "steady", "x"))))
    return out


def fmt(v, suffix="", digits=2):
    return "-" if v is None else ("%.*f%s" % (digits, v, suffix))


def ms(v):
    return "-" if v is None else "%.1f" % (1e3 * v)


def us(v):
    return "-" if v is None else "%.1f" % (1e6 * v)


def markdown(cs, crit, env, rows, failed):
    base = base_type(rows)
    lines = ["# End-to-end protocol: %s vs matxtract" % base, ""]
    for k in ("date", "gpu", "petsc", "commit", "command", "mode"):
        if env.get(k):
            lines.append("- %s: `%s`" % (k, env[k]))
    lines += ["- ratios: base / matxtract (> 1: matxtract faster); bytes: matxtract / base (< 1: matxtract holds less); "
              "n = runs per type (median); spread@1000 (2+ runs of each type): whether the two types' total@1000 ranges are apart", ""]
    head = ["case", "values", "nnz", "n", "setup ms base", "setup ms mx", "setup", "steady us base", "steady us mx", "steady",
            "total@100", "total@1000", "total@3000", "B/nnz base", "B/nnz mx", "bytes", "spread@1000", "matxtract plan"]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for c in cs:
        b, x = c["base"] or {}, c["mx"] or {}
        lines.append("| " + " | ".join([
            c["case"], c["values"], "{:,}".format(c["nnz"]), "%s/%s" % (b.get("n", 0), x.get("n", 0)),
            ms(b.get("setup_s")), ms(x.get("setup_s")), fmt(c["setup"], "x"), us(b.get("steady_per_mult_s")), us(x.get("steady_per_mult_s")),
            fmt(c["steady"], "x")] + [fmt(c[label], "x") for label, _ in TOTALS] + [
            fmt(b.get("dev_bytes_per_nnz"), "", 1), fmt(x.get("dev_bytes_per_nnz"), "", 1), fmt(c["bytes"]), c["spread@1000"], c["plan"]]) + " |")
    both = [c for c in cs if c["base"] and c["mx"]]
    for label, subset in (("geomean (all)", both), ("geomean (>= 1M nnz)", [c for c in both if c["nnz"] >= BIG_NNZ])):
        lines.append("| **%s** | | %d cases | | | | %s | | | %s | %s | | | %s |" % (
            label, len(subset), fmt(geomean(c["setup"] for c in subset), "x"), fmt(geomean(c["steady"] for c in subset), "x"),
            " | ".join(fmt(geomean(c[lab] for c in subset), "x") for lab, _ in TOTALS), fmt(geomean(c["bytes"] for c in subset))))
    lines.append("| **worst** | | | | | | %s | | | %s | %s | | | %s |" % (
        worst_cell(both, "setup", "x"), worst_cell(both, "steady", "x"), " | ".join(worst_cell(both, lab, "x") for lab, _ in TOTALS),
        worst_cell(both, "bytes", "", largest=True)))
    lines += ["", "## Criteria (issue 39)", "", "| criterion | verdict | detail |", "|---|---|---|"]
    lines += ["| %s | **%s** | %s |" % c for c in crit]
    problems = problem_lines(cs, rows, failed, base)
    if problems:
        lines += ["", "## Problems", ""] + ["- " + p for p in problems]
    return "\n".join(lines) + "\n"


def problem_lines(cs, rows, failed, base):
    """Wrong products, failed or skipped runs, cases without both types, vector types that differ."""
    out = ["wrong product: %s %s rel_err %s" % (r["matrix"], r["type"], r["rel_err"]) for r in rows if r.get("check") != "ok"]
    out += ["run %s: %s %s (repetition %s, log %s)" % ("skipped" if f.get("rc") == "skipped" else "failed, rc " + str(f.get("rc")),
                                                       f.get("case"), f.get("type"), f.get("rep"), f.get("log") or "-") for f in failed]
    out += ["%s: no correct %s run" % (c["case"], base if not c["base"] else MX) for c in cs if not (c["base"] and c["mx"])]
    vt = {}
    for r in rows:
        vt.setdefault(r["matrix"], set()).add(r.get("vec_type"))
    out += ["%s: vector types differ between the types: %s" % (k, ", ".join(sorted(v))) for k, v in vt.items() if len(v) > 1]
    return out


def write_csv(path, cs):
    cols = ["case", "values", "rows", "nnz", "setup", "steady", "total@100", "total@1000", "total@3000", "bytes", "spread@1000", "plan"]
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols + ["base_" + m for m in METRICS] + ["mx_" + m for m in METRICS] + ["base_n", "mx_n"])
        for c in cs:
            b, x = c["base"] or {}, c["mx"] or {}
            w.writerow([c[k] if c[k] is not None else "" for k in cols] + ["" if b.get(m) is None else "%.6g" % b[m] for m in METRICS] +
                       ["" if x.get(m) is None else "%.6g" % x[m] for m in METRICS] + [b.get("n", 0), x.get("n", 0)])


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("inputs", nargs="+", help="protocol.sh OUTDIRs or matxtract-e2e CSV files")
    ap.add_argument("-o", dest="out", help="write the markdown here (and the per-case table beside it, .csv)")
    ap.add_argument("--steady-min", type=float, default=STEADY_GEOMEAN_MIN,
                    help="the steady-state geomean criterion (default %.2f, issue 39's)" % STEADY_GEOMEAN_MIN)
    args = ap.parse_args(argv)
    rows, failed, env = load(args.inputs)
    if not rows:
        print("protocol_summary.py: no rows in %s" % " ".join(args.inputs), file=sys.stderr)
        return 1
    cs = cases(rows)
    text = markdown(cs, criteria(cs, args.steady_min), env, rows, failed)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
        write_csv(os.path.splitext(args.out)[0] + ".csv", cs)
    sys.stdout.write(text)
    wrong = any(r.get("check") != "ok" for r in rows) or any(f.get("rc") not in ("0", "skipped") for f in failed)
    return 1 if wrong or not any(c["base"] and c["mx"] for c in cs) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
