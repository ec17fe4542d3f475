#!/usr/bin/env bash
# Device tests for the probe and the NVML, libudev, nvdebug and MMIO sources, on a real H100/H200 (run
# through the `device` tool after tests/device/stage.sh; CI cannot run them). Usage:
#   probe_tests.sh CARRY_DIR OUT_DIR
# Writes the probe's raw report (probe-report.txt: a fixture for CI) and the probe --json under OUT_DIR.
# PROBE_ONLY=1: sections 1 and 2 only (the probe, its comparison with the H200 recording, its wall time).
# Every process it starts is ended, MPS included, also on failure.
set -u
# shellcheck source-path=SCRIPTDIR source=device_env.sh
. "$(dirname "$0")/device_env.sh" "$1" "$2" gpupart-probetest  # bin, out, gp, GPUPART_*
# shellcheck source-path=SCRIPTDIR source=../lib/checks.sh
. "$(dirname "$0")/../lib/checks.sh"  # check, contains, checks_summary
checks_verbose=1
export GPUPART_PROBE="$bin/gpupart-probe" XDG_CACHE_HOME=$out/cache
export CUDA_MPS_PIPE_DIRECTORY=/tmp/gpupart-probetest-mps CUDA_MPS_LOG_DIRECTORY=/tmp/gpupart-probetest-mps-log
started=()
cleanup() {
    for pid in "${started[@]}"; do kill -9 "$pid" 2>/dev/null; done
    "$gp" mps stop > /dev/null 2>&1
    rm -rf "$GPUPART_REGISTRY_DIR" /tmp/gpupart-probetest-shared
}
trap cleanup EXIT
wait_for_line() { for _ in $(seq 1 300); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done; return 1; }
as_nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
nvidia-smi --query-gpu=name,uuid,driver_version,pci.bus_id --format=csv,noheader | tee "$out/gpu.txt"
gpu_name=$(cut -d, -f1 "$out/gpu.txt" | head -1)

echo "== 1. the probe: every mask bit of GPU 0, joined with the RM SM order"
start=$(date +%s%N)
"$gp" probe --json > "$out/probe.json" 2> "$out/probe.err"; rc=$?
echo "gpupart probe --json: exit $rc, $(( ($(date +%s%N) - start) / 1000000 )) ms wall"
cat "$out/probe.err"
check "probe exits 0" [ "$rc" -eq 0 ]
cp "$out"/cache/gpupart/probe-*.txt "$out/probe-report.txt" 2>/dev/null
python3 - "$out/probe.json" <<'PY' | tee "$out/probe-summary.txt"
import json, sys
p = json.load(open(sys.argv[1]))
print("gpu", p["gpu"]["name"], p["gpu"]["uuid"], "sms", p["gpu"]["sm_count"], "descriptor", p["descriptor_version"])
print("tpcs", p["tpc_count"], "holes", p["holes"])
print("launches", p["launches"], "probe_ms", round(p["probe_ms"], 1), "wall_ms", round(p["wall_ms"], 1))
j = p["sm_order_join"]
print("join", "agrees" if j.get("agrees") else "does not agree", j.get("conflicts", j.get("unknown")))
for gpc, bits in j.get("bits_by_logical_gpc", {}).items(): print("  logical gpc", gpc, "bits", bits)
PY
check "probe: SMs / 2 TPCs, no SM lost" grep -qE '^tpcs ([0-9]+) ' "$out/probe-summary.txt"
check "probe map agrees with the RM SM order on every SM's TPC and GPC" grep -q "^join agrees" "$out/probe-summary.txt"
"$gp" probe > "$out/probe.txt" 2>&1
head -4 "$out/probe.txt"; sed -n '/joined with/,$p' "$out/probe.txt"

if [[ "$gpu_name" == *H200* ]]; then
    echo "== 1b. on the H200: the probe's bit->SM map equals the built-in recording"
    "$gp" export --json "$out/builtin-h200.json" --snapshot builtin:h200
    python3 - "$out/probe.json" "$out/builtin-h200.json" <<'PY' | tee "$out/h200-compare.txt"
import json, sys
probe = {t["bit"]: t["sms"] for t in json.load(open(sys.argv[1]))["tpcs"]}
builtin = {t["mask_bit"]: t["sms"] for t in json.load(open(sys.argv[2]))["gpus"][0]["tpcs"]}
diff = [b for b in sorted(set(probe) | set(builtin)) if probe.get(b) != builtin.get(b)]
print("bits compared", len(set(probe) | set(builtin)), "differing", diff)
PY
    check "H200 probe equals the built-in recording" grep -q "differing \[\]" "$out/h200-compare.txt"
fi

echo "== 2. probe wall time (Google Benchmark, 3 runs)"
LD_LIBRARY_PATH="$bin" "$bin/bench_probe" --benchmark_repetitions=3 --benchmark_report_aggregates_only=false 2>&1 | tee "$out/bench_probe.txt" | grep -E "BM_|Load|Run on"

if [ "${PROBE_ONLY:-0}" = 1 ]; then checks_summary "probe device tests"; exit; fi

echo "== 3. the probe as a normal user (uid 65534)"
mkdir -p /tmp/gpupart-probetest-shared && chmod 777 /tmp/gpupart-probetest-shared
"${as_nobody[@]}" env LD_LIBRARY_PATH="$LD_LIBRARY_PATH" GPUPART_SHIM="$GPUPART_SHIM" GPUPART_PROBE="$GPUPART_PROBE" \
    XDG_CACHE_HOME=/tmp/gpupart-probetest-shared "$gp" probe > "$out/probe-nobody.txt" 2>&1; rc=$?
head -3 "$out/probe-nobody.txt"; grep -E "joined|not joined" "$out/probe-nobody.txt"
check "probe as uid 65534 exits 0" [ "$rc" -eq 0 ]

echo "== 4. NVML lists a running CUDA process (its pid and memory)"
resume=/tmp/gpupart-probetest-shared/resume; rm -f "$resume"
"$bin/gpupart-dev-smid" --blocks 264 --launches 2 --pause-after 1 --resume-file "$resume" > "$out/smid.txt" 2>&1 &
started+=($!)
wait_for_line "$out/smid.txt" PAUSED
pid=$(awk '/^pid /{print $2}' "$out/smid.txt")
"$gp" source nvml > "$out/nvml.txt" 2>&1; cat "$out/nvml.txt"
"$gp" source nvml --json > "$out/nvml.json"
check "NVML ok" grep -q "^nvml ok" "$out/nvml.txt"
check "NVML lists the running CUDA process $pid" grep -qE "^ +$pid +[^ ]*gpupart-dev-smid [0-9]+ MiB" "$out/nvml.txt"  # NVML names it by path
touch "$resume"; wait "${started[-1]}"

echo "== 5. NVML attributes MPS clients to the server; gpupart shows the clients"
"$gp" mps start > /dev/null
rm -f "$resume"
CUDA_DEVICE_MAX_CONNECTIONS=8 "$bin/gpupart-dev-smid" --blocks 264 --launches 2 --pause-after 1 --resume-file "$resume" > "$out/smid-mps.txt" 2>&1 &
started+=($!)
wait_for_line "$out/smid-mps.txt" PAUSED
client=$(awk '/^pid /{print $2}' "$out/smid-mps.txt")
"$gp" source nvml > "$out/nvml-mps.txt" 2>&1; cat "$out/nvml-mps.txt"
check "MPS server listed with client $client" grep -qE "MPS server, clients .*\b$client\b" "$out/nvml-mps.txt"
echo "-- the probe while MPS runs (the probe uses no MPS: %smid must be physical)"
"$gp" probe > "$out/probe-during-mps.txt" 2>&1; rc=$?
head -2 "$out/probe-during-mps.txt"
check "probe works while an MPS server runs" [ "$rc" -eq 0 ]
touch "$resume"; wait "${started[-1]}"
"$gp" mps stop > /dev/null

echo "== 6. libudev, nvdebug, MMIO"
"$gp" source udev | tee "$out/udev.txt"
check "udev lists the GPU with /dev/nvidia0" grep -q "/dev/nvidia" "$out/udev.txt"
"$gp" source nvdebug | tee "$out/nvdebug.txt"
check "nvdebug absent in one line" grep -q "^nvdebug absent: no /proc/gpu0: the nvdebug module is not loaded" "$out/nvdebug.txt"
"$gp" source mmio | tee "$out/mmio-root.txt"
"${as_nobody[@]}" env LD_LIBRARY_PATH="$LD_LIBRARY_PATH" "$gp" source mmio | tee "$out/mmio-nobody.txt"
check "MMIO as root: mapping refused, in one line" grep -q "^mmio refused: mmap of /sys/bus/pci/devices/.*/resource0 refused" "$out/mmio-root.txt"
check "MMIO as a user: needs root" grep -q "^mmio needs root" "$out/mmio-nobody.txt"

checks_summary "probe and source device tests"
