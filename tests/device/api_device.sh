#!/usr/bin/env bash
# libgpupart's libsmctrl API and the SMLP on a real GPU, through the `device` tool after tests/device/stage.sh.
# Steps (each writes into OUT_DIR; summary.txt has the verdicts):
#  1. `gpupart gpcs --write`: the GPU's GPC map, which the API translates TPC numbers with.
#  2. gpupart-dev-smctrl (without MPS): global / stream / next / _ext masks and libsmctrl's test suite (each
#     mask type with TPC 0, 32 and 64 alone, the GPC info test), judged against %smid in libsmctrl's
#     numbering (TPC k = SMs 2k and 2k+1). With `smctrl` as third argument the script stops here.
#  3. gpupart-dev-exp2 --calibrate: the SMs of every TPC number; then Experiment 2 of "SMLP" (Ali et al., ECRTS 2024): one kernel on
#     1..N TPCs, checked against the calibration (no block outside the allowed TPCs).
#  4. Three processes of one SMLP component (h=2, M=2, priorities 3/2/1), without MPS: every block of
#     every request must run inside that request's grant; grants held at the same time must be disjoint.
#  5. The same three under MPS (concurrent kernels), then the same with a whole-GPU lock (h = H: every
#     request takes the whole component, i.e. a mutex with the SMLP's queues): blocking times compared.
# Exits 0 when every verdict passed, 1 otherwise.
#   api_device.sh CARRY_DIR OUT_DIR [REQUESTS | smctrl]
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=device_env.sh
. "$here/device_env.sh" "$1" "$2" gpupart-api  # bin, out, gp, GPUPART_*
requests=${3:-40}
only_smctrl=0
[ "$requests" = smctrl ] && only_smctrl=1 && requests=40
export CUDA_MPS_PIPE_DIRECTORY=/tmp/gpupart-api-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/gpupart-api-log
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill -9 "$pid" 2> /dev/null; done
    "$gp" mps stop > /dev/null 2>&1
    rm -rf "$GPUPART_REGISTRY_DIR"
}
trap cleanup EXIT
mkdir -p "$GPUPART_REGISTRY_DIR"
export XDG_CACHE_HOME=$out/cache  # the probe's map of launch-mask bits, which the GPC map is made from
nvidia-smi -L > "$out/gpus.txt" 2>&1
"$gp" probe > "$out/probe.txt" 2>&1 || { echo "probe failed"; cat "$out/probe.txt"; exit 1; }
"$gp" gpcs --write > "$out/gpcs.txt" 2>&1 || { echo "gpcs --write failed"; cat "$out/gpcs.txt"; exit 1; }
"$bin/gpupart-dev-smctrl" > "$out/smctrl.txt" 2>&1
smctrl_status=$?
echo "smctrl api program: exit $smctrl_status"
grep -E '^(verdict .* FAIL|VERDICT|gpc-info)' "$out/smctrl.txt"
[ "$smctrl_status" -eq 0 ] || tail -5 "$out/smctrl.txt"
if [ "$only_smctrl" = 1 ]; then
    grep '^VERDICT' "$out/smctrl.txt" > "$out/summary.txt"
    exit $((smctrl_status != 0))
fi
"$bin/gpupart-example-libsmctrl-streams" --hold-seconds 3 > "$out/example.txt" 2>&1 &
example=$!
sleep 2
"$gp" list --json > "$out/example-list.json" 2>&1
wait "$example"
echo "example: exit $?"; cat "$out/example.txt"
"$bin/gpupart-dev-exp2" --calibrate > "$out/calibration.csv" 2> "$out/calibration.err" || { cat "$out/calibration.err"; exit 1; }
"$bin/gpupart-dev-exp2" --check "$out/calibration.csv" > "$out/exp2.csv" 2> "$out/exp2.err" || { cat "$out/exp2.err"; exit 1; }
echo "experiment 2:"; cat "$out/exp2.csv"
# The SMLP workers' kernel: 88 blocks, which stop gaining at 22 TPCs, so three requests can run side by side
# on 66 TPCs, or are resized onto what is free; its L list comes from the same measurement.
"$bin/gpupart-dev-exp2" --blocks 88 --reps 3 --check "$out/calibration.csv" > "$out/exp2-88.csv" 2> "$out/exp2-88.err" \
    || { cat "$out/exp2-88.err"; exit 1; }

# three workers of one component; $1 = run name, $2 = h; the first creates the component
run_three() {
    local name=$1 h=$2 component="api-$1"
    local labels=(high mid low) prios=(3 2 1)
    pids=()
    for i in 0 1 2; do
        local create=()
        [ "$i" = 0 ] && create=(--create --fq 2)
        "$bin/gpupart-dev-smlp" --component "$component" --levels "$out/exp2-88.csv" --blocks 88 --h "$h" "${create[@]}" \
            --priority "${prios[$i]}" --label "${labels[$i]}" --requests "$requests" --gap-us 200 --start-file "$out/$name.go" \
            > "$out/$name-${labels[$i]}.csv" 2> "$out/$name-${labels[$i]}.err" &
        pids+=($!)
        [ "$i" = 0 ] && sleep 1  # the component exists before the others join
    done
    for _ in $(seq 300); do  # all three ready (CUDA up, component open), then they start together
        [ "$(grep -l PAUSED "$out/$name"-{high,mid,low}.csv 2> /dev/null | wc -l)" = 3 ] && break
        sleep 0.1
    done
    touch "$out/$name.go"
    sleep 0.05  # while they run: the component's queues and the workers' own masks, as the views see them
    "$gp" smlp --json > "$out/$name-smlp.json" 2>&1
    "$gp" smlp > "$out/$name-smlp.txt" 2>&1
    "$gp" list --json > "$out/$name-list.json" 2>&1
    local status=0
    for pid in "${pids[@]}"; do wait "$pid" || status=1; done
    pids=()
    echo "$name: workers exit $status"
    cat "$out/$name"-*.err
}
run_three plain 2
"$gp" mps start > "$out/mps.txt" 2>&1 || { echo "mps start failed"; cat "$out/mps.txt"; exit 1; }
run_three mps 2
total=$(python3 -c "import sys; print(sum(1 for l in open(sys.argv[1]) if l[:1].isdigit()))" "$out/exp2-88.csv")
run_three mpswhole "$total"
"$gp" mps stop > /dev/null 2>&1
python3 "$here/check_smlp.py" "$out" plain mps mpswhole > "$out/summary.txt"; verdicts=$?
cat "$out/summary.txt"
[ "$smctrl_status" -eq 0 ] && [ "$verdicts" -eq 0 ]
