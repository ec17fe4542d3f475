#!/usr/bin/env bash
# gpupart measure and gpupart plan with real demo workers whose simulated rate follows their TPCs
# (a compute-bound and a memory-bound kind): the TPCs a process had come back on every way a measurement
# ends (done, SIGINT, SIGTERM, SIGHUP, an idle process; after SIGKILL through `gpupart undo`), the two
# kinds are classed apart, and plans with feasible and infeasible targets, --apply as one undoable change.
#   measure_plan_end_to_end.sh PATH/TO/gpupart WORK_DIR
set -u
gpupart=$1
work=$2
# shellcheck source-path=SCRIPTDIR source=../lib/checks.sh
. "$(dirname "$0")/../lib/checks.sh"
private_registry "$work"  # never the machine's registry or the user's history
export XDG_STATE_HOME=$work/state  # curves go to $work/state/gpupart/curves
trap '"$gpupart" demo stop > /dev/null 2>&1; end_background_jobs' EXIT

tpcs_of() { "$gpupart" list --format csv --fields pid,tpcs | awk -F, -v pid="$1" '$1 == pid { gsub(/"/, ""); sub(/^[0-9]+,/, ""); print }'; }
entries() { "$gpupart" history --json | grep -c '"action"'; }
json_field() { python3 -c 'import json,sys; v=json.load(open(sys.argv[1])); [v:=v[k] for k in sys.argv[2].split(".")]; print(v)' "$1" "$2"; }
# Waits (up to 5 s) until the walk of a measure started in the background is journaled and under way.
await_walk() {
    for _ in $(seq 1 100); do grep -q '"walk"' "$GPUPART_JOURNAL" 2> /dev/null && [ "$(tpcs_of "$1")" != "$2" ] && return 0; sleep 0.05; done
    return 1
}

"$gpupart" demo start --workers 3 --seconds 600 --scaling compute,memory > "$work/demo.out"; rc=$?
check "demo start with --scaling exits 0" [ "$rc" -eq 0 ]
check "demo start says the kinds" contains "$work/demo.out" "compute-bound"
compute=$(awk '/llm-serving/{print $6}' "$work/demo.out" | tr -d '()')
memory=$(awk '/vision/{print $6}' "$work/demo.out" | tr -d '()')
linear=$(awk '/batch-train/{print $6}' "$work/demo.out" | tr -d '()')
compute_tpcs=$(tpcs_of "$compute")
memory_tpcs=$(tpcs_of "$memory")
check "the workers are listed" [ -n "$compute_tpcs" ] && [ -n "$memory_tpcs" ]

# A whole measurement: table, fit, class, curve saved, TPCs back, nothing left to undo.
"$gpupart" measure "$compute" --steps 4 --dwell 400 > "$work/measure.out" 2> "$work/measure.err"; rc=$?
check "measure exits 0" [ "$rc" -eq 0 ]
check "measure prints the table" contains "$work/measure.out" "  TPCS     RATE/s    TIME/UNIT"
check "measure says what the rate means" contains "$work/measure.out" "rate = kernel launches + CUDA graph replays per second"
check "measure says when it is no throughput" contains "$work/measure.out" "idle shows no GPU speed in it"
check "measure prints the fit" matches "$work/measure.out" '^fit: C\(m\) = a/m \+ b, a = .* \(R\^2 0\.9'
check "the compute-bound worker is compute-intensive" contains "$work/measure.out" "class: compute-intensive"
check "measure saves the curve" matches "$work/measure.out" "^curve saved to $work/state/gpupart/curves/curve-[0-9a-f]{16}\.json"
check "measure puts the TPCs back" [ "$(tpcs_of "$compute")" = "$compute_tpcs" ]
check "and says so" contains "$work/measure.out" "TPCs $compute_tpcs put back (walk #1, ended by #2: nothing left to undo)"
check "nothing on stderr" [ ! -s "$work/measure.err" ]
check "history holds the walk and its end" [ "$(entries)" -eq 2 ]
"$gpupart" undo > /dev/null 2> "$work/undo-nothing.err"; rc=$?
check "a finished walk leaves nothing to undo" [ "$rc" -eq 1 ]
check "and undo says so" contains "$work/undo-nothing.err" "nothing to undo"

"$gpupart" measure "$memory" --steps 4 --dwell 400 --json > "$work/memory.json"; rc=$?
check "measure --json exits 0" [ "$rc" -eq 0 ]
check "measure --json is pure JSON" python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$work/memory.json"
check "the memory-bound worker is memory-intensive" [ "$(json_field "$work/memory.json" class.intensity)" = "memory" ]
check "measure --json says it put the TPCs back" [ "$(json_field "$work/memory.json" restored)" = "True" ]
check "with its walk's journal entry" [ "$(json_field "$work/memory.json" journal_id)" = "3" ]
check "and four steps" [ "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["steps"]))' "$work/memory.json")" = 4 ]
check "the memory worker's TPCs are back" [ "$(tpcs_of "$memory")" = "$memory_tpcs" ]

# Stopped by a signal mid-walk: the TPCs come back, nothing is saved, exit 1 with one line saying why.
for signal in INT TERM HUP; do
    "$gpupart" measure "$compute" --steps 6 --dwell 2000 --no-save > "$work/sig-$signal.out" 2> "$work/sig-$signal.err" &
    measuring=$!
    check "SIG$signal: the walk started" await_walk "$compute" "$compute_tpcs"
    kill -"$signal" "$measuring"
    wait "$measuring"; rc=$?
    check "SIG$signal: measure exits 1" [ "$rc" -eq 1 ]
    check "SIG$signal: the TPCs are back" [ "$(tpcs_of "$compute")" = "$compute_tpcs" ]
    check "SIG$signal: it says it was stopped" contains "$work/sig-$signal.err" "stopped by SIG$signal"
    check "SIG$signal: in one line" lines "$work/sig-$signal.err" 1
    check "SIG$signal: and that the TPCs are back" contains "$work/sig-$signal.out" "TPCs $compute_tpcs put back"
    check "SIG$signal: no fit from half a walk" lacks "$work/sig-$signal.out" "fit: C(m)"
    "$gpupart" undo > /dev/null 2>&1; rc=$?
    check "SIG$signal: nothing left to undo" [ "$rc" -eq 1 ]
    mv "$GPUPART_JOURNAL" "$work/history-$signal.jsonl"  # the next await_walk looks for a new walk
done

# SIGKILL mid-walk: nothing can run in gpupart, so the TPCs stay where the walk was; `gpupart undo` puts them back.
# Killed after a step that is not journaled (the second mask), the case the walk's journal entry is for.
"$gpupart" measure "$memory" --steps 6 --dwell 500 > /dev/null 2>&1 &
measuring=$!
check "SIGKILL: the walk started" await_walk "$memory" "$memory_tpcs"
first_step=$(tpcs_of "$memory")
for _ in $(seq 1 100); do [ "$(tpcs_of "$memory")" != "$first_step" ] && break; sleep 0.05; done
check "SIGKILL: the walk is past its journaled first step" [ "$(tpcs_of "$memory")" != "$first_step" ]
kill -KILL "$measuring"
wait "$measuring" 2> /dev/null
check "SIGKILL: the TPCs are not back" [ "$(tpcs_of "$memory")" != "$memory_tpcs" ]
"$gpupart" undo > "$work/undo-kill.out" 2>&1; rc=$?
check "SIGKILL: gpupart undo exits 0" [ "$rc" -eq 0 ]
check "SIGKILL: undo puts the TPCs back" [ "$(tpcs_of "$memory")" = "$memory_tpcs" ]
check "SIGKILL: undo is journaled as the walk's undo" contains "$work/undo-kill.out" "applied as #2"
"$gpupart" history > "$work/history-kill.out"
check "SIGKILL: history says the walk was put back" contains "$work/history-kill.out" "put back by its undo below"
mv "$GPUPART_JOURNAL" "$work/history-kill.jsonl"

# An idle process (stopped) never applies a mask: measure says it is idle and puts the TPCs back.
kill -STOP "$linear"
linear_tpcs=$(tpcs_of "$linear")
"$gpupart" measure "$linear" --steps 3 --dwell 200 > "$work/idle.out" 2> "$work/idle.err"; rc=$?
kill -CONT "$linear"
check "idle: measure exits 1" [ "$rc" -eq 1 ]
check "idle: it says the process is idle" contains "$work/idle.err" "made no kernel launch in 5.0 s after its TPCs changed: it is idle"
check "idle: the TPCs are back" [ "$(tpcs_of "$linear")" = "$linear_tpcs" ]

"$gpupart" measure "$linear" --floor 200 > /dev/null 2> "$work/floor.err"; rc=$?
check "a floor above the TPCs is refused" [ "$rc" -eq 1 ]
check "in one line saying what to do" contains "$work/floor.err" "fewer than the floor of 200: lower --floor"

# plan: feasible targets, a preview without --apply, --apply as one undoable change, and a profile.
"$gpupart" plan --target "$compute=50%" "$memory=100" --output-profile "$work/planned.json" > "$work/plan.out" 2> "$work/plan.err"; rc=$?
check "plan exits 0" [ "$rc" -eq 0 ]
check "plan meets both targets" [ "$(grep -cE ' yes +[0-9]' "$work/plan.out")" -eq 2 ]
check "plan says every target is met" contains "$work/plan.out" "every target is met"
check "plan leaves the linear worker's TPCs alone" contains "$work/plan.out" "the other 9 are held by processes outside the plan"
check "plan without --apply changes nothing" [ "$(tpcs_of "$compute")" = "$compute_tpcs" ]
check "and shows what --apply would do" contains "$work/plan.out" "dry run: nothing applied"
"$gpupart" profile apply "$work/planned.json" --dry-run > "$work/profile.out" 2>&1; rc=$?
check "plan writes a profile that profile apply takes" [ "$rc" -eq 0 ]
check "with the planned TPCs for both" [ "$(grep -c '^would arm: profile planned' "$work/profile.out")" -eq 2 ]
"$gpupart" plan --target "$compute=50%" "$memory=100" --json > "$work/plan.json"; rc=$?
check "plan --json exits 0" [ "$rc" -eq 0 ]
check "plan --json: feasible" [ "$(json_field "$work/plan.json" feasible)" = "True" ]
check "plan --json: not applied" [ "$(json_field "$work/plan.json" applied)" = "False" ]
compute_target=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["processes"][0]["target_rate"])' "$work/plan.json")
# "50%" is half the rate alone on the whole GPU's 66 TPCs (what the app shows as "Alone /s"), though the plan
# shares out only the 57 the linear worker leaves: from the fit measure printed (a in ms x TPC, b in ms).
alone=$(sed -nE 's|^fit: C\(m\) = a/m \+ b, a = ([0-9.]+) ms x TPC, b = ([0-9.]+) ms.*|\1 \2|p' "$work/measure.out")
check "plan: 50% is half the rate alone on all 66 TPCs" python3 -c 'import sys; a, b = map(float, sys.argv[1].split()); want = 0.5 * 1000 / (a / 66 + b); sys.exit(not abs(float(sys.argv[2]) - want) <= 0.01 * want)' "$alone" "$compute_target"
launches_of() { "$gpupart" list --format csv --fields pid,launches | awk -F, -v pid="$1" '$1 == pid { print $2 }'; }
# The rate over 2 s, as measure counts it (the demo worker launches only; no graphs).
rate_of() { local a b; a=$(launches_of "$1"); sleep 2; b=$(launches_of "$1"); echo $(((b - a) / 2)); }
before=$(entries)
"$gpupart" plan --target "$compute=50%" "$memory=100" --apply > "$work/apply.out" 2>&1; rc=$?
check "plan --apply exits 0" [ "$rc" -eq 0 ]
check "plan --apply is one journal entry" [ "$(entries)" -eq $((before + 1)) ]
check "plan --apply prints the change as set does" contains "$work/apply.out" "process $compute (gpupart-demo-worker llm-serving"
check "the compute worker got its planned TPCs" [ "$(tpcs_of "$compute")" != "$compute_tpcs" ]
sleep 0.3  # the next launches apply the masks
check "the compute worker meets its target (within 5%)" python3 -c 'import sys; sys.exit(not float(sys.argv[1]) >= 0.95 * float(sys.argv[2]))' "$(rate_of "$compute")" "$compute_target"
check "the memory worker meets its target (within 5%)" [ "$(rate_of "$memory")" -ge 95 ]
"$gpupart" undo > /dev/null 2>&1; rc=$?
check "undo reverts the plan" [ "$rc" -eq 0 ] && [ "$(tpcs_of "$compute")" = "$compute_tpcs" ] && [ "$(tpcs_of "$memory")" = "$memory_tpcs" ]

before=$(entries)
"$gpupart" plan --target "$compute=95%" "$memory=170" --apply > "$work/infeasible.out" 2> "$work/infeasible.err"; rc=$?
check "infeasible targets: exit 1" [ "$rc" -eq 1 ]
check "infeasible targets: the reason, naming the seed" contains "$work/infeasible.out" "the targets cannot all be met: "
check "infeasible targets: what is closest" matches "$work/infeasible.err" "ask for at most [0-9.]+% of them"
check "infeasible targets: one line on stderr" lines "$work/infeasible.err" 1
check "infeasible targets: nothing applied" [ "$(entries)" -eq "$before" ] && [ "$(tpcs_of "$compute")" = "$compute_tpcs" ]

# Every TPC held by a process outside the plan: why in one line (who holds them, what to do), not a GPU of 0 TPCs.
linear_before=$(tpcs_of "$linear")
"$gpupart" set "$linear" all > /dev/null 2>&1
check "all held: the linear worker holds every TPC" [ "$(tpcs_of "$linear")" = "0-65" ]
"$gpupart" plan --target "$compute=50%" > /dev/null 2> "$work/all-held.err"; rc=$?
check "all held: exit 1" [ "$rc" -eq 1 ]
check "all held: says so" contains "$work/all-held.err" "nothing to plan: all 66 TPCs of GPU GPU-00000000-0000-0000-0000-000000000001 are held by processes outside the plan"
check "all held: names who holds them" contains "$work/all-held.err" "$linear holds 0-65 (gpupart-demo-worker batch-train"
check "all held: says what to do" contains "$work/all-held.err" "give some back (\`gpupart set PID\` with fewer TPCs)"
check "all held: one line" lines "$work/all-held.err" 1
check "all held: not the partitioner's words" lacks "$work/all-held.err" "cannot be partitioned"
"$gpupart" set "$linear" "$linear_before" > /dev/null 2>&1

"$gpupart" plan --target "$linear=10" > /dev/null 2> "$work/unmeasured.err"; rc=$?
check "a process with no curve: exit 1" [ "$rc" -eq 1 ]
check "a process with no curve: says to measure it" contains "$work/unmeasured.err" "run \`gpupart measure $linear\` first"
"$gpupart" plan --target "$compute=fast" > /dev/null 2> "$work/bad-target.err"; rc=$?
check "a malformed target: exit 1 and what a target is" [ "$rc" -eq 1 ] && contains "$work/bad-target.err" "PID=RATE"

checks_summary measure_plan_end_to_end
