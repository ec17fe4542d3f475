#!/usr/bin/env bash
# libsmctrl's test suite as this project's own test (libsmctrl_style.c) against the TEST DOUBLE driver, which
# models the H200: the mask tests at TPCs 0, 32 and 64 and the GPC info test, in libsmctrl's numbering,
# through libgpupart.so and the GPC map gpupart writes for the recorded H200 (tests/fixtures/live-h200).
#   libsmctrl_style.sh GPUPART LIBSMCTRL_STYLE WORK_DIR
set -u
gpupart=$1
style=$2
work=$3
rm -rf "$work" && mkdir -p "$work"
export GPUPART_REGISTRY_DIR=$work/registry GPUPART_JOURNAL=$work/history.jsonl
unset LD_PRELOAD GPUPART_TPCS GPUPART_REAL_TPCS CUDA_VISIBLE_DEVICES
export FAKE_CUDA_GPUS=GPU-258f535b-999d-058c-3642-767b7fb8d4f0  # the recorded H200, whose map gpupart can write
fixture=$(cd "$(dirname "$0")/../fixtures/live-h200" && pwd)/live-h200.json
if ! "$gpupart" gpcs --snapshot "$fixture" --write > "$work/gpcs.out" 2>&1; then
    echo "libsmctrl_style: gpupart gpcs --write failed:" >&2
    cat "$work/gpcs.out" >&2
    exit 1
fi
"$style" > "$work/style.out" 2> "$work/style.err"; rc=$?
cat "$work/style.out"
cat "$work/style.err" >&2
[ "$rc" -eq 0 ] || { echo "libsmctrl_style: FAILED (exit $rc)" >&2; exit 1; }
grep -qx 'All tests passed!' "$work/style.out" || { echo "libsmctrl_style: no verdict" >&2; exit 1; }
[ ! -s "$work/style.err" ] || { echo "libsmctrl_style: the library wrote to stderr" >&2; exit 1; }
rm -rf "$work"
