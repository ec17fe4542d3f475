#!/usr/bin/env bash
# A capture, not a test: GPU% per process on a live GPU, two torch_rate.py under gpupart run, without and
# with MPS; gpupart top --batch frames and nvidia-smi pmon beside them, packed as OUT_DIR/util.tgz for a
# person to read (docs/measurements). It checks nothing; the device tests (tests/device) do.
#   gpu_util_capture.sh CARRY_DIR OUT_DIR   (on the GPU machine, after tests/device/stage.sh)
set -u
here=$(cd "$(dirname "$0")/../../tests/device" && pwd)  # device_env.sh and torch_rate.py
# shellcheck source=../../tests/device/device_env.sh
. "$here/device_env.sh" "$1" "$2" gpupart-util
export XDG_CACHE_HOME=$out/cache GPUPART_JOURNAL=$out/history.jsonl
export CUDA_MPS_PIPE_DIRECTORY=/tmp/gpupart-util-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/gpupart-util-log
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; sleep 1; for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done; "$gp" mps stop >/dev/null 2>&1; rm -rf "$GPUPART_REGISTRY_DIR"; }
trap cleanup EXIT
"$gp" probe > "$out/probe.txt" 2>&1
for mode in nomps mps; do
  if [ $mode = mps ]; then "$gp" mps start > "$out/mps.txt" 2>&1; fi
  "$gp" run --tpcs gpc0-5 -- python3 "$here/torch_rate.py" "$out/$mode-a.txt" 25 > /dev/null 2>&1 & pids+=($!)
  "$gp" run --tpcs gpc6-7 -- python3 "$here/torch_rate.py" "$out/$mode-b.txt" 25 > /dev/null 2>&1 & pids+=($!)
  for _ in $(seq 40); do [ -s "$out/$mode-a.txt" ] && [ -s "$out/$mode-b.txt" ] && break; sleep 1; done
  sleep 3
  "$gp" top --batch --frames 3 --delay 10 --size 200x30 > "$out/top-$mode.txt" 2>&1
  nvidia-smi pmon -c 1 > "$out/pmon-$mode.txt" 2>&1
  wait "${pids[@]}" 2>/dev/null; pids=()
done
cd "$out" && tar czf util.tgz top-*.txt pmon-*.txt nomps-*.txt mps-*.txt
