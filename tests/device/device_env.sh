# shellcheck shell=bash disable=SC2034  # bin, out and gp are for the sourcing script
# The environment of a run on the GPU machine, sourced by run_device_tests.sh and tests/bench/run_bench.sh:
#   . "$(dirname "$0")/../device/device_env.sh" CARRY_DIR OUT_DIR REGISTRY_NAME
# Sets bin (the carry, absolute), out (created) and gp (the gpupart CLI); exports LD_LIBRARY_PATH (the
# carry first: libfmt travels there), GPUPART_SHIM and GPUPART_REGISTRY_DIR=/dev/shm/REGISTRY_NAME,
# which it empties.
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
