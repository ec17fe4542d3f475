#!/usr/bin/env python3
"""Tables (Markdown) from one evidence.py run's raw data: python3 summarize.py OUT_DIR > summary.md

Every figure is computed here from the raw files, none is typed in. Percentiles are nearest-rank."""
import collections
import csv
import glob
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from evidence_modes import load_modes  # noqa: E402


# Tables and plots list modes in this order: the unpartitioned reference, then each method, then the
# unpartitioned sharing modes; alone, then beside each neighbour.
LAYOUTS = ("no MPS", "gpupart packed", "gpupart spread", "green contexts", "MPS 50%", "MPS no limit")
NEIGHBOURS = ("alone", "mm", "mem")


def mode_order(mode):
    layout, _, neighbour = mode.replace(" + ", " ").rpartition(" ")
    return (LAYOUTS.index(layout) if layout in LAYOUTS else 99, NEIGHBOURS.index(neighbour)
            if neighbour in NEIGHBOURS else 9, mode)


def pct(values, q):
    v = sorted(values)
    return v[min(len(v) - 1, int(q * len(v)))] if v else float("nan")


def read_numbers(path, column=0):
    with open(path) as f:
        return [float(line.split()[column]) for line in f if line.strip() and not line.startswith("#")]


def smi_means(path):
    """Mean SM clock (MHz) and power (W) over a mode's nvidia-smi samples taken while the GPU was busy (GPU
    utilisation of 50% or more): the sampler starts with the victim's process, and the seconds a PyTorch victim
    spends importing, with an idle GPU and idle clocks, are not the mode's. The first sample is dropped (it
    repeats the reading from before the mode started)."""
    clocks, power = [], []
    try:
        with open(path) as f:
            rows = [r for r in csv.reader(f) if len(r) >= 4]
    except FileNotFoundError:
        return float("nan"), float("nan")
    for row in rows[1:]:
        try:
            if float(row[4]) < 50:
                continue
            clocks.append(float(row[1]))
            power.append(float(row[3]))
        except ValueError:
            continue  # "[N/A]" or a torn last line
    return (statistics.mean(clocks) if clocks else float("nan"), statistics.mean(power) if power else float("nan"))


def startup(out):
    path = os.path.join(out, "startup.txt")
    if not os.path.exists(path):
        return
    done = collections.defaultdict(list)
    for line in open(path):
        mps, launcher, _, _, done_ns = line.split()
        done[(mps, launcher)].append(float(done_ns) / 1e6)
    print("### Start-up: exec to first kernel completed (host clock, ms)\n")
    print("| MPS | started as | n | p50 | p90 | max | p50 vs plain |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for (mps, launcher), v in sorted(done.items()):
        base = statistics.median(done[(mps, "plain")])
        print(f"| {mps} | {launcher} | {len(v)} | {pct(v, .5):.1f} | {pct(v, .9):.1f} | {max(v):.1f} | "
              f"{statistics.median(v) / base:.2f} |")
    print()


def launch(out):
    files = sorted(glob.glob(os.path.join(out, "launch-*.txt")))
    if not files:
        return
    host = collections.defaultdict(list)
    start = collections.defaultdict(list)
    for path in files:
        mps, launcher = os.path.basename(path)[len("launch-"):].rsplit("-", 1)[0].split("-", 1)
        rows = [line.split() for line in open(path) if line.strip()]
        h = [float(r[0]) for r in rows]
        s = [float(r[1]) for r in rows]
        floor = min(s)  # the GPU's timer and the host's clock differ by an unknown offset: keep what is above
        host[(mps, launcher)] += h  # the process's fastest launch
        start[(mps, launcher)] += [x - floor for x in s]
    print("### Launch: host time in the launch call, and launch-to-start above the fastest launch (ns)\n")
    print("| MPS | started as | launches | host p50 | host p99 | to start, p50 above min | p99 above min |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for key in sorted(host):
        print(f"| {key[0]} | {key[1]} | {len(host[key])} | {pct(host[key], .5):.0f} | {pct(host[key], .99):.0f} | "
              f"{pct(start[key], .5):.0f} | {pct(start[key], .99):.0f} |")
    print()


def set_to_applied(out):
    rows = []
    for kind in ("eager", "graph"):
        path = os.path.join(out, f"set-{kind}.txt")
        if os.path.exists(path):
            rows.append((kind, read_numbers(path, 0), read_numbers(path, 1), read_numbers(path, 2)))
    if not rows:
        return
    print("### Set-to-applied: a live change reaching a running process's next launch\n")
    print("| launches | sets | `gpupart set` run time p50 (ms) | write to first launch with the new mask, "
          "p50 / p99 / max (us) | applied before `set` returned |")
    print("| --- | --- | --- | --- | --- |")
    for kind, set_ms, returned, written in rows:
        before = sum(1 for x in returned if x <= 0)
        print(f"| {kind} | {len(set_ms)} | {pct(set_ms, .5):.1f} | {pct(written, .5):.0f} / {pct(written, .99):.0f} / "
              f"{max(written):.0f} | {before} of {len(returned)} |")
    print()


def enforcement(out, modes):
    runs = [m for m in modes if m.get("part") == "enforce"]
    if not runs:
        return
    by = collections.defaultdict(list)
    for m in runs:
        by[(m["victim"], m["mode"])].append(m)
    names = {"mm": "4096^3 bf16 cuBLAS matmul", "mem": "1 GiB streaming copy", "torch-mm": "4096^3 bf16 torch.matmul"}
    for victim in sorted({m["victim"] for m in runs}, key=lambda v: list(names).index(v) if v in names else 9):
        network = next((m.get("network") for m in runs if m["victim"] == victim and m.get("network")), "")
        what = names.get(victim) or f"inference of {network}"
        print(f"### Enforcement, victim: {what} (per-step latency, us; every round pooled)\n")
        whole = [x for m in by.get((victim, "no MPS alone"), []) for x in read_numbers(os.path.join(out, m["raw"]))]
        whole_p50 = pct(whole, .5)
        print("| mode | steps | p50 | p50 by round | p99 | max | vs alone on its share | vs scaled | SM MHz | W |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for (v, mode), ms in sorted(by.items(), key=lambda kv: mode_order(kv[0][1])):
            if v != victim:
                continue
            samples = [x for m in ms for x in read_numbers(os.path.join(out, m["raw"]))]
            alone_name = mode if mode.endswith(" alone") else mode.rsplit(" + ", 1)[0] + " alone"
            alone = [x for m in by.get((victim, alone_name), []) for x in read_numbers(os.path.join(out, m["raw"]))]
            share = ms[0]["share"]
            scaled = whole_p50 / share if share > 0 else float("nan")  # Bakita & Anderson's (ECRTS 2025) "Scaled" reference
            clocks, power = zip(*(smi_means(os.path.join(out, m["smi"])) for m in ms))
            p50 = pct(samples, .5)
            vs_alone = f"{p50 / pct(alone, .5):.2f}" if alone else "-"
            by_round = " / ".join(f"{pct(read_numbers(os.path.join(out, m['raw'])), .5):.0f}"
                                  for m in sorted(ms, key=lambda m: m["round"]))
            print(f"| {mode} | {len(samples)} | {p50:.0f} | {by_round} | {pct(samples, .99):.0f} | {max(samples):.0f} | "
                  f"{vs_alone} | {p50 / scaled:.2f} | {statistics.mean(clocks):.0f} | "
                  f"{statistics.mean(power):.0f} |")
        print()


def granularity(out, total_tpcs, sms_per_tpc=2):
    path = os.path.join(out, "granularity.txt")
    if not os.path.exists(path):
        return
    points = collections.defaultdict(list)  # method -> [(TPCs, mean ms)]
    for line in open(path):
        w = line.split()
        if len(w) >= 4 and w[0] == "gpupart":
            points["gpupart"].append((int(w[1]), float(w[3])))
        elif len(w) >= 4 and w[0] == "green-sms":
            points["green contexts"].append((int(w[1]) / sms_per_tpc, float(w[3])))
        elif len(w) >= 4 and w[0] == "mps":
            points["MPS percentage"].append((int(w[1]) / 100 * total_tpcs, float(w[3])))
    print("### Granularity: 8192^3 bf16 matmul at every partition size each method can express\n")
    print("| method | sizes measured | smallest (TPCs) | time there (ms) | largest (TPCs) | time there (ms) | "
          "which TPCs |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    which = {"gpupart": "any set of TPCs, per process, changed live",
             "green contexts": "driver's choice, in multiples of 4 TPCs (8 SMs), one program's own contexts",
             "MPS percentage": "driver's choice, a share fixed at the client's start"}
    for method, p in points.items():
        p.sort()
        print(f"| {method} | {len(p)} | {p[0][0]:g} | {p[0][1]:.2f} | {p[-1][0]:g} | {p[-1][1]:.2f} | {which[method]} |")
    print()


def main():
    out = sys.argv[1]
    modes = load_modes(out)
    setup = next((m for m in modes if m.get("part") == "setup"), {})
    print(f"## {setup.get('gpu', 'GPU')}: {setup.get('tpcs', '?')} TPCs in GPCs of {setup.get('gpcs', '?')}\n")
    gpu = open(os.path.join(out, "gpu.txt")).read().strip() if os.path.exists(os.path.join(out, "gpu.txt")) else ""
    print(f"nvidia-smi: `{gpu}`\n")
    startup(out)
    launch(out)
    set_to_applied(out)
    enforcement(out, modes)
    granularity(out, setup.get("tpcs", 0))


if __name__ == "__main__":
    main()
