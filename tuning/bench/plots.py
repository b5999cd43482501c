#!/usr/bin/env python3
"""Merge the two benchmark CSVs of one run and draw the figures (matplotlib, Agg backend).

    python3 tuning/bench/plots.py DIR [--command "..."]

Reads DIR/spmv_kernels.csv (matxtract-bench), DIR/spmv_petsc.csv (matxtract-petsc-bench, optional),
DIR/spmv_kernels_env.txt, DIR/spmv_petsc_env.txt and DIR/gpu.txt (nvidia-smi, optional); writes
DIR/spmv.csv (one row per matrix, all columns), DIR/summary.md, DIR/speedup_vs_nnz.png,
DIR/bandwidth_fraction.png and DIR/setup_vs_gain.png. Column meanings: tuning/bench/README.md.
"""
import argparse
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

TIE = 0.02  # |ratio - 1| <= 2 %: a tie


def read_env(path):
    env = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                if "=" in line:
                    k, v = line.rstrip("\n").split("=", 1)
                    env[k] = v
    return env


def geomean(s):
    s = pd.to_numeric(s, errors="coerce").dropna()
    s = s[s > 0]
    return float(np.exp(np.log(s).mean())) if len(s) else float("nan")


def merge(d):
    k = pd.read_csv(os.path.join(d, "spmv_kernels.csv"))
    pp = os.path.join(d, "spmv_petsc.csv")
    p = pd.read_csv(pp) if os.path.exists(pp) else pd.DataFrame()
    if len(p):
        gpu = (p["petsc_mode"] == "gpu").any()
        base = "aijcusparse" if gpu else "aij"
        cols = {"t_med_us": "t_{}_us", "t_min_us": "t_{}_min_us", "t_max_us": "t_{}_max_us",
                "t_loop_us": "t_{}_loop_us", "setup_ms": "setup_{}_ms", "convert_ms": "convert_{}_ms",
                "rel_err": "err_{}"}
        for variant, name in ((base, "aijcusparse" if gpu else "aij_cpu"), ("matxtract", "matxtract_petsc" if gpu else "matxtract_cpu")):
            sub = p[p["variant"] == variant].set_index("matrix")
            for c, f in cols.items():
                k[f.format(name)] = k["matrix"].map(sub[c]) if c in sub else np.nan
            if variant == "matxtract":
                k[name + "_on_device"] = k["matrix"].map(sub["on_device"])
        k["petsc_mode"] = "gpu" if gpu else "cpu"
    else:
        k["petsc_mode"] = "none"
    for c in ("t_aijcusparse_us", "t_matxtract_petsc_us", "setup_aijcusparse_ms", "setup_matxtract_petsc_ms"):
        if c not in k:
            k[c] = np.nan
    k["t_cusparse_best_us"] = k[["t_cusparse_alg1_us", "t_cusparse_alg2_us"]].min(axis=1)
    k["speedup_vs_cusparse"] = k["t_cusparse_best_us"] / k["t_ours_us"]
    k["speedup_vs_alg1"] = k["t_cusparse_alg1_us"] / k["t_ours_us"]
    k["speedup_vs_alg2"] = k["t_cusparse_alg2_us"] / k["t_ours_us"]
    k["speedup_cold_vs_cusparse"] = k["t_cusparse_best_us"] / k["t_cold_only_us"]
    k["speedup_default_vs_cusparse"] = k["t_cusparse_best_us"] / k["t_default_us"]
    # the predicted plan (matxtract-bench fills t_pred_us since the predictor exists; empty in older runs)
    k["t_pred_us"] = pd.to_numeric(k["t_pred_us"], errors="coerce") if "t_pred_us" in k else np.nan
    k["speedup_pred_vs_cusparse"] = k["t_cusparse_best_us"] / k["t_pred_us"]
    k["pred_vs_ours"] = k["t_pred_us"] / k["t_ours_us"]
    for c in ("pred_hot_mode", "pred_cold_kernel", "crux_pred_tc", "crux_pred_tr"):
        if c not in k:
            k[c] = np.nan
    k["speedup_petsc"] = k["t_aijcusparse_us"] / k["t_matxtract_petsc_us"]
    k["plugin_overhead_us"] = k["t_matxtract_petsc_us"] - k["t_default_us"]
    k["aijcusparse_overhead_us"] = k["t_aijcusparse_us"] - k["t_cusparse_best_us"]
    k["format_vs_csr"] = k["format_bytes"] / k["csr_bytes"]
    # break-even iterations: kernel level (ours vs best cuSPARSE, both with their upload) and PETSc level
    gain = k["t_cusparse_best_us"] - k["t_ours_us"]
    k["breakeven_its"] = np.where(gain > 0, np.maximum(0, (k["setup_ours_ms"] - k["setup_cusparse_ms"]) * 1e3 / gain), np.nan)
    gp = k["t_aijcusparse_us"] - k["t_matxtract_petsc_us"]
    k["breakeven_its_petsc"] = np.where(gp > 0, np.maximum(0, (k["setup_matxtract_petsc_ms"] - k["setup_aijcusparse_ms"]) * 1e3 / gp), np.nan)
    k["fits_2x_l2"] = k["matrix_bytes_over_l2"] < 2
    first = ["matrix", "family", "rows", "cols", "nnz", "crux_tc", "crux_tr", "t_ours_us", "t_cold_only_us",
             "t_cusparse_alg1_us", "t_cusparse_alg2_us", "t_aijcusparse_us", "t_matxtract_petsc_us", "bw_frac_ours",
             "bw_frac_cusparse", "setup_ours_ms", "setup_aijcusparse_ms", "breakeven_its"]
    return k[first + [c for c in k.columns if c not in first]]


def pred_plan(r):
    """'tc,tr mode/cold' of the predicted plan, '-' when the row has none."""
    if pd.isna(r.get("crux_pred_tc", np.nan)) or pd.isna(r.get("t_pred_us", np.nan)):
        return "-"
    return f"{r['crux_pred_tc']:g},{r['crux_pred_tr']:g} {r['pred_hot_mode']}/{r['pred_cold_kernel']}"


def fmt(x, f="{:.2f}"):
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f.format(x)


def wins(s):
    s = pd.to_numeric(s, errors="coerce").dropna()
    return int((s > 1 + TIE).sum()), int(((s >= 1 - TIE) & (s <= 1 + TIE)).sum()), int((s < 1 - TIE).sum())


def summary(d, k, command):
    ek, ep, gpu = read_env(os.path.join(d, "spmv_kernels_env.txt")), read_env(os.path.join(d, "spmv_petsc_env.txt")), {}
    gp = os.path.join(d, "gpu.txt")
    if os.path.exists(gp):
        gpu = read_env(gp)
    L = []
    L.append("# SpMV benchmark: matxtract vs cuSPARSE and PETSc aijcusparse\n")
    L.append(f"- GPU: {ek.get('gpu_name', '?')} ({ek.get('sms', '?')} SMs, L2 {int(ek.get('l2_bytes', 0)) / 1e6:.0f} MB); "
             f"driver {gpu.get('driver_version', '?')} (CUDA driver API {ek.get('cuda_driver', '?')}), "
             f"CUDA runtime {ek.get('cuda_runtime', '?')}, cuSPARSE {ek.get('cusparse', '?')}; "
             f"PETSc {ep.get('petsc_version', '-')} ({ep.get('mode', '-')})")
    L.append(f"- Date: {ek.get('date', '?')}; D2D copy bandwidth of the run: {ek.get('d2d_copy_GBps', '?')} GB/s (read+write)")
    L.append(f"- Command: `{command or '?'}`")
    L.append(f"  - kernels: `{ek.get('command', '?')}`")
    if ep:
        L.append(f"  - PETSc: `{ep.get('command', '?')}`")
    L.append(f"- Median of {ek.get('reps', '?')} calls after {ek.get('warmup', '?')} warm-up, CUDA events; every variant "
             "checked against a CPU double reference (rel err < 1e-12) before timing.")
    if k["t_pred_us"].notna().any():
        L.append(f"- 'predicted' = the plan (crux, hot mode, cold kernel) the embedded model picks from the matrix's features, "
                 f"what -mat_type matxtract runs at default options once it predicts (model: {ek.get('model_trained_on', '?')}); "
                 "'ours' = the fastest of (0,0) and the given cruxes (an oracle over the tried set, the prediction not "
                 "included); 'default' = (0,0) with the AUTO cold kernel (the plan -mat_type matxtract starts on).")
    else:
        L.append("- **No predicted plan in this run** (older matxtract-bench): 'ours' = the fastest of (0,0) and the given "
                 "cruxes (an oracle over the tried set, not a prediction); 'default' = (0,0) with the AUTO cold kernel.")
    L.append("- Matrices whose bytes are < 2x L2 rotate 8 x/y copies but measure the cache partly: "
             "they are counted separately (column fits_2x_l2).\n")
    comps = [("predicted plan vs best cuSPARSE", "speedup_pred_vs_cusparse"),
             ("ours (oracle crux) vs best cuSPARSE", "speedup_vs_cusparse"),
             ("(0,0) default vs best cuSPARSE", "speedup_default_vs_cusparse"),
             ("PETSc MatMult matxtract vs aijcusparse", "speedup_petsc")]
    L.append("## Geometric mean speedup by family (> 1: matxtract faster)\n")
    L.append("| family | n | " + " | ".join(c[0] for c in comps) + " |")
    L.append("|---|---|" + "---|" * len(comps))
    for fam, g in k.groupby("family"):
        L.append(f"| {fam} | {len(g)} | " + " | ".join(fmt(geomean(g[c])) for _, c in comps) + " |")
    big = k[~k["fits_2x_l2"]]
    L.append(f"| **all** | {len(k)} | " + " | ".join(fmt(geomean(k[c])) for _, c in comps) + " |")
    L.append(f"| **> 2x L2 only** | {len(big)} | " + " | ".join(fmt(geomean(big[c])) for _, c in comps) + " |\n")
    L.append(f"## Wins / ties / losses (tie: within {TIE * 100:.0f} %) and worst case\n")
    L.append("| comparison | wins | ties | losses | worst ratio (matrix) | best ratio (matrix) |")
    L.append("|---|---|---|---|---|---|")
    for name, c in comps:
        s = pd.to_numeric(k[c], errors="coerce")
        if s.notna().any():
            w, t, l_ = wins(s)
            lo, hi = s.idxmin(), s.idxmax()
            L.append(f"| {name} | {w} | {t} | {l_} | {s[lo]:.2f}x ({k.loc[lo, 'matrix']}) | {s[hi]:.2f}x ({k.loc[hi, 'matrix']}) |")
        else:
            L.append(f"| {name} | - | - | - | - | - |")
    L.append("")
    be = pd.to_numeric(k["breakeven_its"], errors="coerce")
    L.append(f"Break-even iterations k* (kernel level, ours incl. features+conversion+upload vs cuSPARSE upload+preprocess) "
             f"where ours is faster: median {fmt(be.median(), '{:.0f}')}, max {fmt(be.max(), '{:.0f}')} "
             f"({int(be.notna().sum())} matrices).\n")
    L.append("## Per matrix (times in us, setup in ms)\n")
    L.append("| matrix | family | nnz | crux | hot% | mode | ours | (0,0) | ALG1 | ALG2 | aijcusparse | matxtract (PETSc) | "
             "spd vs cuSP | bw ours | bw cuSP | setup ours | setup aijcusp | k* | predicted plan | pred | pred spd vs cuSP |")
    L.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for _, r in k.iterrows():
        L.append(f"| {r['matrix']}{'' if not r['fits_2x_l2'] else ' (L2)'} | {r['family']} | {r['nnz']} | "
                 f"{r['crux_tc']:g},{r['crux_tr']:g} | {100 * r['hot_nnz_share']:.0f} | {r['hot_mode']} | "
                 f"{fmt(r['t_ours_us'], '{:.1f}')} | {fmt(r['t_cold_only_us'], '{:.1f}')} | {fmt(r['t_cusparse_alg1_us'], '{:.1f}')} | "
                 f"{fmt(r['t_cusparse_alg2_us'], '{:.1f}')} | {fmt(r['t_aijcusparse_us'], '{:.1f}')} | "
                 f"{fmt(r['t_matxtract_petsc_us'], '{:.1f}')} | {fmt(r['speedup_vs_cusparse'])}x | {fmt(r['bw_frac_ours'])} | "
                 f"{fmt(r['bw_frac_cusparse'])} | {fmt(r['setup_ours_ms'], '{:.0f}')} | {fmt(r['setup_aijcusparse_ms'], '{:.0f}')} | "
                 f"{fmt(r['breakeven_its'], '{:.0f}')} | {pred_plan(r)} | {fmt(r['t_pred_us'], '{:.1f}')} | "
                 f"{fmt(r['speedup_pred_vs_cusparse'], '{:.2f}x')} |")
    L.append("\nFigures: speedup_vs_nnz.png, bandwidth_fraction.png, setup_vs_gain.png. Raw: spmv.csv, spmv_kernels.csv, "
             "spmv_cruxes.csv, spmv_petsc.csv. Column definitions: tuning/bench/README.md.")
    with open(os.path.join(d, "summary.md"), "w") as f:
        f.write("\n".join(L) + "\n")


def plots(d, k, title):
    fams = sorted(k["family"].unique())
    cmap = plt.get_cmap("tab20")
    color = {f: cmap(i % 20) for i, f in enumerate(fams)}

    fig, ax = plt.subplots(figsize=(9, 5.5))
    for f in fams:
        g = k[k["family"] == f]
        ax.scatter(g["nnz"], g["speedup_vs_cusparse"], color=color[f], marker="o", label=f"{f}")
        ax.scatter(g["nnz"], g["speedup_default_vs_cusparse"], color=color[f], marker="x")
        if g["speedup_pred_vs_cusparse"].notna().any():
            ax.scatter(g["nnz"], g["speedup_pred_vs_cusparse"], color=color[f], marker="s", facecolors="none")
        if g["speedup_petsc"].notna().any():
            ax.scatter(g["nnz"], g["speedup_petsc"], color=color[f], marker="^", facecolors="none")
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("nnz")
    ax.set_ylabel("speedup (> 1: matxtract faster)")
    ax.set_title(f"{title}\no: oracle crux vs best cuSPARSE, s: predicted plan vs best cuSPARSE, x: (0,0) default vs best "
                 "cuSPARSE, ^: PETSc matxtract vs aijcusparse", fontsize=8)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(os.path.join(d, "speedup_vs_nnz.png"), dpi=120)
    plt.close(fig)

    s = k.sort_values("nnz")
    fig, ax = plt.subplots(figsize=(max(8, 0.32 * len(s)), 5))
    xi = np.arange(len(s))
    ax.bar(xi - 0.2, s["bw_frac_ours"], 0.4, label="matxtract (oracle crux)")
    ax.bar(xi + 0.2, s["bw_frac_cusparse"], 0.4, label="best cuSPARSE")
    ax.set_xticks(xi)
    ax.set_xticklabels([m + (" *" if f else "") for m, f in zip(s["matrix"], s["fits_2x_l2"])], rotation=70, ha="right", fontsize=7)
    ax.set_ylabel("effective bandwidth / D2D copy bandwidth")
    ax.set_title(f"{title}\n(12 nnz + 4 (rows+1) + 8 rows + 8 cols) / t; * = matrix < 2x L2", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(d, "bandwidth_fraction.png"), dpi=120)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(8, 5.5))
    gain = k["t_cusparse_best_us"] - k["t_ours_us"]
    dsetup = k["setup_ours_ms"] - k["setup_cusparse_ms"]
    for f in fams:
        g = k["family"] == f
        ax.scatter(gain[g], dsetup[g], color=color[f], label=f)
    ax.axvline(0, color="k", lw=0.8)
    xmax = max(1.0, float(np.nanmax(np.abs(gain))) if len(gain) else 1.0)
    xs = np.linspace(0, xmax, 50)
    for kk in (10, 100, 1000, 10000):
        ax.plot(xs, xs * kk * 1e-3, lw=0.6, ls="--", color="grey")
        ax.annotate(f"k*={kk}", (xs[-1], xs[-1] * kk * 1e-3), fontsize=7, color="grey")
    ax.set_yscale("symlog", linthresh=1.0)
    ax.set_xlabel("gain per SpMV: best cuSPARSE - ours (us); left of 0: ours slower")
    ax.set_ylabel("extra setup: ours - cuSPARSE (ms)")
    ax.set_title(f"{title}\nsetup (features+conversion+upload vs upload+preprocess) vs gain; dashed: break-even k*", fontsize=9)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(os.path.join(d, "setup_vs_gain.png"), dpi=120)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir")
    ap.add_argument("--command", default="")
    a = ap.parse_args()
    if not os.path.exists(os.path.join(a.dir, "spmv_kernels.csv")):
        sys.exit(f"plots.py: no {a.dir}/spmv_kernels.csv")
    k = merge(a.dir)
    k.to_csv(os.path.join(a.dir, "spmv.csv"), index=False, float_format="%.6g")
    if not len(k):
        sys.exit("plots.py: no rows")
    ek = read_env(os.path.join(a.dir, "spmv_kernels_env.txt"))
    summary(a.dir, k, a.command)
    plots(a.dir, k, f"{ek.get('gpu_name', '?')}, {ek.get('date', '')}")
    print(f"plots.py: {len(k)} matrices -> {a.dir}/spmv.csv, summary.md, speedup_vs_nnz.png, bandwidth_fraction.png, setup_vs_gain.png")


if __name__ == "__main__":
    main()
