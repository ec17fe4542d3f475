#!/usr/bin/env bash
# Shim overhead on a real GPU, side by side in one run (through the `device` tool, after
# tests/device/stage.sh): host cost of launching an empty kernel and of replaying a graph, and the
# time to start a small CUDA process, each without the shim (plain), with the shim preloaded by hand
# (shim-direct, gpc1), and through `gpupart run` with every TPC allowed (shim-all) or gpc1 (shim-gpc1). Modes are interleaved so clock and thermal drift hit all alike.
#   run_bench.sh CARRY_DIR OUT_DIR
set -u
# shellcheck source-path=SCRIPTDIR source=../device/device_env.sh
. "$(dirname "$0")/../device/device_env.sh" "$1" "$2" gpupart-bench  # bin, out, gp, GPUPART_*
trap 'rm -rf "$GPUPART_REGISTRY_DIR"' EXIT
# Masks are kept per GPU UUID (registry layout 4): this GPU's live map (probed into a private cache and
# exported), and its UUID for the shim preloaded by hand. A recording of another GPU would confine nothing.
mkdir -p "$out/probe-cache"
XDG_CACHE_HOME="$out/probe-cache" "$gp" probe > "$out/probe.txt" 2>&1 || { echo "gpupart probe failed"; cat "$out/probe.txt"; exit 1; }
XDG_CACHE_HOME="$out/probe-cache" "$gp" export --json "$out/live.json" > /dev/null
snap=(--snapshot "$out/live.json")
uuid=$(nvidia-smi --query-gpu=uuid --format=csv,noheader -i 0)
# GPUPART_TPCS holds launch-descriptor bits (the shim's side of the registry), not TPC numbers.
gpc1_hex=$(descriptor_bits gpc1 "${snap[@]}")
real_hex=$(descriptor_bits all "${snap[@]}")

as_mode() {  # as_mode MODE CMD...: runs CMD as MODE says
    local mode=$1; shift
    case $mode in
        plain) "$@" ;;
        plain-8conn) CUDA_DEVICE_MAX_CONNECTIONS=8 "$@" ;;  # what gpupart run sets for MPS clients
        shim-direct) LD_PRELOAD="$GPUPART_SHIM" GPUPART_TPCS="$uuid=$gpc1_hex" GPUPART_REAL_TPCS="$uuid=$real_hex" "$@" ;;
        shim-all) "$gp" run --tpcs all "${snap[@]}" -- "$@" ;;
        shim-gpc1) "$gp" run --tpcs gpc1 "${snap[@]}" -- "$@" ;;
    esac
}
modes=(plain shim-direct shim-all shim-gpc1)

# 100 launches a round, then a sync: the launch queue never fills, so a round measures the host-side
# cost of a launch (where the shim's callback runs), not the GPU's pace (an empty kernel takes ~4 us there).
for rep in 1 2 3 4 5 6; do
    for mode in "${modes[@]}"; do
        as_mode "$mode" "$bin/gpupart-bench-launch" --launches 100 --rounds 200 | sed "s/^/$mode /" >> "$out/launch.txt"
        as_mode "$mode" "$bin/gpupart-bench-launch" --launches 1000 --rounds 50 --graph | sed "s/^/$mode /" >> "$out/graph.txt"
    done
done
for rep in $(seq 1 20); do
    for mode in "${modes[@]}" plain-8conn wrapper-only; do
        start=$(date +%s%N)
        if [ "$mode" = wrapper-only ]; then "$gp" run --tpcs gpc1 "${snap[@]}" -- true; else as_mode "$mode" "$bin/gpupart-bench-start" > /dev/null; fi
        echo "$mode start_ms $(( ($(date +%s%N) - start) / 1000 ))" >> "$out/start.txt"
    done
done

python3 - "$out" <<'PY'
import statistics, sys, collections
out = sys.argv[1]
def collect(name, key):
    values = collections.defaultdict(list)
    for line in open(f"{out}/{name}"):
        parts = line.split()
        if len(parts) > 1 and parts[1] in ("round", "start_ms") and key in parts:
            values[parts[0]].append(float(parts[parts.index(key) + 1]))
    return values
launch = collect("launch.txt", "launch_ns"); graph = collect("graph.txt", "replay_ns"); start = collect("start.txt", "start_ms")
base = {"launch": statistics.median(launch["plain"]), "graph": statistics.median(graph["plain"]), "start": statistics.median(start["plain"])}
print(f"{'mode':<10} {'launch ns (median)':>20} {'added':>8} {'graph replay ns':>16} {'added':>8} {'start ms':>9} {'ratio':>6}")
for mode in ("plain", "shim-direct", "shim-all", "shim-gpc1"):
    l = statistics.median(launch[mode]); g = statistics.median(graph[mode]); s = statistics.median(start[mode]) / 1000
    print(f"{mode:<10} {l:>20.1f} {l - base['launch']:>+8.1f} {g:>16.1f} {g - base['graph']:>+8.1f} {s:>9.1f} {s / (base['start'] / 1000):>6.2f}")
print(f"start ms without the shim but with CUDA_DEVICE_MAX_CONNECTIONS=8 (set by gpupart run): {statistics.median(start['plain-8conn']) / 1000:.1f}")
print(f"gpupart run itself (exec of `true`, no CUDA): {statistics.median(start['wrapper-only']) / 1000:.1f} ms")
print(f"samples per mode: {len(launch['plain'])} rounds of 100 launches, {len(graph['plain'])} rounds of 10 replays of a 100-kernel graph, {len(start['plain'])} process starts")
PY
