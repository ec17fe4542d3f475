#!/usr/bin/env bash
# On a real H100 or H200: gpupart's TPC numbers are the driver's (TPC k = SMs 2k and 2k+1, as %smid counts).
# For TPCs 0, 1, 32, 33, 64, 65 and every GPC: `gpupart mask parse` says which SMs the mask holds, and an
# unmodified CUDA program started with `gpupart run --tpcs` on it runs on exactly those SMs (no MPS, so
# %smid is the GPU's own). Exits non-zero on a failed verdict. Usage: tpc_numbers_device.sh CARRY_DIR OUT_DIR
set -u
# shellcheck source-path=SCRIPTDIR source=device_env.sh
. "$(dirname "$0")/device_env.sh" "$1" "$2" gpupart-tpcnum  # bin, out, gp, GPUPART_*
# shellcheck source-path=SCRIPTDIR source=../lib/checks.sh
. "$(dirname "$0")/../lib/checks.sh"
checks_verbose=1
live=$out/live.json
cleanup() { rm -rf "$GPUPART_REGISTRY_DIR"; }
trap cleanup EXIT
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee "$out/gpu.txt"
mkdir -p "$out/probe-cache"
XDG_CACHE_HOME="$out/probe-cache" "$gp" probe > "$out/probe.txt" 2>&1 || { echo "gpupart probe failed:"; cat "$out/probe.txt"; exit 1; }
XDG_CACHE_HOME="$out/probe-cache" "$gp" export --json "$live" > /dev/null || exit 1
snap=(--snapshot "$live")
"$gp" topology --sources "${snap[@]}" > "$out/sources.txt"
parsed_sms() { "$gp" mask parse "$1" "${snap[@]}" --json | python3 -c 'import json,sys; print(" ".join(map(str,json.load(sys.stdin)["sms"])))'; }
ran_on() {  # the distinct SMs of all launches of a gpupart-dev-smid output
    python3 -c 'import sys
s=set()
for line in open(sys.argv[1]):
    if line.startswith("launch "): s |= set(map(int, line.split(":")[1].split()))
print(" ".join(map(str, sorted(s))))' "$1"
}
for expression in 0 1 32 33 64 65 gpc0 gpc3 gpc7 "0,33,65"; do
    name=${expression//,/_}
    want=$(parsed_sms "$expression")
    "$gp" mask parse "$expression" "${snap[@]}" --json > "$out/parse-$name.json"
    "$gp" run --tpcs "$expression" "${snap[@]}" -- "$bin/gpupart-dev-smid" --blocks 4224 --launches 2 > "$out/run-$name.txt" 2>&1
    got=$(ran_on "$out/run-$name.txt")
    echo "$expression: mask parse says SMs [$want]; the kernel ran on [$got]" | tee -a "$out/verdicts.txt"
    check "TPCs $expression: the kernel ran on the SMs mask parse names" [ -n "$got" ] && [ "$got" = "$want" ]
    case $expression in
        [0-9]|[0-9][0-9]) check "TPC $expression is SMs $((2 * expression)) and $((2 * expression + 1))" [ "$want" = "$((2 * expression)) $((2 * expression + 1))" ] ;;
    esac
done
checks_summary tpc_numbers_device | tee -a "$out/verdicts.txt"
