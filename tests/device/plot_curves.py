#!/usr/bin/env python3
"""Draws measured scaling curves (the JSON files `gpupart measure` saves) with their fits C(m) = a/m + b:
rate against TPCs, each curve normalised to its rate on the most TPCs measured, so that a compute-bound and
a memory-bound process share one axis (Zahaf et al., RTNS 2021, Figure 3's shape).

    plot_curves.py OUT.png CURVE.json [CURVE.json ...]"""
import json
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt


def main():
    out, files = sys.argv[1], sys.argv[2:]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for f in files:
        curve = json.load(open(f))
        points = sorted((p["tpcs"], p["rate"]) for p in curve["points"])
        most = max(points)[1]
        a, b = curve["fit"]["a"], curve["fit"]["b"]
        label = curve["command"].split()[-1] if curve["command"] else f
        ms = range(min(points)[0], max(points)[0] + 1)
        # The class as gpupart measure prints it: the measured speedup from half the TPCs to all of them
        # (Zahaf et al., RTNS 2021, Definition 1; below 1.25 memory-intensive). The file's "class" field is not used: files
        # written before 2026-11-25 23:20 hold the fit's class there, not the measured one.
        top = max(points)[0]
        half_rate = min(points, key=lambda p: abs(p[0] - top / 2))[1]
        speedup = most / half_rate
        kind = "memory" if speedup < 1.25 else "compute"
        line = ax.plot(ms, [1 / (a / m + b) / most for m in ms], "-",
                       label=f"{label}: {kind}-intensive, {speedup:.2f}x from {top // 2 + top % 2} to {top} TPCs; "
                             f"fit a={a * 1e3:.2f} ms·TPC, b={b * 1e3:.3f} ms")
        ax.plot([m for m, _ in points], [r / most for _, r in points], "o", color=line[0].get_color())
    ax.set_xlabel("TPCs")
    ax.set_ylabel("launches/s, relative to all TPCs")
    ax.set_title("Scaling curves measured live by gpupart measure (H100)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main()
