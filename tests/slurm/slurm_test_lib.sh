# shellcheck shell=bash disable=SC2034  # shim, fake, host: for the sourcing test
# What the Slurm end-to-end tests (slurm_end_to_end.sh, slurm_multi_gpu.sh) share, sourced with the test's
# arguments: . slurm_test_lib.sh GPUPART SPANK_SO SHIM_SO FAKE_DRIVER_DIR SHIM_HOST WORK_DIR
# Sets gpupart, spank, shim, fake (the test double libcuda.so.1), host and work (emptied, with jobs/ in it);
# sources tests/lib/checks.sh and slurm_cluster.sh; a private registry and journal under $work; the cluster
# stopped on exit; helpers for jobs and `gpupart list --json`.
set -u
gpupart=$1 spank=$2 shim=$3 fake=$4/libcuda.so.1 host=$5 work=$6
rm -rf "$work" && mkdir -p "$work"/jobs
chmod 0755 "$work"
# shellcheck source-path=SCRIPTDIR source=../lib/checks.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/checks.sh"
# shellcheck source-path=SCRIPTDIR source=slurm_cluster.sh
. "$(dirname "${BASH_SOURCE[0]}")/slurm_cluster.sh"
unset LD_PRELOAD GPUPART_TPCS GPUPART_REAL_TPCS GPUPART_JOB CUDA_VISIBLE_DEVICES FAKE_CUDA_GPUS CUDA_MPS_PIPE_DIRECTORY
export GPUPART_REGISTRY_DIR=$work/registry GPUPART_JOURNAL=$work/history.jsonl
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0  # jobs preload the shim (asan preset)
mkdir -m 1777 "$GPUPART_REGISTRY_DIR"
trap 'cluster_stop; end_background_jobs' EXIT
trap 'exit 1' INT TERM

json() {  # json FILE EXPRESSION: EXPRESSION of the document `d`, printed
    python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}
job_state() { squeue -h -j "$1" -o %T 2> /dev/null; }
is_state() { [ "$(job_state "$1")" = "$2" ]; }
job_gone() { [ -z "$(job_state "$1")" ]; }
started() { await_condition 30 test -e "$work/jobs/$1.ready"; }  # the job's task reached its ready: step
list_json() { "$gpupart" list --json > "$work/$1.json" 2> "$work/$1.err"; }
count_of() { python3 -c 'import sys; print(bin(int(sys.argv[1], 16)).count("1"))' "$1"; }
disjoint() { python3 -c 'import sys; sys.exit(0 if int(sys.argv[1], 16) & int(sys.argv[2], 16) == 0 else 1)' "$1" "$2"; }
# The launch-descriptor bits (hex) of the TPC numbers MASK (hex, as `list --json` gives requested.mask) on the GPU
# of snapshot SNAPSHOT ([GPU]), through `gpupart mask parse`: the shim writes bits, gpupart speaks numbers.
descriptor_bits_of() {  # descriptor_bits_of MASK SNAPSHOT [GPU]
    "$gpupart" mask parse "$1" --snapshot "$2" ${3:+--gpu "$3"} --json |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["descriptor_bits"].removeprefix("bits:"))'
}
# The descriptor words of a launch on allowed-TPC mask MASK (their complement, the disable bits), as the
# stand-in program prints them: "0x........,0x........,0x........,0x........".
disable_words() {
    python3 -c '
import sys
m = ~int(sys.argv[1], 16) & (1 << 128) - 1
print(",".join("0x%08x" % ((m >> (32 * i)) & 0xffffffff) for i in range(4)))' "$1"
}

# Starts the cluster with the gres.conf and Gres= lines of `gpupart slurm conf` (in FILE) and the plugin
# with ARGS (after its path).
cluster_from_conf() {  # cluster_from_conf FILE NODE ARGS
    local gres_conf node_gres
    gres_conf=$(grep '^NodeName=.* Name=tpc ' "$1" | sed 's/  #.*//')
    node_gres=$(sed -n 's/^NodeName=.* Gres=\([^ ]*\).*/\1/p' "$1")
    cluster_start "$work/cluster" "$2" "$gres_conf" "$node_gres" "required $spank $3"
}
