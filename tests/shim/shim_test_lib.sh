# What the shim's end-to-end scripts share (shim_end_to_end.sh, multi_gpu_end_to_end.sh): a private
# registry and journal under $work, cleanup of everything they start, and helpers for slots, processes
# and the descriptors the test double fills. Sourced with the scripts' arguments:
#   . shim_test_lib.sh GPUPART SHIM_SO FAKE_DRIVER_DIR SHIM_HOST WORK_DIR
gpupart=$1
shim=$2
fake=$3/libcuda.so.1
host=$4
work=$5
rm -rf "$work" && mkdir -p "$work"
registry=$work/registry
export GPUPART_REGISTRY_DIR=$registry  # a private registry: never the machine's
export GPUPART_JOURNAL=$work/history.jsonl  # a private history: never the user's
export GPUPART_SHIM=$shim              # `gpupart run` preloads exactly the shim under test
unset LD_PRELOAD GPUPART_TPCS GPUPART_REAL_TPCS CUDA_VISIBLE_DEVICES FAKE_CUDA_GPUS
G0=GPU-00000000-0000-0000-0000-000000000001  # the test double's one GPU: the built-in H200 as the registry names it
# Under the asan preset the shim carries the sanitizer runtime and is preloaded ahead of it.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
# shellcheck source-path=SCRIPTDIR source=../lib/checks.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/checks.sh"  # check, contains, matches, lines, checks_summary

end_jobs_on_exit

line_is() {  # line_is FILE N TEXT
    local actual
    actual=$(sed -n "${2}p" "$1")
    [ "$actual" = "$3" ] && return 0
    echo "  line $2 of $1: expected '$3', got '$actual'" >&2
    return 1
}
slot_of() { compgen -G "$registry/u*/$1-*.slot"; }  # the slot file(s) of pid $1
has_slot() { slot_of "$1" > /dev/null; }
no_slot() { ! has_slot "$1"; }
present() { [ -n "$1" ] && [ -e "$1" ]; }
absent() { [ -n "$1" ] && [ ! -e "$1" ]; }
no_slot_files() { [ -z "$(find "$registry" -name '*.slot*' 2> /dev/null)" ]; }
running() {  # running PID: exists and is not a zombie
    local stat
    read -r stat 2> /dev/null < "/proc/$1/stat" || return 1
    stat=${stat##*) }
    [ "${stat%% *}" != Z ]
}
await() {  # await FILE PID: FILE appears (within 10 s) while PID runs
    local i
    for ((i = 0; i < 1000; ++i)); do
        [ -e "$1" ] && return 0
        running "$2" || break
        sleep 0.01
    done
    [ -e "$1" ] && return 0
    echo "  $1 did not appear; $2 is $(running "$2" && echo running || echo gone)" >&2
    return 1
}
start() {  # start NAME CMD...: CMD in the background, output in $work/NAME.out/.err, pid in $started
    local name=$1
    shift
    "$@" > "$work/$name.out" 2> "$work/$name.err" &
    started=$!
}

# The descriptor as the test double fills it (0x5a: bit 31 of word0 clear), and what the shim writes.
F=0x5a5a5a5a
untouched() { echo "launch version=$1 callback=1 word0=$F mask=$F,$F,$F,$F low=$F,$F"; }
v04_mask() { echo "launch version=0x40 callback=1 word0=0xda5a5a5a mask=$1,0xffffffff,0xffffffff,0xffffffff low=$F,$F"; }

# stream_verdict: what `gpupart run` would pass in GPUPART_STREAM_MASK for the test double's GPU had the probe
# verified the driver's stream mask (docs/launch-path.md): offset 0x51c on driver 580.159.04 and the built-in
# H200's TPC numbering (TPC k drives SMs 2k, 2k+1) as descriptor bits. Also names that driver as the running
# one (GPUPART_DRIVER_VERSION_FILE: the test double has no /proc/driver/nvidia/version).
stream_verdict() {
    printf 'NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build\n' > "$work/driver-version"
    export GPUPART_DRIVER_VERSION_FILE=$work/driver-version
    local map
    map=$("$gpupart" topology --snapshot builtin:h200 --json | python3 -c '
import json, sys
bits = {tpc["sms"][0] // 2: tpc["mask_bit"] for tpc in json.load(sys.stdin)["gpu"]["tpcs"]}
print("".join("%02x" % bits.get(k, 255) for k in range(128)))')
    verdict="$G0=0x51c,580.159.04,0x40,$map"
}
