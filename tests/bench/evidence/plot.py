#!/usr/bin/env python3
"""PNG plots from evidence.py runs, on the build machine (python3-matplotlib):

    python3 plot.py OUT_PREFIX LABEL=DIR [LABEL=DIR ...]

writes OUT_PREFIX-enforcement-<victim>.png (Bakita & Anderson, ECRTS 2025, Fig. 12: 0/25/50/75/99/100th percentiles of the victim's
step latency per mode, beside a compute and a memory neighbour), OUT_PREFIX-granularity.png (Fig. 13: time of
an 8192^3 matmul at each partition size each method can express) and OUT_PREFIX-set-to-applied.png (the CDF
of the time from a change's write to the first launch that carries it), one panel per GPU (LABEL)."""
import collections
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from evidence_modes import load_modes  # noqa: E402
from summarize import LAYOUTS, mode_order, read_numbers  # noqa: E402

COLOURS = {"no MPS": "#7f7f7f", "gpupart packed": "#1f77b4", "gpupart spread": "#6baed6",
           "green contexts": "#2ca02c", "MPS 50%": "#d62728", "MPS no limit": "#ff9896"}
VICTIMS = {"mm": "4096³ bf16 cuBLAS matmul", "mem": "1 GiB streaming copy", "torch-mm": "4096³ bf16 torch.matmul",
           "torch-net": "ResNet-18 inference (PyTorch)"}


def layout_of(mode):
    return next(layout for layout in LAYOUTS if mode.startswith(layout))


def enforcement(prefix, runs):
    victims = sorted({m["victim"] for _, out in runs for m in load_modes(out) if m.get("part") == "enforce"},
                     key=lambda v: list(VICTIMS).index(v))
    for victim in victims:
        fig, axes = plt.subplots(len(runs), 2, figsize=(13, 4.2 * len(runs)), squeeze=False)
        for row, (label, out) in enumerate(runs):
            samples = collections.defaultdict(list)
            for m in load_modes(out):
                if m.get("part") == "enforce" and m["victim"] == victim:
                    samples[m["mode"]] += read_numbers(os.path.join(out, m["raw"]))
            for col, neighbour in enumerate(("mm", "mem")):
                ax = axes[row][col]
                names = sorted((n for n in samples if n.endswith(" alone") or n.endswith(f" + {neighbour}")),
                               key=mode_order)
                names = [n for n in names if not (n.startswith("no MPS") and n.endswith("alone"))] + \
                    [n for n in names if n.startswith("no MPS") and n.endswith("alone")]
                data = [[x / 1000 for x in samples[n]] for n in names]
                box = ax.boxplot(data, vert=False, whis=(0, 100), showfliers=False, widths=0.6, patch_artist=True,
                                 medianprops={"color": "black"})
                for patch, name in zip(box["boxes"], names):
                    patch.set_facecolor(COLOURS[layout_of(name)])
                    patch.set_alpha(0.75 if name.endswith(f"+ {neighbour}") else 0.3)
                for i, d in enumerate(data, start=1):  # the 99th percentile, which the whiskers pass
                    s = sorted(d)
                    ax.plot([s[int(0.99 * (len(s) - 1))]], [i], marker="|", color="black", markersize=10)
                ax.set_yticks(range(1, len(names) + 1), names, fontsize=8)
                ax.set_xscale("log")
                ax.set_xlabel("step latency (ms, log): box 25-75%, line median, | 99th, whiskers min-max")
                what = "compute (8192³ matmul)" if neighbour == "mm" else "memory (2 GiB streaming copy)"
                ax.set_title(f"{label}: beside a {what} neighbour", fontsize=10)
                ax.grid(axis="x", which="both", alpha=0.3)
        fig.suptitle(f"Partition enforcement, victim: {VICTIMS.get(victim, victim)} (pale: alone on its share)")
        fig.tight_layout()
        fig.savefig(f"{prefix}-enforcement-{victim}.png", dpi=110)
        plt.close(fig)


def granularity(prefix, runs):
    fig, axes = plt.subplots(1, len(runs), figsize=(6.5 * len(runs), 4.5), squeeze=False)
    for col, (label, out) in enumerate(runs):
        setup = next(m for m in load_modes(out) if m.get("part") == "setup")
        total = setup["tpcs"]
        points = collections.defaultdict(list)
        for line in open(os.path.join(out, "granularity.txt")):
            w = line.split()
            if len(w) < 4:
                continue
            if w[0] == "gpupart":
                points["gpupart (any TPCs, live)"].append((int(w[1]), float(w[3])))
            elif w[0] == "green-sms":
                points["green contexts (multiples of 8 SMs)"].append((int(w[1]) / 2, float(w[3])))
            elif w[0] == "mps":
                points["MPS percentage (2% steps)"].append((int(w[1]) / 100 * total, float(w[3])))
        ax = axes[0][col]
        for (name, p), marker in zip(points.items(), ("o", "s", "^")):
            p.sort()
            ax.plot([x for x, _ in p], [y for _, y in p], marker=marker, markersize=3, linewidth=1, label=name)
        ax.set_yscale("log")
        ax.set_xlabel(f"partition size (TPCs of {total}; MPS: percentage x {total})")
        ax.set_ylabel("8192³ bf16 matmul, mean ms (log)")
        ax.set_title(label)
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=8)
    fig.suptitle("Granularity: every partition size each method can express (MIG: not enabled on these GPUs)")
    fig.tight_layout()
    fig.savefig(f"{prefix}-granularity.png", dpi=110)
    plt.close(fig)


def set_to_applied(prefix, runs):
    fig, ax = plt.subplots(figsize=(7, 4))
    for label, out in runs:
        for kind, style in (("eager", "-"), ("graph", "--")):
            path = os.path.join(out, f"set-{kind}.txt")
            if not os.path.exists(path):
                continue
            v = sorted(read_numbers(path, 2))
            ax.plot(v, [(i + 1) / len(v) for i in range(len(v))], style, label=f"{label}, {kind} launches")
    ax.set_xlabel("from the control block's write to the first launch carrying it (us)")
    ax.set_ylabel("fraction of changes")
    ax.set_title("Set-to-applied: live changes of a running process (300 each)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(f"{prefix}-set-to-applied.png", dpi=110)
    plt.close(fig)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    prefix = sys.argv[1]
    runs = [tuple(arg.split("=", 1)) for arg in sys.argv[2:]]
    enforcement(prefix, runs)
    granularity(prefix, runs)
    set_to_applied(prefix, runs)


if __name__ == "__main__":
    main()
