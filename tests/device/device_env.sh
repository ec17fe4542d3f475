# shellcheck shell=bash disable=SC2034  # bin, out and gp are for the sourcing script
# The environment of a run on the GPU machine, sourced by run_device_tests.sh and tests/bench/run_bench.sh:
#   . "$(dirname "$0")/../device/device_env.sh" CARRY_DIR OUT_DIR REGISTRY_NAME
# Sets bin (the carry, absolute), out (created) and gp (the gpupart CLI); exports LD_LIBRARY_PATH (the
# carry first: libfmt travels there), GPUPART_SHIM and GPUPART_REGISTRY_DIR=/dev/shm/REGISTRY_NAME,
# which it empties. Defines descriptor_bits, sms_of, wait_for_line and launches_on for the sourcing script.
bin=$(cd "$1" && pwd)
out=$2
mkdir -p "$out"
export LD_LIBRARY_PATH="$bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export GPUPART_SHIM="$bin/libgpupart-shim.so"
export GPUPART_REGISTRY_DIR=/dev/shm/$3
gp="$bin/gpupart"
rm -rf "$GPUPART_REGISTRY_DIR"
# descriptor_bits EXPR [OPTION...]: the launch-descriptor bits of a mask expression as hex without "bits:",
# what GPUPART_TPCS and a registry slot hold (the shim's side), not the TPC numbers a person types.
descriptor_bits() { "$gp" mask parse "$@" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["descriptor_bits"].removeprefix("bits:"))'; }
# sms_of EXPR: the SM ids of a mask expression, numbered by the sourcing script's snapshot options in the
# array `snap` when it has one (else the live topology).
# shellcheck disable=SC2154  # snap is the sourcing script's, when it has one
sms_of() { "$gp" mask parse "$1" ${snap[@]+"${snap[@]}"} --json | python3 -c 'import json,sys; print(" ".join(map(str,json.load(sys.stdin)["sms"])))'; }
# wait_for_line FILE TEXT: 0 once FILE holds TEXT, 1 after 15 s.
wait_for_line() { for _ in $(seq 1 300); do grep -q "$2" "$1" 2> /dev/null && return 0; sleep 0.05; done; return 1; }
# launches_on FILE FIRST LAST "SMS": gpupart-dev-smid's launches FIRST..LAST in FILE ran on exactly those SMs
# (and all of them were there). Every smid run launches 4224 blocks (32 per SM of the whole GPU), several waves
# on any partition, so every allowed SM gets blocks: with one wave's worth the scheduler may leave one idle.
launches_on() {
    python3 - "$@" << 'PY'
import sys
path, first, last, allowed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), set(map(int, sys.argv[4].split()))
ok, seen = True, 0
for line in open(path):
    if not line.startswith("launch "): continue
    i = int(line.split()[1]); sms = set(map(int, line.split(":")[1].split()))
    if first <= i <= last:
        seen += 1
        if sms != allowed: ok = False; print(f"  launch {i}: {sorted(sms)} != expected {sorted(allowed)}")
sys.exit(0 if ok and seen == last - first + 1 else 1)
PY
}
