#!/usr/bin/env bash
# The launch path against its targets, bare and under gpupart side by side in one run on a real H100 or H200
# (through the `device` tool after tests/device/stage.sh):
#   launches/s   gpupart-bench-threads with 1, 4, 8 and 16 threads on their own streams, the legacy default
#                stream and per-thread default streams: bare, `gpupart run --tpcs all` and `--tpcs gpc0-3`
#                (target: at least 0.95x bare in every row); then the bare program once more ("bare again"), whose
#                ratio to the first bare run shows how much two identical runs differ on that machine
#   graphs       gpupart-bench-graph, a 200-kernel graph: steady replay p50 bare and under the shim, and the
#                first replay after each mask change (target: at most 50 us more than a steady replay)
#   start        start to exit of the smallest CUDA program (gpupart-bench-start), bare and under
#                `gpupart run`, without MPS and under an MPS daemon of this run's own (targets: +10 ms, +20 ms)
# Modes are interleaved so that clock and thermal drift hit all alike; each figure is a median over reps.
#   launch_path_bench.sh CARRY_DIR OUT_DIR [REPS]
# Writes OUT_DIR/launch-path.txt (every run's line) and OUT_DIR/launch-path-table.txt (the table printed
# here). Exit status: 0 when every target is met, 1 when one is not (the table says which), 2 when a run
# failed.
set -u
# shellcheck source-path=SCRIPTDIR source=../device/device_env.sh
. "$(dirname "$0")/../device/device_env.sh" "$1" "$2" gpupart-launchpath  # bin, out, gp, GPUPART_*
reps=${3:-3}
export XDG_CACHE_HOME=$out/cache GPUPART_JOURNAL=$out/history.jsonl
mps_dir=$out/mps
mps_env=(CUDA_MPS_PIPE_DIRECTORY="$mps_dir/pipe" CUDA_MPS_LOG_DIRECTORY="$mps_dir/log")
mps_stop() { [ -e "$mps_dir/pipe/control" ] && echo quit | env "${mps_env[@]}" nvidia-cuda-mps-control > /dev/null 2>&1; }
cleanup() { mps_stop; rm -rf "$GPUPART_REGISTRY_DIR"; }
trap cleanup EXIT

if ! "$gp" probe > "$out/probe.txt" 2>&1; then
    echo "gpupart probe failed, so partitions cannot be named on the live GPU:"
    cat "$out/probe.txt"
    exit 2
fi
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/gpu.txt"
flip_masks="$(descriptor_bits gpc4-7),$(descriptor_bits gpc0-3),$(descriptor_bits all)"

log=$out/launch-path.txt
: > "$log"
failed=0
# as_mode MODE CMD...: CMD bare, bare with 8 connections, or under gpupart run with every TPC or with gpc0-3.
as_mode() {
    local mode=$1; shift
    case $mode in
        bare|bare-again) "$@" ;;  # bare-again: the bare program once more, last: how far two bare runs differ
        conn8) CUDA_DEVICE_MAX_CONNECTIONS=8 "$@" ;;  # what gpupart run sets for an MPS client, without the shim
        all) "$gp" run --tpcs all -- "$@" ;;
        gpc0-3) "$gp" run --tpcs gpc0-3 -- "$@" ;;
        cb-gpc0-3) GPUPART_LAUNCH_PATH=callback "$gp" run --tpcs gpc0-3 -- "$@" ;;  # the launch callback alone
    esac
}
record() {  # record PREFIX CMD...: runs CMD, appends its stdout lines prefixed; a failure is counted
    local prefix=$1; shift
    local run
    if ! run=$("$@" 2> "$out/last-error.txt"); then
        failed=$((failed + 1))
        echo "$prefix FAILED: $(head -c 300 "$out/last-error.txt")" | tee -a "$log"
        return
    fi
    printf '%s\n' "$run" | sed "s|^|$prefix |" >> "$log"
}

time_starts() {  # time_starts PLACE COUNT: COUNT starts of the smallest CUDA program in each start mode, interleaved
    local place=$1 count=$2 mode start _
    for _ in $(seq 1 "$count"); do
        for mode in bare conn8 all; do
            start=$(date +%s%N)
            record "$place $mode" as_mode "$mode" "$bin/gpupart-bench-start"
            echo "$place $mode start_ms $(( ($(date +%s%N) - start) / 1000 ))" >> "$log"
        done
    done
}

for rep in $(seq 1 "$reps"); do
    echo "rep $rep: launch rates"
    for stream in own legacy per-thread; do
        for threads in 1 4 8 16; do
            for mode in bare all gpc0-3 cb-gpc0-3 bare-again; do
                record "launch $mode" as_mode "$mode" "$bin/gpupart-bench-threads" --threads "$threads" --stream "$stream" --ms 700
            done
        done
    done
    echo "rep $rep: graphs and starts"
    record "graph bare" "$bin/gpupart-bench-graph" --nodes 200 --iterations 1000
    record "graph shim" "$gp" run --tpcs all -- "$bin/gpupart-bench-graph" --nodes 200 --iterations 1000
    record "graph flip" "$gp" run --tpcs gpc0-3 -- "$bin/gpupart-bench-graph" --nodes 200 --iterations 1000 --flip "$flip_masks"
    time_starts start-nomps 5
done

# The MPS rows: a daemon of this run's own (its pipe directory under OUT_DIR), stopped at exit.
mkdir -p "$mps_dir/pipe" "$mps_dir/log"
if env "${mps_env[@]}" nvidia-cuda-mps-control -d; then
    export CUDA_MPS_PIPE_DIRECTORY="$mps_dir/pipe" CUDA_MPS_LOG_DIRECTORY="$mps_dir/log"
    "$bin/gpupart-bench-start" > /dev/null  # the first client starts the server: not a start to time
    time_starts start-mps $((reps * 5))
    for rep in $(seq 1 "$reps"); do
        for mode in bare all gpc0-3 cb-gpc0-3; do
            record "launch-mps $mode" as_mode "$mode" "$bin/gpupart-bench-threads" --threads 8 --stream own --ms 700
        done
    done
    mps_stop
    unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
else
    echo "MPS daemon did not start: no MPS rows" | tee -a "$log"
fi

python3 - "$log" "$failed" <<'PY' | tee "$out/launch-path-table.txt"
import collections, statistics, sys
rates = collections.defaultdict(list)   # (place, stream, threads, mode) -> launches/s
figures = collections.defaultdict(list) # (what, mode) -> values
for line in open(sys.argv[1]):
    p = line.split()
    if len(p) < 3 or "FAILED" in p: continue
    if p[0] in ("launch", "launch-mps") and p[2] == "threads":
        f = dict(zip(p[2::2], p[3::2]))
        rates[(p[0], f["stream"], int(f["threads"]), p[1])].append(float(f["launches_per_s"]))
    elif p[0].startswith("start-") and p[2] == "start_ms":
        figures[(p[0], p[1])].append(float(p[3]) / 1000.0)
    elif p[0] == "graph" and p[2].endswith("_ns"):
        f = dict(zip(p[3::2], p[4::2]))
        if "median" in f: figures[(f"graph {p[2]}", p[1])].append(float(f["median"]))
med = lambda v: statistics.median(v) if v else float("nan")
missed = []
print(f"{'launches/s':<28} {'bare':>9} {'run all':>9} {'x bare':>7} {'run gpc0-3':>10} {'x bare':>7} {'callback gpc0-3':>15} {'x bare':>7}"
      f" {'bare again':>10} {'x bare':>7}")
for key in sorted({k[:3] for k in rates}, key=lambda k: (k[0], ["own", "legacy", "per-thread"].index(k[1]), k[2])):
    place, stream, threads = key
    bare, all_, part, callback, again = (med(rates[key + (m,)]) for m in ("bare", "all", "gpc0-3", "cb-gpc0-3", "bare-again"))
    name = f"{'MPS ' if place == 'launch-mps' else ''}{threads} thr, {stream}"
    print(f"{name:<28} {bare:>9.0f} {all_:>9.0f} {all_ / bare:>7.2f} {part:>10.0f} {part / bare:>7.2f} {callback:>15.0f} "
          f"{callback / bare:>7.2f} {again:>10.0f} {again / bare:>7.2f}")
    for label, value in (("run all", all_), ("run gpc0-3", part)):
        if not value >= 0.95 * bare: missed.append(f"launches/s, {name}, {label}: {value / bare:.2f}x bare (target 0.95x)")
steady_bare, steady_shim = med(figures[("graph e2e_ns", "bare")]), med(figures[("graph e2e_ns", "shim")])
changed = med(figures[("graph changed_e2e_ns", "flip")])
steady_flip = med(figures[("graph e2e_ns", "flip")])
print(f"\n200-kernel graph replay p50 (launch and sync): bare {steady_bare / 1000:.1f} us, shim {steady_shim / 1000:.1f} us "
      f"({steady_shim / steady_bare:.2f}x); first replay after a change {changed / 1000:.1f} us "
      f"(+{(changed - steady_flip) / 1000:.1f} us over a steady replay of the same run)")
if not changed - steady_flip <= 50_000: missed.append(f"graph re-mask: +{(changed - steady_flip) / 1000:.0f} us (target 50 us)")
for place, target in (("start-nomps", 10.0), ("start-mps", 20.0)):
    bare, conn8, run = (med(figures[(place, m)]) for m in ("bare", "conn8", "all"))
    if bare != bare: continue
    print(f"start to exit, {'MPS' if place == 'start-mps' else 'no MPS'}: bare {bare:.1f} ms, bare with "
          f"CUDA_DEVICE_MAX_CONNECTIONS=8 {conn8:.1f} ms, gpupart run {run:.1f} ms (+{run - bare:.1f} ms)")
    if not run - bare <= target: missed.append(f"start {place[6:]}: +{run - bare:.1f} ms (target +{target:.0f} ms)")
print(f"\nruns that failed: {sys.argv[2]}")
print("targets missed:" if missed else "every target met")
for m in missed: print("  " + m)
sys.exit(2 if int(sys.argv[2]) else 1 if missed else 0)
PY
verdict=${PIPESTATUS[0]}
# The verdict is the script's status (the table went through tee, whose own status is 0). Not `exit`:
# shellcheck 0.9 then takes every function for unreachable.
(exit "$verdict")
