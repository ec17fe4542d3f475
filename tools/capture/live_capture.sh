#!/usr/bin/env bash
# A capture, not a test: the live floorplan on the GPU machine with two partitioned CUDA processes running
# side by side under MPS, read live after `gpupart probe` (run through the `device` tool after
# tests/device/stage.sh): `gpupart top --batch` frames and `gpupart export --processes --json`, kept for
# docs/screenshots and tests/fixtures/live-h100-partitioned. It checks nothing; the device tests do.
#   live_capture.sh CARRY_DIR OUT_DIR
# Every process it starts is ended, MPS included, also on failure.
set -u
# shellcheck source=../../tests/device/device_env.sh
. "$(dirname "$0")/../../tests/device/device_env.sh" "$1" "$2" gpupart-livecap  # bin, out, gp, GPUPART_*
export CUDA_MPS_PIPE_DIRECTORY=/tmp/gpupart-mps CUDA_MPS_LOG_DIRECTORY=/tmp/gpupart-mps-log
export GPUPART_JOURNAL=$out/history.jsonl LANG=C.UTF-8
# The live topology: probe first, so the mask bits are known and partitions can be named by GPC.

snap=()
"$gp" probe | tail -3
started=()
cleanup() {
    for pid in "${started[@]}"; do kill -9 "$pid" 2> /dev/null; done
    "$gp" mps stop > /dev/null 2>&1
    rm -rf "$GPUPART_REGISTRY_DIR"
}
trap cleanup EXIT

nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader
echo "libraries of gpupart:"; ldd "$gp" | grep -E "curses|tinfo|fmt"
"$gp" mps start
spin=("$bin/gpupart-dev-spin" --spin-ms 200 --repeat 100)  # about 40 s on half the GPU: outlives the capture
"$gp" run --tpcs gpc0-3 "${snap[@]}" -- "${spin[@]}" > "$out/a.txt" 2>&1 &
started+=($!)
"$gp" run --tpcs gpc4-7 "${snap[@]}" -- "${spin[@]}" > "$out/b.txt" 2>&1 &
started+=($!)
# Both registered and launching (the shim says "active" once it applied a mask to a launch).
for _ in $(seq 1 150); do
    [ "$("$gp" list --json | grep -c '"state": "active"')" -ge 2 ] && break
    sleep 0.1
done
"$gp" list | tee "$out/list.txt"
echo "== gpupart top --batch -n 2 -d 10 --size 120x40"
"$gp" top --batch -n 2 -d 10 --size 120x40 "${snap[@]}" | tee "$out/top-120x40.txt"
echo "== gpupart top --batch --size 80x24"
"$gp" top --batch --size 80x24 "${snap[@]}" | tee "$out/top-80x24.txt"
echo "== the two processes"
head -3 "$out/a.txt" "$out/b.txt"
echo "== gpupart export --processes --json"
"$gp" export --processes --json "$out/live-partitioned.json"
grep -c '"pid"' "$out/live-partitioned.json"
"$gp" topology | head -8
