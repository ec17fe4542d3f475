"""The partition-enforcement matrix and the granularity sweeps of evidence.py (Bakita & Anderson, ECRTS 2025, sections 6.2 and 6.3)."""
import json
import os
import subprocess
import sys
from dataclasses import dataclass

HERE = os.path.dirname(os.path.abspath(__file__))
# The PyTorch victims (torch_victim.py) run in the modes the anchors ran, once a round: a process start
# costs seconds there. Green contexts cannot hold a PyTorch program (it makes its own contexts).
TORCH_MODES = ("no MPS alone", "no MPS + mm", "gpupart packed alone", "gpupart packed + mm", "gpupart packed + mem",
               "MPS 50% alone", "MPS 50% + mm", "MPS 50% + mem", "MPS no limit + mm", "MPS no limit + mem")
SMI_FIELDS = "timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu,utilization.memory,temperature.gpu"
NEIGHBOUR_ARGS = {"mm": ["--n", "8192"], "mem": ["--bytes", str(2 << 30)]}  # the anchors' neighbours
VICTIM_ARGS = {"mm": ["--n", "4096"], "mem": ["--bytes", str(1 << 30)]}


@dataclass
class Mode:
    name: str          # what the tables call it
    mps: bool          # needs the MPS daemon
    victim: str        # launcher of the victim: plain, mps:<pct>, gp:<expression>, or green
    neighbour: str     # launcher of the neighbour ("" none)
    share: float       # the victim's fraction of the GPU's TPCs, for Bakita & Anderson's (ECRTS 2025) "scaled" reference


def bits(tpcs):
    return ",".join(str(b) for b in sorted(tpcs))


def enforcement_modes(bench):
    """Every mode, each with and without each neighbour: gpupart GPC-packed (gpc0-3 against the rest) and
    spread (every other TPC of each GPC), MPS at 50% and without limits, no MPS (time-sliced), green contexts."""
    total = bench.total_tpcs
    packed = set(bench.parse("gpc0-3")["tpc_bits"])
    everything = set(bench.all["tpc_bits"])
    spread = {tpcs[i] for tpcs in bench.per_gpc for i in range(0, len(tpcs), 2)}
    bench.victim_sms = 2 * len(packed)  # green contexts get the same number of SMs as the packed victim
    layouts = {
        "gpupart packed": ("gp:" + bits(packed), "gp:" + bits(everything - packed), len(packed) / total, True),
        "gpupart spread": ("gp:" + bits(spread), "gp:" + bits(everything - spread), len(spread) / total, True),
        "MPS 50%": ("mps:50", "mps:50", 0.5, True),
        "MPS no limit": ("plain", "plain", 1.0, True),
        "no MPS": ("plain", "plain", 1.0, False),
        "green contexts": ("green", "green", len(packed) / total, False),
    }
    result = []
    for layout, (victim, neighbour, share, mps) in layouts.items():
        result.append(Mode(f"{layout} alone", mps, victim, "", share))
        result.append(Mode(f"{layout} + mm", mps, victim, neighbour, share))
        result.append(Mode(f"{layout} + mem", mps, victim, neighbour, share))
    return result


def neighbour_kind(mode):
    return mode.name.rsplit(" ", 1)[1] if " + " in mode.name else ""


def smi(bench, path):
    return bench.popen(["nvidia-smi", "-i", "0", f"--query-gpu={SMI_FIELDS}", "--format=csv,noheader,nounits",
                        "-lms", "100", "-f", path], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def run_enforcement(bench, mode, victim, rnd, seconds):
    kind = neighbour_kind(mode)
    tag = f"{mode.name.replace(' ', '_').replace('%', 'pct').replace('+', 'with')}-{victim}-r{rnd}"
    raw = os.path.join(bench.out, f"enforce-{tag}.txt")
    smi_path = os.path.join(bench.out, f"smi-{tag}.csv")
    neighbour = None
    if mode.victim == "green":
        argv, extra = [bench.green, "pair", victim, kind or "none", "--victim-sms", str(bench.victim_sms),
                       "--seconds", str(seconds), "--out", raw] + VICTIM_ARGS[victim], {}
    else:
        if kind:
            nargv, nextra = bench.under(mode.neighbour, [bench.work, "neighbour", kind] + NEIGHBOUR_ARGS[kind])
            neighbour = bench.popen(nargv, nextra, stdout=subprocess.PIPE, stderr=bench.log, text=True)
            if neighbour.stdout.readline().strip() != "running":
                raise RuntimeError(f"{mode.name}: the neighbour did not start")
        program = ([sys.executable, os.path.join(HERE, "torch_victim.py"), victim[len("torch-"):]]
                   if victim.startswith("torch-") else [bench.work, "victim", victim] + VICTIM_ARGS[victim])
        argv, extra = bench.under(mode.victim, program + ["--seconds", str(seconds), "--out", raw])
    sampler = smi(bench, smi_path)
    r = bench.run(argv, extra, timeout=120)
    bench.stop(sampler)
    if neighbour is not None:
        bench.stop(neighbour)
    if r.returncode != 0:
        raise RuntimeError(f"{mode.name}, victim {victim}: {r.stderr.strip()}")
    summary = next(line for line in r.stdout.splitlines() if line.startswith("victim "))
    green = next((line for line in r.stdout.splitlines() if line.startswith("green ")), "")
    network = next((line[len("network "):] for line in r.stdout.splitlines() if line.startswith("network ")), "")
    words = summary.split()
    bench.record(part="enforce", mode=mode.name, victim=victim, neighbour=kind, round=rnd, mps=mode.mps,
                 share=mode.share, raw=os.path.basename(raw), smi=os.path.basename(smi_path),
                 p50_us=float(words[words.index("p50") + 1]), p99_us=float(words[words.index("p99") + 1]),
                 green=green, network=network)
    print(f"  {mode.name:<24} victim {victim:<3} r{rnd}: {summary}", flush=True)


def granularity(bench, count):
    """Mean time of an 8192^3 bf16 matrix multiply at every partition size each method can express."""
    path = os.path.join(bench.out, "granularity.txt")
    unit = ["sweep", "mm", "--n", "8192", "--count", str(count)]
    with open(path, "w") as f:
        # gpupart: one process, its TPCs changed live between sizes (GPC-packed "K tpcs").
        bench.mps(False)
        p = bench.popen([bench.gp, "run", "--tpcs", "all", "--snapshot", bench.snapshot, "--", bench.work] + unit,
                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        bench.wait_registered(p.pid)
        for k in range(1, bench.total_tpcs + 1):
            r = bench.run([bench.gp, "set", str(p.pid), f"{k} tpcs", "--snapshot", bench.snapshot])
            if r.returncode != 0:
                raise RuntimeError(f"gpupart set {k} tpcs: {r.stderr.strip()}")
            p.stdin.write(f"gpupart {k}\n")
            p.stdin.flush()
            f.write(p.stdout.readline())
        p.stdin.close()
        bench.stop(p)
        # Green contexts: every size the driver allows, in one process.
        r = bench.run([bench.green] + unit, timeout=600)
        if r.returncode != 0:
            raise RuntimeError("green sweep: " + r.stderr.strip())
        f.write(r.stdout)
        # MPS: one client per percentage (it is fixed at the client's start).
        bench.mps(True)
        for pct in range(2, 101, 2):
            r = subprocess.run([bench.work] + unit, input=f"mps {pct}\n", capture_output=True, text=True,
                               env=dict(bench.env, CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=str(pct)), timeout=120)
            if r.returncode != 0:
                raise RuntimeError(f"MPS {pct}%: {r.stderr.strip()}")
            f.write(r.stdout)
        f.flush()
    bench.record(part="granularity", file="granularity.txt", tpcs=bench.total_tpcs)


def load_modes(out):
    with open(os.path.join(out, "modes.jsonl")) as f:
        return [json.loads(line) for line in f if line.strip()]
