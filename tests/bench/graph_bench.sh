#!/usr/bin/env bash
# What the shim adds to CUDA graph replays, side by side in one run on a real H100 or H200 (through the
# `device` tool after tests/device/stage.sh): gpupart-bench-graph with a 1-kernel and a 200-kernel graph,
#   bare       without the shim
#   shim       under `gpupart run --tpcs all`, the mask never changing
#   shim-flip  under `gpupart run --tpcs gpc0-3`, the program flipping its own slot's mask between
#              gpc4-7 and gpc0-3 before every other replay (as gpupart set would): "changed" are the
#              replays right after a change, "steady" the others. After each change the program waits, as
#              gpupart set does, until the shim's re-mask thread has re-masked the exec (settle: that wait)
#   at-launch  the same with GPUPART_GRAPH_REMASK=at-launch: no thread, the exec is re-masked inside the
#              first replay after the change (what the shim did before the thread)
# Each run is 2000 replays back to back (a busy host gives steadier timings). Modes are interleaved so
# that clock and thermal drift hit all alike. The live topology is used (no --snapshot: the GPU may be
# either), after `gpupart probe` (its cache goes to OUT_DIR/cache); no MPS.
#   graph_bench.sh CARRY_DIR OUT_DIR
# Writes OUT_DIR/graph-bench.txt (every run's output, each line prefixed with "MODE NODES", and "rc <exit
# status>") and prints the table with each figure's ratio to bare (also in OUT_DIR/graph-bench-table.txt).
set -u
# shellcheck source-path=SCRIPTDIR source=../device/device_env.sh
. "$(dirname "$0")/../device/device_env.sh" "$1" "$2" gpupart-graphbench  # bin, out, gp, GPUPART_*
export XDG_CACHE_HOME=$out/cache GPUPART_JOURNAL=$out/history.jsonl
cleanup() { rm -rf "$GPUPART_REGISTRY_DIR"; }  # every run ends before the next starts
trap cleanup EXIT

if ! "$gp" probe > "$out/probe.txt" 2>&1; then
    echo "gpupart probe failed, so partitions cannot be named on the live GPU:"
    cat "$out/probe.txt"
    exit 1
fi
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/gpu.txt"

# --flip writes the slot itself, as gpupart set would: launch-descriptor bits, not TPC numbers.
flip_masks="$(descriptor_bits gpc4-7),$(descriptor_bits gpc0-3),$(descriptor_bits all)"

# run_one MODE NODES: one benchmark run, appended to graph-bench.txt.
run_one() {
    local mode=$1 nodes=$2 run=$out/run.txt rc
    local program=("$bin/gpupart-bench-graph" --nodes "$nodes" --iterations 2000)
    case $mode in
        bare) "${program[@]}" > "$run" 2>&1; rc=$? ;;
        shim) "$gp" run --tpcs all -- "${program[@]}" > "$run" 2>&1; rc=$? ;;
        shim-flip) "$gp" run --tpcs gpc0-3 -- "${program[@]}" --flip "$flip_masks" > "$run" 2>&1; rc=$? ;;
        at-launch) GPUPART_GRAPH_REMASK=at-launch "$gp" run --tpcs gpc0-3 -- "${program[@]}" --flip "$flip_masks" \
                       > "$run" 2>&1; rc=$? ;;
    esac
    echo "rc $rc" >> "$run"
    sed "s/^/$mode $nodes /" "$run" >> "$out/graph-bench.txt"
}

: > "$out/graph-bench.txt"
for rep in 1 2 3 4 5; do
    for nodes in 1 200; do
        for mode in bare shim shim-flip at-launch; do
            echo "rep $rep, $nodes-kernel graph, $mode"
            run_one "$mode" "$nodes"
        done
    done
done

python3 - "$out/graph-bench.txt" <<'PY' | tee "$out/graph-bench-table.txt"
import collections, statistics, sys
runs = collections.defaultdict(lambda: collections.defaultdict(list))  # (row, nodes) -> figure -> one value per run
for line in open(sys.argv[1]):
    p = line.split()
    if len(p) < 4: continue
    mode, nodes, what = p[0], int(p[1]), p[2]
    if what == "rc": runs[(mode, nodes)]["rc"].append(int(p[3]))
    if not what.endswith("_ns"): continue
    flipping = mode in ("shim-flip", "at-launch")
    row = mode + (" changed" if what.startswith(("changed_", "settle_")) else " steady" if flipping else "")
    kind = what.replace("changed_", "")[:-3]
    for name, value in zip(p[3::2], p[4::2]): runs[(row, nodes)][f"{kind} {name}"].append(float(value))
figures = ["launch median", "e2e median", "e2e p99", "e2e mean", "settle median"]
def med(key, figure): return statistics.median(runs[key][figure]) if runs[key][figure] else float("nan")
print(f"{'nodes':>5} {'replays':<18}" + "".join(f" {f:>13} {'x bare':>6}" for f in figures) + f" {'failed':>6}")
for nodes in (1, 200):
    for row in ("bare", "shim", "shim-flip steady", "shim-flip changed", "at-launch steady", "at-launch changed"):
        key, bare = (row, nodes), ("bare", nodes)
        line = f"{nodes:>5} {row:<18}"
        for f in figures:
            v, b = med(key, f), med(bare, f)
            line += f" {v:>13.0f} {v / b:>6.2f}" if f != "settle median" else f" {v:>13.0f} {'':>6}"
        failed = sum(1 for rc in runs[(row.split()[0], nodes)]["rc"] if rc != 0)
        print(line + f" {failed:>6}")
print("times in ns, the median over runs of each run's figure; changed: the replay right after a mask change")
print(f"runs per row: {len(runs[('bare', 1)]['rc'])}, 2000 replays each back to back (flips: 1000 changed, 1000 steady)")
added = med(("shim-flip changed", 200), "e2e median") - med(("shim-flip steady", 200), "e2e median")
failed = sum(1 for key, figures_of in runs.items() for rc in figures_of["rc"] if rc != 0)
print(f"verdict: a re-mask adds {added / 1000:.1f} us to the first replay of the 200-kernel graph (target 50 us); "
      f"{failed} runs failed")
sys.exit(0 if added <= 50_000 and failed == 0 else 1)
PY
verdict=${PIPESTATUS[0]}
[ "$verdict" -eq 0 ]
