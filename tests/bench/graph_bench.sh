#!/usr/bin/env bash
# What the shim adds to CUDA graph replays, side by side in one run on a real H100 or H200 (through the
# `device` tool after tests/device/stage.sh): gpupart-bench-graph with a 1-kernel and a 200-kernel graph,
#   bare       without the shim
#   shim-all   under `gpupart run --tpcs all`, the mask never changing
#   shim-flip  under `gpupart run --tpcs gpc0-3` while a loop moves it between gpc4-7 and gpc0-3 with
#              `gpupart set`, one move about every 50 ms (plus the time gpupart set itself takes), so
#              that some replays are the first after a change: the ones the shim must re-mask
# Each run is 3000 replays 500 us apart. Modes are interleaved so that clock and thermal drift hit all
# alike. The live topology is used (no --snapshot: the GPU may be either), after `gpupart probe` (its cache
# goes to OUT_DIR/cache); no MPS.
#   graph_bench.sh CARRY_DIR OUT_DIR
# Writes OUT_DIR/graph-bench.txt (every run's output, each line prefixed with "MODE NODES", with "rc <exit
# status>", and for shim-flip "moves <gpupart set calls that took> ms <run time>") and prints the table
# with each figure's ratio to bare (also in OUT_DIR/graph-bench-table.txt). Ends everything it starts.
set -u
# shellcheck source-path=SCRIPTDIR source=../device/device_env.sh
. "$(dirname "$0")/../device/device_env.sh" "$1" "$2" gpupart-graphbench  # bin, out, gp, GPUPART_*
export XDG_CACHE_HOME=$out/cache GPUPART_JOURNAL=$out/history.jsonl
bench_pid=
flipper=
cleanup() {
    for pid in $flipper $bench_pid; do kill -9 "$pid" 2> /dev/null; done
    rm -rf "$GPUPART_REGISTRY_DIR"
}
trap cleanup EXIT

if ! "$gp" probe > "$out/probe.txt" 2>&1; then
    echo "gpupart probe failed, so partitions cannot be named on the live GPU:"
    cat "$out/probe.txt"
    exit 1
fi
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/gpu.txt"

# flip PID: moves PID to the other half, again and again, until it exits; prints how many moves took
# (those before the shim registered the process are refused and not counted).
flip() {
    local moves=0 half
    while kill -0 "$1" 2> /dev/null; do
        for half in gpc4-7 gpc0-3; do
            "$gp" set "$1" "$half" > /dev/null 2>&1 && moves=$((moves + 1))
            sleep 0.05
        done
    done
    echo "$moves"
}

# run_one MODE NODES: one benchmark run, appended to graph-bench.txt.
run_one() {
    local mode=$1 nodes=$2 run=$out/run.txt rc start
    local program=("$bin/gpupart-bench-graph" --nodes "$nodes" --iterations 3000 --interval-us 500)
    start=$(date +%s%N)
    case $mode in
        bare) "${program[@]}" > "$run" 2>&1; rc=$? ;;
        shim-all) "$gp" run --tpcs all -- "${program[@]}" > "$run" 2>&1; rc=$? ;;
        shim-flip)
            "$gp" run --tpcs gpc0-3 -- "${program[@]}" > "$run" 2>&1 &
            bench_pid=$!  # gpupart run execs the program: the same process
            flip "$bench_pid" > "$out/moves.txt" &
            flipper=$!
            wait "$bench_pid"; rc=$?
            wait "$flipper"
            bench_pid=; flipper=
            echo "moves $(cat "$out/moves.txt") ms $(( ($(date +%s%N) - start) / 1000000 ))" >> "$run" ;;
    esac
    echo "rc $rc" >> "$run"
    sed "s/^/$mode $nodes /" "$run" >> "$out/graph-bench.txt"
}

: > "$out/graph-bench.txt"
for rep in 1 2 3; do
    for nodes in 1 200; do
        for mode in bare shim-all shim-flip; do
            echo "rep $rep, $nodes-kernel graph, $mode"
            run_one "$mode" "$nodes"
        done
    done
done

python3 - "$out/graph-bench.txt" <<'PY' | tee "$out/graph-bench-table.txt"
import collections, statistics, sys
runs = collections.defaultdict(lambda: collections.defaultdict(list))  # (mode, nodes) -> figure -> one value per run
for line in open(sys.argv[1]):
    p = line.split()
    if len(p) < 4: continue
    key, what = (p[0], int(p[1])), p[2]
    if what in ("launch_ns", "e2e_ns"):
        for name, value in zip(p[3::2], p[4::2]): runs[key][f"{what[:-3]} {name}"].append(float(value))
    elif what in ("slow_e2e", "moves", "rc"):
        runs[key][what].append(float(p[3]))
        if what == "moves": runs[key]["seconds"].append(float(p[5]) / 1000)
# Per mode: the median over runs of each run's median, p99 and mean; the largest max.
figures = [("launch median", statistics.median), ("e2e median", statistics.median), ("e2e p99", statistics.median),
           ("e2e max", max), ("e2e mean", statistics.median)]
def value(key, figure, how): return how(runs[key][figure]) if runs[key][figure] else float("nan")
header = f"{'nodes':>5} {'mode':<9}" + "".join(f" {name:>13} {'x bare':>6}" for name, _ in figures)
print(header + f" {'slow':>5} {'failed':>6} {'moves/s':>7}")
for nodes in (1, 200):
    for mode in ("bare", "shim-all", "shim-flip"):
        key = (mode, nodes)
        row = f"{nodes:>5} {mode:<9}"
        for name, how in figures:
            v, bare = value(key, name, how), value(("bare", nodes), name, how)
            row += f" {v:>13.0f} {v / bare:>6.2f}"
        failed = sum(1 for rc in runs[key]["rc"] if rc != 0)
        seconds = sum(runs[key]["seconds"])
        moves = f"{sum(runs[key]['moves']) / seconds:.1f}" if seconds else "-"
        print(row + f" {int(sum(runs[key]['slow_e2e'])):>5} {failed:>6} {moves:>7}")
print("times in ns; slow: replays (all runs) whose e2e took over twice their run's median; moves/s: gpupart set calls that took, per second of run")
print(f"runs per row: {len(runs[('bare', 1)]['rc'])}, 3000 replays each, 500 us apart")
PY
