#!/usr/bin/env python3
"""The evaluation (section 6) of Bakita & Anderson's "Hardware Compute Partitioning on NVIDIA GPUs for Composable Systems" (ECRTS 2025) reproduced for gpupart on one real GPU, beside MPS, green contexts and no
partitioning at all, in one run: start-up, launch, set-to-applied, partition enforcement and granularity
(tests/bench/evidence/README.md). Runs on the GPU machine after tests/device/stage.sh:

    python3 tests/bench/evidence/evidence.py CARRY_DIR OUT_DIR [--rounds R] [--seconds S] [--parts a,b]

Writes raw data under OUT_DIR (one file per measurement, modes.jsonl with one line per measured mode, the
nvidia-smi samples of each enforcement mode) for summarize.py and plot.py. Every process it starts is ended,
by its PID, and the MPS daemon it starts is stopped, also on an error or Ctrl-C.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import evidence_modes as modes  # noqa: E402  (the modes of the enforcement matrix)

PARTS = ("startup", "launch", "set", "enforce", "granularity")


class Bench:
    def __init__(self, carry, out):
        self.bin = os.path.abspath(carry)
        self.out = os.path.abspath(out)
        os.makedirs(self.out, exist_ok=True)
        self.gp = os.path.join(self.bin, "gpupart")
        self.work = os.path.join(self.bin, "gpupart-bench-work")
        self.green = os.path.join(self.bin, "gpupart-bench-green")
        env = dict(os.environ)
        libs = [self.bin, "/usr/local/cuda/lib64", env.get("LD_LIBRARY_PATH", "")]
        env.update({
            "LD_LIBRARY_PATH": ":".join(p for p in libs if p),
            "GPUPART_SHIM": os.path.join(self.bin, "libgpupart-shim.so"),
            "GPUPART_REGISTRY_DIR": "/dev/shm/gpupart-evidence",
            "GPUPART_JOURNAL": os.path.join(self.out, "history.jsonl"),
            "XDG_CACHE_HOME": os.path.join(self.out, "cache"),
            "CUDA_MPS_PIPE_DIRECTORY": "/tmp/gpupart-evidence-mps-pipe",
            "CUDA_MPS_LOG_DIRECTORY": "/tmp/gpupart-evidence-mps-log",
        })
        self.env = env
        self.started = []  # every Popen, so that cleanup ends them all
        self.mps_on = False
        self.modes_file = open(os.path.join(self.out, "modes.jsonl"), "a")
        self.log = open(os.path.join(self.out, "stderr.log"), "a")  # the neighbours' and launchers' stderr
        self.list_failures = 0
        self.set_failures = 0
        subprocess.run(["rm", "-rf", env["GPUPART_REGISTRY_DIR"]], check=False)

    # ----- processes -----
    def popen(self, argv, env_extra=None, **kwargs):
        env = dict(self.env)
        env.update(env_extra or {})
        p = subprocess.Popen(argv, env=env, **kwargs)
        self.started.append(p)
        return p

    def run(self, argv, env_extra=None, timeout=120):
        env = dict(self.env)
        env.update(env_extra or {})
        return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout)

    def stop(self, p):
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    def cleanup(self):
        for p in self.started:
            if p.poll() is None:
                p.kill()
                p.wait()
        self.mps(False)
        subprocess.run(["rm", "-rf", self.env["GPUPART_REGISTRY_DIR"]], check=False)

    def mps(self, on):
        if on == self.mps_on:
            return
        r = self.run([self.gp, "mps", "start" if on else "stop"])
        if r.returncode != 0 and on:
            raise RuntimeError("gpupart mps start failed: " + (r.stderr or r.stdout).strip())
        self.mps_on = on
        time.sleep(0.5)

    def record(self, **fields):
        self.modes_file.write(json.dumps(fields) + "\n")
        self.modes_file.flush()

    # ----- the GPU's map -----
    def setup(self):
        r = self.run([self.gp, "probe"], timeout=300)
        open(os.path.join(self.out, "probe.txt"), "w").write(r.stdout + r.stderr)
        if r.returncode != 0:
            raise RuntimeError("gpupart probe failed: " + r.stderr.strip())
        self.snapshot = os.path.join(self.out, "live.json")
        r = self.run([self.gp, "export", "--json", self.snapshot])
        if r.returncode != 0:
            raise RuntimeError("gpupart export failed: " + r.stderr.strip())
        smi = self.run(["nvidia-smi", "--query-gpu=name,uuid,driver_version,clocks.max.sm,power.limit",
                        "--format=csv,noheader"])
        open(os.path.join(self.out, "gpu.txt"), "w").write(smi.stdout)
        self.gpu_name = smi.stdout.split(",")[0].strip()
        self.all = self.parse("all")
        per_gpc = []
        g = 0
        while True:
            try:
                per_gpc.append(self.parse(f"gpc{g}")["tpc_bits"])
            except RuntimeError:
                break
            g += 1
        self.per_gpc = per_gpc
        self.total_tpcs = self.all["tpc_count"]
        self.record(part="setup", gpu=self.gpu_name, tpcs=self.total_tpcs, gpcs=[len(x) for x in per_gpc])

    def parse(self, expression):
        r = self.run([self.gp, "mask", "parse", expression, "--snapshot", self.snapshot, "--json"])
        if r.returncode != 0:
            raise RuntimeError(f"mask parse {expression}: {r.stderr.strip()}")
        return json.loads(r.stdout)

    def under(self, launcher, argv):
        """argv started as `launcher` says: plain, mps:<percent>, or gp:<mask expression>."""
        if launcher.startswith("gp:"):
            return [self.gp, "run", "--tpcs", launcher[3:], "--snapshot", self.snapshot, "--"] + argv, {}
        if launcher.startswith("mps:"):
            return argv, {"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE": launcher[4:]}
        return argv, {}

    # ----- parts -----
    def startup(self, reps):
        launchers = ["plain", "gp:all", "gp:gpc0-3"]
        path = os.path.join(self.out, "startup.txt")
        with open(path, "a") as f:
            for mps in (False, True):
                self.mps(mps)
                names = launchers + (["mps:50"] if mps else [])
                for rep in range(reps):
                    for launcher in names:
                        t = time.time_ns()
                        argv, extra = self.under(launcher, [self.work, "startup", "--exec-ns", str(t)])
                        r = self.run(argv, extra)
                        words = r.stdout.split()
                        if r.returncode != 0 or "kernel_start_ns" not in words:
                            raise RuntimeError(f"startup under {launcher}: {r.stderr.strip()}")
                        k = words[words.index("kernel_start_ns") + 1]
                        d = words[words.index("done_ns") + 1]
                        f.write(f"{'mps' if mps else 'nomps'} {launcher} {rep} {k} {d}\n")

    def launch(self, reps):
        for mps in (False, True):
            self.mps(mps)
            for rep in range(reps):
                for launcher in ("plain", "gp:all", "gp:gpc0-3"):
                    name = f"{'mps' if mps else 'nomps'}-{launcher.replace(':', '_')}-{rep}"
                    argv, extra = self.under(launcher, [self.work, "launch", "--count", "20000", "--out",
                                                        os.path.join(self.out, f"launch-{name}.txt")])
                    r = self.run(argv, extra)
                    if r.returncode != 0:
                        raise RuntimeError(f"launch under {launcher}: {r.stderr.strip()}")

    def set_to_applied(self, sets):
        self.mps(False)
        masks = ["gpc4-7", "gpc0-3"]
        for graph in (False, True):
            kind = "graph" if graph else "eager"
            argv = [self.gp, "run", "--tpcs", "gpc0-3", "--snapshot", self.snapshot, "--",
                    self.work, "launcher", "--kernel-us", "20"] + (["--graph"] if graph else [])
            p = self.popen(argv, stdout=subprocess.PIPE, stderr=self.log, text=True)
            if p.stdout.readline().strip() != "running":
                raise RuntimeError(f"set-to-applied launcher ({kind}) did not start")
            with open(os.path.join(self.out, f"set-{kind}.txt"), "w") as f:
                f.write("# set_ms returned_to_applied_us written_to_applied_us\n")
                for i in range(sets):
                    t0 = time.time_ns()
                    r = self.run([self.gp, "set", str(p.pid), masks[i % 2], "--snapshot", self.snapshot])
                    t1 = time.time_ns()
                    if r.returncode != 0:
                        # Counted and logged with its exit status (a negative one is the signal that ended it);
                        # the next set goes on.
                        self.set_failures += 1
                        self.log.write(f"gpupart set #{i} ({kind}) exit {r.returncode}: stdout [{r.stdout.strip()}] "
                                       f"stderr [{r.stderr.strip()}]\n")
                        self.log.flush()
                        continue
                    applied, written = self.wait_applied(p.pid)
                    f.write(f"{(t1 - t0) / 1e6:.3f} {(applied - t1) / 1e3:.1f} {(applied - written) / 1e3:.1f}\n")
            self.stop(p)
        self.record(part="set", list_failures=self.list_failures, set_failures=self.set_failures)

    def wait_registered(self, pid):
        deadline = time.time() + 30
        while time.time() < deadline:
            r = self.run([self.gp, "list", "--json"])
            if any(proc.get("pid") == pid for proc in json.loads(r.stdout)["processes"]):
                return
            time.sleep(0.05)
        raise RuntimeError(f"process {pid} did not register within 30 s")

    def wait_applied(self, pid):
        deadline = time.time() + 10
        while time.time() < deadline:
            r = self.run([self.gp, "list", "--json"])
            if r.returncode != 0 or not r.stdout.strip():
                # Kept, not hidden: a list that fails while a change is being applied is a finding of its own.
                self.list_failures += 1
                self.log.write(f"gpupart list --json exit {r.returncode}: stdout [{r.stdout.strip()[:300]}] "
                               f"stderr [{r.stderr.strip()}]\n")
                self.log.flush()
                continue
            for proc in json.loads(r.stdout)["processes"]:
                if proc.get("pid") != pid or not proc.get("requested"):
                    continue
                shim = proc["gpus"][0]["shim"] if proc["gpus"] else {}
                if shim.get("applied_generation") == proc["requested"]["generation"]:
                    return shim["applied_realtime_ns"], proc["requested"]["written_realtime_ns"]
        raise RuntimeError(f"process {pid} did not apply its change within 10 s")

    def enforce(self, rounds, seconds, torch_victims, first_round):
        plan = modes.enforcement_modes(self)
        for rnd in range(first_round, first_round + rounds):
            for mps in (True, False):
                self.mps(mps)
                for mode in (m for m in plan if m.mps == mps):
                    victims = ["mm", "mem"]
                    if torch_victims and mode.name in modes.TORCH_MODES:
                        victims += ["torch-mm", "torch-net"]
                    for victim in victims:
                        modes.run_enforcement(self, mode, victim, rnd, seconds)

    def granularity(self, count):
        modes.granularity(self, count)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("carry")
    ap.add_argument("out")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--first-round", type=int, default=0,
                    help="number of the first enforcement round (runs split over several calls, merged later)")
    ap.add_argument("--seconds", type=int, default=2)
    ap.add_argument("--startup-reps", type=int, default=15)
    ap.add_argument("--sets", type=int, default=300)
    ap.add_argument("--count", type=int, default=5, help="timed units per size in the granularity sweeps")
    ap.add_argument("--parts", default=",".join(PARTS))
    ap.add_argument("--torch", action="store_true", help="also the PyTorch victims (torch_victim.py)")
    args = ap.parse_args()
    parts = args.parts.split(",")
    unknown = [p for p in parts if p not in PARTS]
    if unknown:
        sys.exit(f"error: unknown part {unknown[0]} (known: {', '.join(PARTS)})")
    bench = Bench(args.carry, args.out)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    try:
        bench.setup()
        for part in parts:
            t = time.time()
            if part == "startup":
                bench.startup(args.startup_reps)
            elif part == "launch":
                bench.launch(2)
            elif part == "set":
                bench.set_to_applied(args.sets)
            elif part == "enforce":
                bench.enforce(args.rounds, args.seconds, args.torch, args.first_round)
            else:
                bench.granularity(args.count)
            print(f"{part}: {time.time() - t:.0f} s", flush=True)
    finally:
        bench.cleanup()


if __name__ == "__main__":
    main()
