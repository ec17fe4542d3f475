#!/usr/bin/env bash
# gpupart exporter on the GPU machine, beside two partitioned PyTorch processes: the live map
# (probed into a private cache), two matmul loops under `gpupart run` on disjoint halves, the exporter on
# loopback; its exposition before and after a `gpupart set` is kept in OUT_DIR for the note.
#   exporter_device.sh CARRY_DIR OUT_DIR
set -u
# shellcheck source-path=SCRIPTDIR source=device_env.sh
. "$(dirname "$0")/device_env.sh" "$1" "$2" gpupart-exporter  # bin, out, gp, GPUPART_*
export XDG_CACHE_HOME=$out/probe-cache GPUPART_JOURNAL=$out/history.jsonl
mkdir -p "$XDG_CACHE_HOME"
started=()
cleanup() { for pid in "${started[@]}"; do kill -9 "$pid" 2> /dev/null; done; rm -rf "$GPUPART_REGISTRY_DIR"; }
trap cleanup EXIT
"$gp" probe > "$out/probe.txt" 2>&1 || { echo "probe failed"; cat "$out/probe.txt"; exit 1; }
"$gp" export --json "$out/live.json" > /dev/null
S=(--snapshot "$out/live.json")
matmul='import torch, time
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
end = time.time() + 25
n = 0
while time.time() < end:
    (a @ a).sum().item(); n += 1
print("matmuls", n)'
"$gp" run --tpcs gpc0-3 "${S[@]}" -- python3 -c "$matmul" > "$out/torch-a.txt" 2>&1 &
started+=($!)
"$gp" run --tpcs gpc4-7 "${S[@]}" -- python3 -c "$matmul" > "$out/torch-b.txt" 2>&1 &
started+=($!)
"$gp" exporter --listen 127.0.0.1:9842 "${S[@]}" > "$out/exporter.out" 2> "$out/exporter.err" &
exporter=$!
started+=("$exporter")
sleep 10
curl -s http://127.0.0.1:9842/metrics > "$out/metrics-1.txt"
"$gp" list | tee "$out/list.txt"
pid=$(awk '/python3/ && $1 ~ /^[0-9]+$/ {print $1; exit}' "$out/list.txt")
"$gp" set "$pid" gpc1 "${S[@]}" | tee "$out/set.txt"
sleep 3
start=$(date +%s%N)
curl -s http://127.0.0.1:9842/metrics > "$out/metrics-2.txt"
echo "scrape took $(( ($(date +%s%N) - start) / 1000 )) us (curl, 2 processes)"
for pid in "${started[@]}"; do kill "$pid" 2> /dev/null; done
wait
echo "== exposition after the set, the two processes' lines (GPU labels elided)"
grep -E '^gpupart_(tpcs_owned|sms_owned|gpu_share_ratio|launches_total|masked_launches_total|change_pending|seconds_since_last_launch|set_to_first_launch_seconds_(count|sum))|^gpupart_shim_state.*\} 1$|^gpupart_gpu_tpcs' "$out/metrics-2.txt" |
    sed -E 's/gpu="0",UUID="[^"]*",pci_bus_id="[^"]*",device="nvidia0",modelName="[^"]*",Hostname="[^"]*",hostname="[^"]*",?/.../'
grep -c '^gpupart_' "$out/metrics-2.txt" | sed 's/^/series: /'
cat "$out/torch-a.txt" "$out/torch-b.txt"
