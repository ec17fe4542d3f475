#!/usr/bin/env bash
# Measuring and planning on a real GPU, through the `device` tool after tests/device/stage.sh: under MPS, a compute-bound
# PyTorch matmul (torch_rate.py mm) and a memory-bound copy (torch_rate.py copy) run under `gpupart run` on
# every TPC. Each is measured with `gpupart measure` while the other is stopped (SIGSTOP, so that it takes
# no GPU time), then `gpupart plan` gives each a target (matmul MM_TARGET% of its full-GPU rate, copy
# COPY_TARGET%) and applies it; both run side by side for 12 s and their own logged rates are compared with
# the plan's. OUT_DIR gets the curves (JSON), measure and plan outputs, the rate logs and summary.txt.
#   planner_device.sh CARRY_DIR OUT_DIR [MM_TARGET] [COPY_TARGET]
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=device_env.sh
. "$here/device_env.sh" "$1" "$2" gpupart-planner  # bin, out, gp, GPUPART_*
mm_target=${3:-60}
copy_target=${4:-80}
export XDG_CACHE_HOME=$out/cache XDG_STATE_HOME=$out/state GPUPART_JOURNAL=$out/history.jsonl
export CUDA_MPS_PIPE_DIRECTORY=/tmp/gpupart-planner-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/gpupart-planner-log
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill -CONT "$pid" 2> /dev/null; kill "$pid" 2> /dev/null; done
    sleep 1
    for pid in "${pids[@]}"; do kill -9 "$pid" 2> /dev/null; done
    "$gp" mps stop > /dev/null 2>&1
    rm -rf "$GPUPART_REGISTRY_DIR"
}
trap cleanup EXIT
"$gp" probe > "$out/probe.txt" 2>&1 || { echo "probe failed"; cat "$out/probe.txt"; exit 1; }
"$gp" mps start > "$out/mps.txt" 2>&1 || { echo "mps start failed"; cat "$out/mps.txt"; exit 1; }
"$gp" run --tpcs all -- python3 "$here/torch_rate.py" "$out/rate-mm.txt" 400 mm > "$out/mm.txt" 2>&1 &
mm=$!
pids+=("$mm")
"$gp" run --tpcs all -- python3 "$here/torch_rate.py" "$out/rate-copy.txt" 400 copy > "$out/copy.txt" 2>&1 &
copy=$!
pids+=("$copy")
for _ in $(seq 60); do [ -s "$out/rate-mm.txt" ] && [ -s "$out/rate-copy.txt" ] && break; sleep 1; done
measure() {  # measure PID NAME OTHER: the other stopped, NAME alone on every TPC for 4 s, then the walk
    kill -STOP "$3"
    sleep 1
    echo "$2 $(date +%s.%N)" >> "$out/alone.txt"
    sleep 4
    echo "$2 $(date +%s.%N)" >> "$out/alone.txt"
    "$gp" measure "$1" --steps 7 --dwell 2500 > "$out/measure-$2.txt" 2>&1
    echo "measure $2: exit $?"
    kill -CONT "$3"
}
measure "$mm" mm "$copy"
measure "$copy" copy "$mm"
cat "$out/measure-mm.txt" "$out/measure-copy.txt"
"$gp" plan --target "$mm=${mm_target}%" --target "$copy=${copy_target}%" > "$out/plan.txt" 2>&1
echo "plan (preview): exit $?"
"$gp" plan --target "$mm=${mm_target}%" --target "$copy=${copy_target}%" --json > "$out/plan.json" 2>&1
"$gp" plan --target "$mm=${mm_target}%" --target "$copy=${copy_target}%" --apply > "$out/plan-apply.txt" 2>&1
echo "plan --apply: exit $?"
cat "$out/plan-apply.txt"
applied=$(date +%s.%N)
sleep 14
done_at=$(date +%s.%N)
"$gp" list > "$out/list-planned.txt" 2>&1
"$gp" history > "$out/history.txt" 2>&1
python3 - "$out" "$applied" "$done_at" "$mm_target" "$copy_target" <<'PY' | tee "$out/summary.txt"
import sys
out, applied, done = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
targets = {"mm": float(sys.argv[4]), "copy": float(sys.argv[5])}
alone = {}
for line in open(f"{out}/alone.txt"):
    name, when = line.split()
    alone.setdefault(name, []).append(float(when))
def mean(name, t0, t1):
    rows = [tuple(map(float, l.split())) for l in open(f"{out}/rate-{name}.txt")]
    inside = [r for t, r in rows if t0 < t <= t1]
    return (sum(inside) / len(inside) if inside else float("nan")), len(inside)
for name, unit in (("mm", "TFLOP/s"), ("copy", "GB/s")):
    full, n_full = mean(name, alone[name][0] + 1, alone[name][1])
    planned, n = mean(name, applied + 2, done)
    print(f"{name}: alone on every TPC {full:.1f} {unit} ({n_full} samples); with the plan, beside the other, "
          f"{planned:.1f} {unit} ({n} samples) = {100 * planned / full:.0f}% of alone; target {targets[name]:.0f}%")
PY
cd "$out" && tar czf planner.tgz state alone.txt measure-*.txt plan*.txt plan.json rate-*.txt list-planned.txt history.txt summary.txt
