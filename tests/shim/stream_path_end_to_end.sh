#!/usr/bin/env bash
# The stream path end to end, on the test double of the driver (docs/launch-path.md): with the probe's verdict
# in GPUPART_STREAM_MASK, the preloaded shim confines kernels through each stream's own mask and subscribes no
# launch callback; a live `gpupart set` reaches the next launch on every stream; the first launch it cannot
# confine that way (a default stream) subscribes the callback, which then confines it too; without a verdict
# for the running driver, a usable value or with GPUPART_LAUNCH_PATH=callback it stays on the callback.
# The program resolves the driver with dlopen/dlsym, as the CUDA runtime does (smctrl_host.c).
#   stream_path_end_to_end.sh GPUPART SHIM_SO FAKE_DRIVER_DIR SMCTRL_HOST WORK_DIR
set -u
# shellcheck source-path=SCRIPTDIR source=shim_test_lib.sh
. "$(dirname "$0")/shim_test_lib.sh" "$@"
fake_dir=$(dirname "$fake")

stream_verdict  # $verdict, and this driver as the running one

launch_path() {  # launch_path PID: what `gpupart list` says of it
    "$gpupart" list --json | python3 -c '
import json, sys
for p in json.load(sys.stdin)["processes"]:
    if p["pid"] == int(sys.argv[1]): print(p["shim"]["launch_path"])' "$1"
}
run_host() {  # run_host NAME TPCS VERDICT STEP...: smctrl_host under `gpupart run`, with VERDICT as the stream mask
    local name=$1 tpcs=$2 value=$3
    shift 3
    start "$name" "$gpupart" run --tpcs "$tpcs" --snapshot builtin:h200 -- \
        env LD_LIBRARY_PATH="$fake_dir" GPUPART_STREAM_MASK="$value" "$host" "$@"
}

# ---- 1. Streams confined by their own mask, no callback; a live change; then a default stream ----------
# smctrl_host says "(no callback)" for a launch whose descriptor no launch callback saw.
run_host streams 0-15 "$verdict" pid newstream:0 newstream:1 launch:0 launchex:1 ready:"$work/s.1" wait:"$work/s.go" \
    launch:0 launchex:1 ready:"$work/s.2" wait:"$work/s.go2" launch:null launch:0 destroy:0 newstream:2 launch:2
pid=$started
out=$work/streams.out
check "streams: reaches its first pause" await "$work/s.1" "$pid"
check "streams: cuLaunchKernel on a stream it made runs on TPCs 0-15" line_is "$out" 4 "launch 0 (no callback) allowed=0-15"
check "streams: cuLaunchKernelEx too" line_is "$out" 5 "launchex 1 (no callback) allowed=0-15"
check "streams: list says the stream path, no callback" [ "$(launch_path "$pid")" = "streams" ]
"$gpupart" set "$pid" 32-47 --snapshot builtin:h200 > "$work/set.out" 2> "$work/set.err"
check "streams: set exits 0" [ $? -eq 0 ]
touch "$work/s.go"
check "streams: reaches its second pause" await "$work/s.2" "$pid"
check "streams: the next launch on each stream runs on the new TPCs" line_is "$out" 8 "launch 0 (no callback) allowed=32-47"
check "streams: ... on both" line_is "$out" 9 "launchex 1 (no callback) allowed=32-47"
check "streams: still no callback" [ "$(launch_path "$pid")" = "streams" ]
touch "$work/s.go2"
wait "$pid"; rc=$?
check "streams: exits 0" [ "$rc" -eq 0 ]
check "streams: a default-stream launch is confined (the callback came first)" line_is "$out" 12 "launch null allowed=32-47"
check "streams: a stream launch after it too, now with the callback as well" line_is "$out" 13 "launch 0 allowed=32-47"
check "streams: a stream made at a destroyed one's address starts confined" line_is "$out" 16 "launch 2 allowed=32-47"
check "streams: the shim said nothing" bash -c "! grep -q gpupart-shim '$work/streams.err'"

# ---- 2. The callback from the start ------------------------------------------------------------------
callback_from_start() {  # callback_from_start NAME WHY VERDICT [ENV...]
    local name=$1 why=$2 value=$3
    shift 3
    start "$name" env "$@" "$gpupart" run --tpcs 0-15 --snapshot builtin:h200 -- \
        env LD_LIBRARY_PATH="$fake_dir" GPUPART_STREAM_MASK="$value" "$host" pid newstream:0 launch:0 launch:null \
        ready:"$work/$name.1" wait:"$work/$name.go"
    local p=$started
    check "$why: reaches its pause" await "$work/$name.1" "$p"
    check "$why: the stream's kernel is confined" line_is "$work/$name.out" 3 "launch 0 allowed=0-15"
    check "$why: so is the default stream's" line_is "$work/$name.out" 4 "launch null allowed=0-15"
    check "$why: list says the callback" [ "$(launch_path "$p")" = "callback" ]
    touch "$work/$name.go"
    wait "$p"
}
echo 'NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.05  Release Build' > "$work/other-driver"
callback_from_start other "another driver than the verified one" "$verdict" GPUPART_DRIVER_VERSION_FILE="$work/other-driver"
callback_from_start chosen "GPUPART_LAUNCH_PATH=callback" "$verdict" GPUPART_LAUNCH_PATH=callback
callback_from_start malformed "a malformed verdict" "$G0=0x51c,580.159.04,0x40,00ff"
check "a malformed verdict: said on stderr in one line" [ "$(grep -c 'GPUPART_STREAM_MASK is malformed' "$work/malformed.err")" -eq 1 ]
callback_from_start none "no verdict" ""
# The driver-version file is read without blocking: a FIFO there (nobody writes it) is no driver version.
mkfifo "$work/fifo-driver"
callback_from_start fifo "a FIFO for the driver version" "$verdict" GPUPART_DRIVER_VERSION_FILE="$work/fifo-driver"

checks_summary stream_path_end_to_end
