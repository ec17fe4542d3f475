#!/usr/bin/env bash
# Device tests of CUDA graphs under `gpupart set`, on a real H100 or H200 (run through the `device`
# tool after tests/device/stage.sh; CI cannot run them): a graph exec uploaded on one partition must run
# its kernels on the new one from its first replay after the change, compute the same numbers, and be
# counted in `gpupart list --json` ("graphs": execs, current, older, pending, unfollowable, device_launch,
# tracking). A graph with a conditional node moves only its top-level kernels (its body's are recorded, not
# checked); one instantiated for device launch follows when the host launches it.
#   graph_tests.sh CARRY_DIR OUT_DIR
# The live topology is used (no --snapshot, the GPU may be either): `gpupart probe` runs first so that its
# mask bits are known; its cache goes to OUT_DIR/cache. No MPS: %smid names physical SMs only without it.
# Writes each program's output, the `gpupart list --json` taken while a process was paused and
# OUT_DIR/summary.txt (every check, the graph counts, the PyTorch rates). Every process it starts is
# ended, also on failure.
set -u
# shellcheck source-path=SCRIPTDIR source=device_env.sh
. "$(dirname "$0")/device_env.sh" "$1" "$2" gpupart-graphtest  # bin, out, gp, GPUPART_*
# shellcheck source-path=SCRIPTDIR source=../lib/checks.sh
. "$(dirname "$0")/../lib/checks.sh"  # check, checks_summary
checks_verbose=1
here=$(cd "$(dirname "$0")" && pwd)
export XDG_CACHE_HOME=$out/cache GPUPART_JOURNAL=$out/history.jsonl
summary=$out/summary.txt
: > "$summary"
started=()
cleanup() {
    for pid in "${started[@]}"; do kill -9 "$pid" 2> /dev/null; done
    rm -rf "$GPUPART_REGISTRY_DIR"
}
trap cleanup EXIT

note() { echo "$*" | tee -a "$summary"; }
# verify NAME CONDITION...: check, with its verdict also kept in the summary.
verify() {
    local failed=$failures
    check "$@"
    if [ "$failures" -gt "$failed" ]; then echo "FAIL $1" >> "$summary"; else echo "PASS $1" >> "$summary"; fi
}
wait_for_file() { for _ in $(seq 1 "$(($2 * 10))"); do [ -e "$1" ] && return 0; sleep 0.1; done; return 1; }
# replays_on FILE FIRST LAST "SMS" exact|subset [PREFIX]: replays FIRST..LAST of FILE each used exactly the SMs
# in SMS (or only SMs of it, and at least one). 4224 blocks of one kernel are several waves on any partition,
# so every allowed SM gets some; the 200 small kernels of --mode many need not reach them all. PREFIX (default
# replay) picks the lines: top for the top-level kernel of --mode conditional.
replays_on() {
    python3 - "$@" <<'PY'
import sys
path, first, last, allowed, how = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), set(map(int, sys.argv[4].split())), sys.argv[5]
prefix = (sys.argv[6] if len(sys.argv) > 6 else "replay") + " "
ok = True; seen = 0
for line in open(path):
    if not line.startswith(prefix): continue
    i = int(line.split()[1]); sms = set(map(int, line.split(":")[1].split("check")[0].split()))
    if not first <= i <= last: continue
    seen += 1
    good = sms == allowed if how == "exact" else (sms and sms <= allowed)
    if not good: ok = False; print(f"  replay {i}: {sorted(sms)} is not {how} of {sorted(allowed)}")
sys.exit(0 if ok and seen == last - first + 1 else 1)
PY
}
# where_ran FILE FIRST LAST PREFIX NAME=SMS...: for each of replays FIRST..LAST of FILE (lines PREFIX <i> ...),
# "<i>:<NAME>" for the NAME whose SMS it used exactly, else "<i>:other(<its SMs>)"; "<i>:missing" if absent.
where_ran() {
    python3 - "$@" <<'PY'
import sys
path, first, last, prefix = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] + " "
named = [(a.split("=", 1)[0], set(map(int, a.split("=", 1)[1].split()))) for a in sys.argv[5:]]
ran = {}
for line in open(path):
    if line.startswith(prefix): ran[int(line.split()[1])] = set(map(int, line.split(":")[1].split("check")[0].split()))
words = []
for i in range(first, last + 1):
    sms = ran.get(i)
    name = "missing" if sms is None else next((n for n, s in named if s == sms), None)
    words.append(f"{i}:{name}" if name else f"{i}:other({' '.join(map(str, sorted(sms)))})")
print(" ".join(words))
PY
}
# all_ok FILE N: N replays, every check ok, and the program reached its end.
all_ok() { [ "$(grep -cE '^replay [0-9]+ .* check ok$' "$1")" -eq "$2" ] && lacks "$1" "check BAD" && matches "$1" '^done$'; }
# ran_ok FILE N: all_ok, and the process that move started exited 0 (rc).
ran_ok() { [ "$rc" -eq 0 ] && all_ok "$@"; }
# torch_all_ok FILE: torch_graph.py ran batches, every check ok, and reached its end.
torch_all_ok() { matches "$1" '^t .* check ok$' && lacks "$1" "check BAD" && matches "$1" '^done$'; }
# graphs LIST_JSON PID [FIELD]: the process's "graphs" object as one line of JSON, or one field of it
# (-1 when the process or the field is missing).
graphs() {
    python3 - "$@" <<'PY'
import json, sys
pid = int(sys.argv[2]); field = sys.argv[3] if len(sys.argv) > 3 else None
try: processes = json.load(open(sys.argv[1])).get("processes", [])
except (OSError, ValueError): processes = []
graphs = next((p.get("graphs") for p in processes if p.get("pid") == pid), None)
if field is None: print(json.dumps(graphs) if graphs is not None else "missing")
else: print(graphs.get(field, -1) if isinstance(graphs, dict) else -1)
PY
}

nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee "$out/gpu.txt"
note "gpu: $(head -1 "$out/gpu.txt")"
"$gp" list --json > "$out/list-start.json"
verify "no MPS server runs (%smid is physical only without it)" \
    python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["mps"]["running"])' "$out/list-start.json"

echo "== 0. gpupart probe: the live mask bits, so that partitions can be named without --snapshot"
"$gp" probe > "$out/probe.txt" 2>&1; rc=$?
head -2 "$out/probe.txt"
verify "gpupart probe exits 0" [ "$rc" -eq 0 ]
gpc0=$(sms_of gpc0); gpc1=$(sms_of gpc1); gpc6=$(sms_of gpc6)
note "gpc0 SMs: $gpc0"; note "gpc1 SMs: $gpc1"; note "gpc6 SMs: $gpc6"
if [ -z "$gpc1" ] || [ -z "$gpc6" ]; then
    echo "gpupart mask parse gave no SMs for gpc1 or gpc6: nothing more can be tested"
    checks_summary "graph device tests" | tee -a "$summary"
    exit 1
fi

# remasked_ahead LIST_JSON PID: the process's execs all carry the current mask (none older), at least one.
remasked_ahead() { [ "$(graphs "$1" "$2" current)" -ge 1 ] && [ "$(graphs "$1" "$2" older)" -eq 0 ]; }

# move MODE: a gpupart-dev-graph --mode MODE process started on gpc1, paused after 3 of 6 replays, moved to
# gpc6 by `gpupart set`; `gpupart list --json` is taken before it resumes. Leaves pid, set_rc (of the
# set) and rc (of the process) set.
move() {
    local mode=$1 resume=$out/resume-$1
    rm -f "$resume"
    set_rc=-1
    "$gp" run --tpcs gpc1 -- "$bin/gpupart-dev-graph" --mode "$mode" --replays 6 --pause-after 3 --resume-file "$resume" \
        > "$out/graph-$mode.txt" 2>&1 &
    started+=($!)
    pid=-1
    if wait_for_line "$out/graph-$mode.txt" PAUSED; then
        pid=$(awk '/^pid /{print $2}' "$out/graph-$mode.txt")
        "$gp" set "$pid" gpc6 > "$out/set-$mode.txt" 2>&1; set_rc=$?
        "$gp" list --json > "$out/list-$mode.json"
        note "$mode: graphs before the resume $(graphs "$out/list-$mode.json" "$pid")"
        touch "$resume"
    fi
    wait "${started[-1]}"; rc=$?
    cat "$out/graph-$mode.txt"
    note "$mode: exit $rc"
}

echo "== 1. an uploaded graph follows gpupart set from its next replay (plain, destroy, child, many)"
for mode in plain destroy child many; do
    echo "-- --mode $mode"
    move "$mode"
    how=exact; if [ "$mode" = many ]; then how=subset; fi
    verify "$mode: gpupart set PID gpc6 exits 0" [ "$set_rc" -eq 0 ]
    verify "$mode: exits 0, all 6 replays computed the right numbers" ran_ok "$out/graph-$mode.txt" 6
    verify "$mode: replays 0-2 ran on gpc1 ($how)" replays_on "$out/graph-$mode.txt" 0 2 "$gpc1" "$how"
    verify "$mode: replays 3-5 ran on gpc6 ($how)" replays_on "$out/graph-$mode.txt" 3 5 "$gpc6" "$how"
    # gpupart set returned once the shim's re-mask thread had rebuilt the exec: current before any replay.
    verify "$mode: list counted the exec as carrying the new mask before the resume (re-masked ahead)" \
        remasked_ahead "$out/list-$mode.json" "$pid"
done

echo "== 2. a graph the program updates itself before every replay (SetParams, ExecUpdate) follows too"
move update
verify "update: gpupart set PID gpc6 exits 0" [ "$set_rc" -eq 0 ]
verify "update: exits 0, every replay computed the numbers of its update" ran_ok "$out/graph-update.txt" 6
verify "update: replays 0-2 ran on gpc1" replays_on "$out/graph-update.txt" 0 2 "$gpc1" exact
verify "update: replays 3-5 ran on gpc6" replays_on "$out/graph-update.txt" 3 5 "$gpc6" exact

echo "== 3. a graph with a conditional node: its top-level kernel follows, the kernel of its body is out of reach"
# The shim cannot read a conditional node's body back, so it counts the exec unfollowable but still toggles the
# top-level kernel node. Where the body's kernel runs after the set is recorded, not checked.
move conditional
verify "conditional: gpupart set PID gpc6 exits 0" [ "$set_rc" -eq 0 ]
verify "conditional: exits 0, all 6 replays computed the right numbers (the body ran every time)" \
    ran_ok "$out/graph-conditional.txt" 6
verify "conditional: the top-level kernel's replays 0-2 ran on gpc1" replays_on "$out/graph-conditional.txt" 0 2 "$gpc1" exact top
verify "conditional: the top-level kernel's replays 3-5 ran on gpc6" replays_on "$out/graph-conditional.txt" 3 5 "$gpc6" exact top
verify "conditional: list counted the exec as unfollowable before the resume" \
    [ "$(graphs "$out/list-conditional.json" "$pid" unfollowable)" -eq 1 ]
note "NOTE conditional: the body's kernel ran, before the set $(where_ran "$out/graph-conditional.txt" 0 2 replay gpc1="$gpc1" gpc6="$gpc6"), after it $(where_ran "$out/graph-conditional.txt" 3 5 replay gpc1="$gpc1" gpc6="$gpc6")"

echo "== 4. a graph instantiated for device launch (and uploaded) follows when the host launches it"
move device
verify "device: gpupart set PID gpc6 exits 0" [ "$set_rc" -eq 0 ]
verify "device: exits 0, all 6 replays computed the right numbers" ran_ok "$out/graph-device.txt" 6
verify "device: replays 0-2 ran on gpc1" replays_on "$out/graph-device.txt" 0 2 "$gpc1" exact
verify "device: replays 3-5 ran on gpc6" replays_on "$out/graph-device.txt" 3 5 "$gpc6" exact
verify "device: list counted the exec as instantiated for device launch before the resume" \
    [ "$(graphs "$out/list-device.json" "$pid" device_launch)" -eq 1 ]

echo "== 5. PyTorch: torch.cuda.graphs captured on gpc0 speed up when widened to the whole GPU"
if ! python3 -c 'import torch; assert torch.cuda.is_available()' > "$out/torch-import.txt" 2>&1; then
    note "SKIP PyTorch case: python3 cannot import torch with CUDA ($(tail -1 "$out/torch-import.txt"))"
else
    ready=$out/torch-ready
    rm -f "$ready"
    "$gp" run --tpcs gpc0 -- python3 "$here/torch_graph.py" --seconds 8 --ready-file "$ready" > "$out/torch.txt" 2>&1 &
    started+=($!)
    if wait_for_file "$ready" 120; then
        sleep 2
        pid=$(awk '/^pid /{print $2}' "$out/torch.txt")
        before=$(grep -c '^t ' "$out/torch.txt")  # batches that ended on gpc0
        "$gp" set "$pid" all > "$out/set-torch.txt" 2>&1; set_rc=$?
        after=$(grep -c '^t ' "$out/torch.txt")   # the batch running then straddles the change: left out
        sleep 1
        "$gp" list --json > "$out/list-torch.json"
        note "torch: graphs 1 s after the set $(graphs "$out/list-torch.json" "$pid")"
        current=$(graphs "$out/list-torch.json" "$pid" current)
    else
        note "torch: the ready file did not appear within 120 s"
        before=0; after=0; current=-1; set_rc=-1
    fi
    wait "${started[-1]}"; rc=$?
    cat "$out/torch.txt"
    # The first batch is left out too (clocks and caches warming up).
    python3 - "$out/torch.txt" "$before" "$after" <<'PY' | tee "$out/torch-rates.txt"
import statistics, sys
rates = [float(l.split()[3]) for l in open(sys.argv[1]) if l.startswith("t ")]
before, after = int(sys.argv[2]), int(sys.argv[3])
on_gpc0, on_all = rates[1:before], rates[after + 1:]
median = lambda r: statistics.median(r) if r else 0.0
print(f"gpc0 replays_per_s {median(on_gpc0):.1f} ({len(on_gpc0)} batches) all {median(on_all):.1f} ({len(on_all)} batches)"
      f" ratio {median(on_all) / median(on_gpc0) if on_gpc0 else 0.0:.2f}")
PY
    cat "$out/torch-rates.txt" >> "$summary"
    ratio=$(awk '{print $NF}' "$out/torch-rates.txt")
    verify "torch: gpupart set PID all exits 0" [ "$set_rc" -eq 0 ]
    verify "torch: exits 0" [ "$rc" -eq 0 ]
    verify "torch: every batch's check ok" torch_all_ok "$out/torch.txt"
    verify "torch: replays per second more than doubled after widening gpc0 to the whole GPU" \
        python3 -c 'import sys; sys.exit(float(sys.argv[1]) <= 2)' "${ratio:-0}"
    verify "torch: list counted a graph exec with the current mask after the set" [ "${current:-"-1"}" -ge 1 ]
fi

result=$(checks_summary "graph device tests"); status=$?
echo "$result" | tee -a "$summary"
[ "$status" -eq 0 ]  # the script's status (not `exit`: shellcheck 0.9 then takes every function for unreachable)
