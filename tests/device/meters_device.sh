#!/usr/bin/env bash
# GPU meters and the interference finding on a real GPU (issues 19 and 20), through the `device` tool after
# tests/device/stage.sh: under MPS, a cuBLAS matmul loop confined to gpc0-3 runs alone for 12 s, then a
# memory-heavy neighbour (a 2 GiB streaming copy) starts on gpc4-7. `gpupart top --batch` prints a frame a
# second throughout (OUT_DIR/top-frames.txt): its meters row (NVML utilisation, memory, power, SM clock,
# temperature), each process's GPU memory from NVML, and, once the victim's rate has fallen, the
# interference finding. `gpupart list` is saved too. Every process it starts is ended, MPS too.
#   meters_device.sh CARRY_DIR OUT_DIR
set -u
# shellcheck source-path=SCRIPTDIR source=device_env.sh
. "$(dirname "$0")/device_env.sh" "$1" "$2" gpupart-meters  # bin, out, gp, GPUPART_*
export XDG_CACHE_HOME=$out/cache GPUPART_JOURNAL=$out/history.jsonl LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/usr/local/cuda/lib64
export CUDA_MPS_PIPE_DIRECTORY=/tmp/gpupart-meters-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/gpupart-meters-log
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2> /dev/null; done
    sleep 1
    for pid in "${pids[@]}"; do kill -9 "$pid" 2> /dev/null; done
    "$gp" mps stop > /dev/null 2>&1
    rm -rf "$GPUPART_REGISTRY_DIR"
}
trap cleanup EXIT
"$gp" probe > "$out/probe.txt" 2>&1 || { echo "probe failed"; cat "$out/probe.txt"; exit 1; }
"$gp" mps start > "$out/mps.txt" 2>&1 || { echo "mps start failed"; cat "$out/mps.txt"; exit 1; }
"$gp" run --tpcs gpc0-3 -- "$bin/gpupart-bench-work" neighbour mm --n 4096 > "$out/victim.txt" 2>&1 &
pids+=($!)
"$gp" top --batch --frames 24 --delay 10 --size 160x50 > "$out/top-frames.txt" 2>&1 &
top_pid=$!
pids+=($top_pid)
sleep 12
"$gp" run --tpcs gpc4-7 -- "$bin/gpupart-bench-work" neighbour mem --bytes $((2 << 30)) > "$out/neighbour.txt" 2>&1 &
pids+=($!)
sleep 6
"$gp" list > "$out/list.txt" 2>&1
nvidia-smi --query-compute-apps=pid,used_memory --format=csv > "$out/nvidia-smi-apps.txt" 2>&1
wait "$top_pid"
grep -m1 "GPU [0-9]*% · mem" "$out/top-frames.txt" && echo "meters row: yes" || echo "meters row: NO"
grep -m1 "launch rate fell" "$out/top-frames.txt" && echo "interference finding: yes" || echo "interference finding: NO"
