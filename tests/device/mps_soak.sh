#!/usr/bin/env bash
# The MPS fault domain (Bakita & Anderson, ECRTS 2025, pitfall 2): does killing MPS clients, partitioned by
# the shim or not, ever make the MPS server report a fatal error or fail other clients? And what does the
# server log say when one client really does fault? On a real H100/H200 through the `device` tool after
# tests/device/stage.sh (CI cannot run it). Usage:
#   mps_soak.sh CARRY_DIR OUT_DIR [CYCLES] [LANES]
# Under `gpupart mps start`, LANES (default 6) lanes each start a gpupart-dev-mpsclient, wait until its first
# kernel completed, let it work 0-300 ms more and SIGKILL it, CYCLES (default 200) times in all per kind:
# partitioned (`gpupart run --tpcs gpc<lane>`) and unpartitioned (no shim) clients alternate in every lane,
# so both kinds run beside each other and the counts are equal. Every 25th cycle of a lane (SOAK_CLEAN_EVERY;
# 1: every cycle, no kills) runs a client to its end instead (--seconds 1), which must exit 0. SOAK_TORCH_LANES=N: the last N lanes run PyTorch clients
# (mps_torch_client.py) instead, as in the incident docs/mps-fault-domain.md describes. SOAK_SECONDS (default 200) bounds the soak: lanes stop starting
# cycles after it, and the summary says how many ran. Then phase 2, twice (the faulting client unpartitioned,
# then partitioned): two workers (one partitioned) run while
# a third client writes out of bounds (a fatal GPU error); how each ends, and whether a new client can
# connect afterwards, is recorded. OUT_DIR gets summary.txt, cycles.txt (one line a cycle), the MPS logs
# (control.log, server.log) and the clients' outputs of phase 2. Every process it starts is ended, MPS too.
set -u
# shellcheck source-path=SCRIPTDIR source=device_env.sh
. "$(dirname "$0")/device_env.sh" "$1" "$2" gpupart-mpssoak  # bin, out, gp, GPUPART_*
# shellcheck source-path=SCRIPTDIR source=../lib/checks.sh
. "$(dirname "$0")/../lib/checks.sh"  # check, checks_summary
checks_verbose=1
cycles=${3:-200}
lanes=${4:-6}
soak_seconds=${SOAK_SECONDS:-200}
torch_lanes=${SOAK_TORCH_LANES:-0}
clean_every=${SOAK_CLEAN_EVERY:-25}
here=$(cd "$(dirname "$0")" && pwd)
export CUDA_MPS_PIPE_DIRECTORY=/tmp/gpupart-mpssoak-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/gpupart-mpssoak-log
rm -rf "$CUDA_MPS_LOG_DIRECTORY"
client=$bin/gpupart-dev-mpsclient
snap=(--snapshot builtin:h200)
work=$(mktemp -d /tmp/gpupart-mpssoak.XXXXXX)
lane_pids=()
started=()
cleanup() {
    for pid in "${lane_pids[@]}" "${started[@]}"; do kill -9 "$pid" 2> /dev/null; done
    # A lane killed above may leave its last client: they all carry this run's work directory in a file name.
    for pid in $(pgrep -f "gpupart-dev-mpsclient|mps_torch_client" 2> /dev/null); do
        if grep -qa "$work" "/proc/$pid/environ" 2> /dev/null; then kill -9 "$pid" 2> /dev/null; fi
    done
    "$gp" mps stop > /dev/null 2>&1
    cp "$CUDA_MPS_LOG_DIRECTORY"/*.log "$out/" 2> /dev/null
    rm -rf "$GPUPART_REGISTRY_DIR" "$work"
}
trap cleanup EXIT
summary=$out/summary.txt
note() { echo "$*" | tee -a "$summary"; }
wait_for_line() {  # wait_for_line FILE TEXT SECONDS PID: 0 once TEXT is in FILE, 1 if PID ended or time ran out
    local deadline=$((SECONDS + $3))
    while [ "$SECONDS" -lt "$deadline" ]; do
        grep -q "$2" "$1" 2> /dev/null && return 0
        kill -0 "$4" 2> /dev/null || { grep -q "$2" "$1" 2> /dev/null; return; }
        sleep 0.02
    done
    return 1
}
# start_client KIND LANE OUTPUT [ARGS...]: starts one client in the background; sets client_pid. The tag
# variable marks the client's environment so that cleanup finds it (and nothing else) by its pid.
start_client() {
    local kind=$1 lane=$2 output=$3
    shift 3
    local program=("$client")
    if [ "$lane" -ge $((lanes - torch_lanes)) ] && [ "$lane" -lt "$lanes" ]; then program=(python3 "$here/mps_torch_client.py"); fi
    if [ "$kind" = partitioned ]; then
        GPUPART_SOAK_TAG=$work "$gp" run --tpcs "gpc$((lane % 8))" "${snap[@]}" -- "${program[@]}" "$@" > "$output" 2>&1 &
    else
        GPUPART_SOAK_TAG=$work CUDA_DEVICE_MAX_CONNECTIONS=8 "${program[@]}" "$@" > "$output" 2>&1 &
    fi
    client_pid=$!
}
# lane LANE: the cycles of one lane, one line each in $work/lane-LANE:
#   <lane> <cycle> <kind> killed|clean|failed|not-ready <exit status> <ms from start to ready> <pid>
lane() {
    local lane=$1 c=0 kind output t0 ready_ms rc outcome
    local deadline=$((SECONDS + soak_seconds)) per_lane=$(( (2 * cycles + lanes - 1) / lanes ))
    while [ "$c" -lt "$per_lane" ] && [ "$SECONDS" -lt "$deadline" ]; do
        if [ $(((lane + c) % 2)) -eq 0 ]; then kind=partitioned; else kind=unpartitioned; fi
        output=$work/client-$lane-$c.txt
        t0=$(date +%s%N)
        if [ $((c % clean_every)) -eq $((clean_every - 1)) ]; then
            start_client "$kind" "$lane" "$output" --seconds 1
            wait "$client_pid"; rc=$?
            if [ "$rc" -eq 0 ]; then outcome=clean; else outcome=failed; fi
            ready_ms=-1
        else
            start_client "$kind" "$lane" "$output" --seconds 30
            if wait_for_line "$output" "^ready" 20 "$client_pid"; then
                ready_ms=$((($(date +%s%N) - t0) / 1000000))
                sleep "0.$(printf '%03d' $((RANDOM % 300)))"
                if kill -0 "$client_pid" 2> /dev/null; then kill -9 "$client_pid"; fi
                wait "$client_pid"; rc=$?
                if [ "$rc" -eq 137 ]; then outcome=killed; else outcome=failed; fi
            else
                ready_ms=-1
                kill -9 "$client_pid" 2> /dev/null
                wait "$client_pid"; rc=$?
                outcome=not-ready
            fi
        fi
        echo "$lane $c $kind $outcome $rc $ready_ms $client_pid" >> "$work/lane-$lane"
        if [ "$outcome" = failed ] || [ "$outcome" = not-ready ]; then cp "$output" "$out/failed-$lane-$c.txt"; fi
        rm -f "$output"
        c=$((c + 1))
    done
}

nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee "$out/gpu.txt"
note "date $(date -u +%FT%TZ) gpu $(head -1 "$out/gpu.txt") cycles per kind $cycles lanes $lanes bound ${soak_seconds}s"
"$gp" mps start | tee -a "$summary"
"$gp" mps status | tee -a "$summary"

echo "== 1. the soak: start, work, SIGKILL"
soak_start=$SECONDS
for l in $(seq 0 $((lanes - 1))); do
    lane "$l" &
    lane_pids+=($!)
done
for pid in "${lane_pids[@]}"; do wait "$pid"; done
lane_pids=()
cat "$work"/lane-* | sort -n -k1 -k2 > "$out/cycles.txt"
note "soak took $((SECONDS - soak_start)) s"
for kind in partitioned unpartitioned; do
    for outcome in killed clean failed not-ready; do
        note "$kind $outcome $(awk -v k="$kind" -v o="$outcome" '$3 == k && $4 == o' "$out/cycles.txt" | wc -l)"
    done
done
for lane_kind in plain torch; do
    if [ "$lane_kind" = torch ]; then sel="\$1 >= $((lanes - torch_lanes))"; else sel="\$1 < $((lanes - torch_lanes))"; fi
    note "$lane_kind clients: $(awk "$sel" "$out/cycles.txt" | wc -l) cycles, $(awk "$sel && (\$4 == \"failed\" || \$4 == \"not-ready\")" "$out/cycles.txt" | wc -l) failed"
done
note "median ms to ready: $(awk '$6 >= 0 {print $6}' "$out/cycles.txt" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')"
"$gp" mps status | tee -a "$summary"
# Fatal errors the server reported during the soak. NVIDIA documents no log grammar; these are the
# words its server log uses for a client's fault (recorded in docs/mps-fault-domain.md).
fatal_soak=$(grep -ciE "fatal|exception|fault|xid" "$CUDA_MPS_LOG_DIRECTORY/server.log" 2> /dev/null)
note "server log lines naming a fatal error, exception, fault or Xid during the soak: ${fatal_soak:-0}"
cp "$CUDA_MPS_LOG_DIRECTORY/server.log" "$out/server-after-soak.log" 2> /dev/null
failed=$(awk '$4 == "failed" || $4 == "not-ready"' "$out/cycles.txt" | wc -l)
check "no client failed or stayed unready during the soak" [ "$failed" -eq 0 ]
check "no fatal error in the server log during the soak" [ "${fatal_soak:-0}" -eq 0 ]

# fault_round N KIND: two workers (one partitioned, one not) run while a KIND client writes out of bounds;
# how each ends, and whether a new client can connect afterwards, goes to the summary.
fault_round() {
    local n=$1 kind=$2 wp wu fc fault_rc wp_rc wu_rc after_rc
    start_client partitioned 1 "$out/fault$n-worker-partitioned.txt" --seconds 10; started+=("$client_pid"); wp=$client_pid
    start_client unpartitioned 2 "$out/fault$n-worker-plain.txt" --seconds 10; started+=("$client_pid"); wu=$client_pid
    wait_for_line "$out/fault$n-worker-partitioned.txt" "^ready" 20 "$wp"
    wait_for_line "$out/fault$n-worker-plain.txt" "^ready" 20 "$wu"
    note "fault round $n: workers partitioned $wp, unpartitioned $wu; the $kind client writes out of bounds at $(date -u +%FT%T.%NZ)"
    start_client "$kind" 3 "$out/fault$n-client.txt" --fault; started+=("$client_pid"); fc=$client_pid
    faulted+=("$fc" "$wp" "$wu")
    wait "$fc"; fault_rc=$?
    note "faulting $kind client $fc exit $fault_rc: $(tr '\n' ' ' < "$out/fault$n-client.txt")"
    wait "$wp"; wp_rc=$?
    wait "$wu"; wu_rc=$?
    note "partitioned worker $wp exit $wp_rc: $(tr '\n' ' ' < "$out/fault$n-worker-partitioned.txt")"
    note "unpartitioned worker $wu exit $wu_rc: $(tr '\n' ' ' < "$out/fault$n-worker-plain.txt")"
    "$gp" mps status | tee -a "$summary"
    start_client partitioned 4 "$out/fault$n-after.txt" --seconds 1; started+=("$client_pid")
    wait "$client_pid"; after_rc=$?
    note "a new client after the fault: exit $after_rc: $(tr '\n' ' ' < "$out/fault$n-after.txt")"
    check "fault round $n: the faulting client saw its error (exit 4)" [ "$fault_rc" -eq 4 ]
    check "fault round $n: a new client runs once the faulted ones are gone" [ "$after_rc" -eq 0 ]
}
echo "== 2. deliberate fatal errors (an out-of-bounds write) beside two working clients"
faulted=()
fault_round 1 unpartitioned
fault_round 2 partitioned

echo "== 3. gpupart shows the fatal errors (check, check --json, top) while the daemon runs"
"$gp" check "${snap[@]}" > "$out/check.txt" 2>&1
"$gp" check --json "${snap[@]}" > "$out/check.json" 2>&1
"$gp" top --batch -n 1 --size 250x60 "${snap[@]}" > "$out/top.txt" 2>&1
grep "fatal" "$out/check.txt" "$out/top.txt"
check "gpupart check shows a fatal MPS error per fault round" [ "$(grep -c "^error: MPS server .* had a fatal GPU error" "$out/check.txt")" -ge 2 ]
for pid in "${faulted[@]}"; do
    check "gpupart check names torn-down client $pid" grep -qE "tore down clients? [0-9, ]*\b$pid\b" "$out/check.txt"
done
check "gpupart check --json has the finding id mps-fatal-error" grep -q '"id": "mps-fatal-error"' "$out/check.json"
check "gpupart top shows the fatal MPS error" grep -q "fatal GPU error" "$out/top.txt"
cp "$CUDA_MPS_LOG_DIRECTORY"/*.log "$out/" 2> /dev/null
grep -iE "fatal|exception|fault|xid|error" "$out/server.log" > "$out/server-errors.txt" 2> /dev/null
note "server log lines naming an error after phase 2: $(wc -l < "$out/server-errors.txt")"
"$gp" mps stop | tee -a "$summary"
checks_summary "mps soak" | tee -a "$summary"
