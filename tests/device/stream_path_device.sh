#!/usr/bin/env bash
# The stream path on a real GPU (docs/launch-path.md): after `gpupart probe` verified the driver's per-stream
# TPC mask, `gpupart run` hands the verdict to the shim, which confines kernels on the program's own streams
# through their masks with no launch callback, follows `gpupart set` from the next launch, and subscribes the
# callback for what it cannot confine that way (default streams, graphs). Every check reads %smid.
# Usage (after tests/device/stage.sh): stream_path_device.sh CARRY_DIR OUT_DIR. Exits 1 on a failed check.
set -u
# shellcheck source-path=SCRIPTDIR source=device_env.sh
. "$(dirname "$0")/device_env.sh" "$1" "$2" gpupart-streampath  # bin, out, gp, GPUPART_*
# shellcheck source-path=SCRIPTDIR source=../lib/checks.sh
. "$(dirname "$0")/../lib/checks.sh"  # check, checks_summary
checks_verbose=1
export XDG_CACHE_HOME=$out/cache GPUPART_JOURNAL=$out/history.jsonl
started=()
cleanup() { for pid in "${started[@]}"; do kill -9 "$pid" 2> /dev/null; done; rm -rf "$GPUPART_REGISTRY_DIR"; }
trap cleanup EXIT
launch_path() { "$gp" list --json | python3 -c '
import json, sys
for p in json.load(sys.stdin)["processes"]:
    if p["pid"] == int(sys.argv[1]): print(p["shim"]["launch_path"])' "$1"; }

nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee "$out/gpu.txt"
"$gp" probe > "$out/probe.txt" 2>&1
grep "stream mask" "$out/probe.txt"
check "gpupart probe verifies the driver's stream mask" grep -q "^stream mask: verified at offset 0x" "$out/probe.txt"
gpc1=$(sms_of gpc1)
gpc6=$(sms_of gpc6)

echo "== 1. gpupart run hands the verdict on"
"$gp" run --tpcs gpc1 -- env > "$out/env.txt"
check "GPUPART_STREAM_MASK is set for the command" grep -q "^GPUPART_STREAM_MASK=GPU-" "$out/env.txt"
GPUPART_LAUNCH_PATH=callback "$gp" run --tpcs gpc1 -- env > "$out/env-callback.txt"
check "GPUPART_LAUNCH_PATH=callback reaches the command" grep -q "^GPUPART_LAUNCH_PATH=callback" "$out/env-callback.txt"

echo "== 2. a program's own stream: confined with no callback, moved by gpupart set at its next launch"
for path in streams callback; do
    resume=$out/resume-$path
    env_path=()
    [ "$path" = callback ] && env_path=(GPUPART_LAUNCH_PATH=callback)
    env "${env_path[@]}" "$gp" run --tpcs gpc1 -- "$bin/gpupart-dev-smid" --blocks 4224 --launches 6 --pause-after 3 \
        --resume-file "$resume" > "$out/set-$path.txt" 2>&1 &
    started+=($!)
    wait_for_line "$out/set-$path.txt" PAUSED
    pid=$(awk '/^pid /{print $2}' "$out/set-$path.txt")
    check "$path: list says the launch path" [ "$(launch_path "$pid")" = "$path" ]
    "$gp" set "$pid" gpc6 > "$out/set-output-$path.txt" 2>&1
    check "$path: set exits 0" [ $? -eq 0 ]
    check "$path: still that launch path after the set" [ "$(launch_path "$pid")" = "$path" ]
    touch "$resume"
    wait "${started[-1]}"
    check "$path: launches before the set ran on gpc1's SMs" launches_on "$out/set-$path.txt" 0 2 "$gpc1"
    check "$path: launches after the set ran on gpc6's SMs" launches_on "$out/set-$path.txt" 3 5 "$gpc6"
done

echo "== 3. a graph captured on the program's stream: the callback comes first, the graph follows a set"
"$gp" run --tpcs gpc1 -- "$bin/gpupart-dev-smid" --graph --blocks 4224 --launches 6 --pause-after 3 \
    --resume-file "$out/resume-graph" > "$out/graph.txt" 2>&1 &
started+=($!)
wait_for_line "$out/graph.txt" PAUSED
pid=$(awk '/^pid /{print $2}' "$out/graph.txt")
check "graph: the capture subscribed the callback" [ "$(launch_path "$pid")" = "streams+callback" ]
"$gp" set "$pid" gpc6 > /dev/null 2>&1
touch "$out/resume-graph"
wait "${started[-1]}"
check "graph: replays before the set on gpc1" launches_on "$out/graph.txt" 0 2 "$gpc1"
check "graph: replays after the set on gpc6" launches_on "$out/graph.txt" 3 5 "$gpc6"

echo "== 4. created streams and the legacy default stream in one program"
"$gp" run --tpcs gpc1 -- "$bin/gpupart-dev-stream-smid" > "$out/stream-smid.txt" 2>&1
cat "$out/stream-smid.txt"
count=$(echo "$gpc1" | wc -w)
lowest=$(echo "$gpc1" | tr ' ' '\n' | sort -n | head -1)
highest=$(echo "$gpc1" | tr ' ' '\n' | sort -n | tail -1)
check "every stream's kernel ran on gpc1's SMs" \
    bash -c "[ \$(grep -c ' sms $count min $lowest max $highest\$' '$out/stream-smid.txt') -eq \$(grep -c ' sms ' '$out/stream-smid.txt') ]"
check "... and there were several" [ "$(grep -c ' sms ' "$out/stream-smid.txt")" -ge 3 ]

checks_summary stream_path_device
