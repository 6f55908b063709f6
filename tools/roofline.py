#!/usr/bin/env python3
"""Draws the roofline picture of gk's benchmark results.

usage: tools/roofline.py OUT.png RESULT.json [RESULT.json ...]

Each JSON is a `--benchmark_out` file of a gk benchmark binary (gk_bench/results/ keeps the ones
RESULTS.md quotes). The roofs are the ceilings that binary measured in its own process (copy
bandwidth, FFMA rate and, from the GEMM binary, the mma.sync and wgmma rates, from the JSON context); each point is one benchmark row at its
arithmetic intensity (FLOP per byte of its ledger) and achieved TFLOP/s.
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(out, paths):
    fig, ax = plt.subplots(figsize=(9, 6))
    markers = "osD^v<>"
    bw = ffma = mma = wgmma = None
    for k, path in enumerate(paths):
        with open(path) as f:
            data = json.load(f)
        ctx = data["context"]
        bw = float(ctx["copy_GBps"]) * 1e9
        ffma = float(ctx["ffma_TFLOPs"]) * 1e12
        if "mma_bf16_TFLOPs" in ctx:
            mma = float(ctx["mma_bf16_TFLOPs"]) * 1e12
        if "wgmma_bf16_TFLOPs" in ctx:
            wgmma = float(ctx["wgmma_bf16_TFLOPs"]) * 1e12
        xs, ys, names = [], [], []
        for b in data["benchmarks"]:
            if b["name"].startswith(("copy_d2d", "ceiling")) or b.get("TFLOP/s", 0) <= 0 or b.get("GB/s", 0) <= 0:
                continue
            gbs, tf = b["GB/s"], b["TFLOP/s"]
            xs.append(tf * 1e12 / (gbs * 1e9))  # FLOP per byte of the ledger
            ys.append(tf)
            names.append(b["name"].split("/")[0])
        label = path.split("/")[-1].rsplit(".", 1)[0]
        ax.scatter(xs, ys, marker=markers[k % len(markers)], s=28, label=f"{label} ({len(xs)} rows)", alpha=0.8)
    lo, hi = 0.01, 10000.0
    ridge = ffma / bw
    ax.plot([lo, ridge, hi], [bw * lo / 1e12, ffma / 1e12, ffma / 1e12], "k-", lw=1.5,
            label=f"roof: copy {bw / 1e9:.0f} GB/s, FFMA {ffma / 1e12:.1f} TFLOP/s (measured)")
    if mma:
        ax.plot([lo, mma / bw, hi], [bw * lo / 1e12, mma / 1e12, mma / 1e12], "k--", lw=1.2,
                label=f"roof: mma.sync bf16 {mma / 1e12:.0f} TFLOP/s (measured)")
    if wgmma:
        ax.plot([lo, wgmma / bw, hi], [bw * lo / 1e12, wgmma / 1e12, wgmma / 1e12], "k:", lw=1.2,
                label=f"roof: wgmma bf16 {wgmma / 1e12:.0f} TFLOP/s (measured)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_xlabel("arithmetic intensity (FLOP / byte of the minimal traffic)")
    ax.set_ylabel("TFLOP/s achieved")
    ax.set_title(f"gk on {ctx.get('gpu', 'GPU')}: every benchmark row against its roof")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:])
