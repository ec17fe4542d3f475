#!/usr/bin/env bash
# Four threads launch on one stream of the test double while `gpupart set` moves the process back and forth
# between TPCs 0-15 and 32-63: the two masks differ in two of the field's words, so a launch that read a
# half-rewritten field would run on both halves or on none. Every launch must run on exactly one of them
# (stream_path_stress.c), and both must be seen (the changes reached the stream).
#   stream_path_stress.sh GPUPART SHIM_SO FAKE_DRIVER_DIR STRESS_PROGRAM WORK_DIR
set -u
# shellcheck source-path=SCRIPTDIR source=shim_test_lib.sh
. "$(dirname "$0")/shim_test_lib.sh" "$@"
fake_dir=$(dirname "$fake")
stream_verdict  # $verdict, and this driver as the running one

start stress "$gpupart" run --tpcs 0-15 --snapshot builtin:h200 -- env LD_LIBRARY_PATH="$fake_dir" \
    GPUPART_STREAM_MASK="$verdict" "$host" 4 300000 32 64 "$work/ready"
runner=$started
check "the stress program starts" await "$work/ready" "$runner"
pid=$(pgrep -f -n "$(basename "$host") 4 300000")
sets=0
while running "$runner" && [ "$sets" -lt 400 ]; do
    if [ $((sets % 2)) -eq 0 ]; then tpcs=32-63; else tpcs=0-15; fi
    "$gpupart" set "$pid" "$tpcs" --snapshot builtin:h200 > /dev/null 2>&1 || break
    sets=$((sets + 1))
done
wait "$runner"; rc=$?
cat "$work/stress.out"
check "every launch ran on one whole mask, none on a mix or on nothing" [ "$rc" -eq 0 ]
check "the changes reached the stream: launches on both masks" \
    python3 -c 'import sys; f = open(sys.argv[1]).read().split(); d = dict(zip(f[::2], map(int, f[1::2]))); sys.exit(0 if d["a"] > 0 and d["b"] > 0 else 1)' "$work/stress.out"
echo "sets during the launches: $sets"
check "several changes happened during the launches ($sets)" [ "$sets" -ge 4 ]
checks_summary stream_path_stress
