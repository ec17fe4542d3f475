#!/usr/bin/env bash
# The gpupart CLI as a user runs it: outputs, exit codes, and one-line errors that change nothing.
#   cli_end_to_end.sh PATH/TO/gpupart WORK_DIR
set -u
gpupart=$1
work=$2
rm -rf "$work" && mkdir -p "$work"
export GPUPART_REGISTRY_DIR=$work/registry GPUPART_JOURNAL=$work/history.jsonl  # never the machine's or the user's
trap '"$gpupart" demo stop > /dev/null 2>&1' EXIT  # no demo worker outlives the test
# shellcheck source-path=SCRIPTDIR source=../lib/checks.sh
. "$(dirname "$0")/../lib/checks.sh"  # check, contains, lines, checks_summary

# topology on the built-in H200 (CI has no GPU)
"$gpupart" topology > "$work/topology.txt" 2> "$work/topology.err"; rc=$?
check "topology exits 0" [ "$rc" -eq 0 ]
check "topology says which snapshot" contains "$work/topology.txt" "snapshot: builtin:h200 ("
check "topology says why" contains "$work/topology.txt" "showing the built-in recorded H200"
check "topology counts" contains "$work/topology.txt" "66 TPCs, 132 SMs, 8 GPCs, 62 holes"
# rows name TPC numbers: gpc6 starts with TPC 6 (descriptor bit 54), then 30 and 51
check "topology floorplan" contains "$work/topology.txt" "gpc6      9   18   TPC        6      30      51"

"$gpupart" topology --json > "$work/topology.json"; rc=$?
check "topology --json exits 0" [ "$rc" -eq 0 ]
check "topology --json summary" contains "$work/topology.json" '"tpcs": 66'
check "topology --json builtin" contains "$work/topology.json" '"builtin": true'
check "topology --json: no TPC of undetermined GPC" contains "$work/topology.json" '"undetermined_gpc_tpcs": ""'
# The same H200 as a source without the driver's floorplan leaves it: bits 75, 78, 81, 83 (TPCs 62-65) of no GPC.
"$gpupart" export --json "$work/h200.json" --snapshot builtin:h200 2> /dev/null
sed -E '/"mask_bit": (75|78|81|83),/{n;s/"gpc": 0,/"gpc": null,/;n;s/"slot": [0-9]+,/"slot": null,/}' "$work/h200.json" > "$work/partly.json"
"$gpupart" topology --snapshot "$work/partly.json" > "$work/partly.txt"; rc=$?
check "topology of a partly known floorplan exits 0" [ "$rc" -eq 0 ]
check "topology counts the TPCs of undetermined GPC" contains "$work/partly.txt" "66 TPCs, 132 SMs, 8 GPCs (+4 TPCs of undetermined GPC), 62 holes"
"$gpupart" topology --snapshot "$work/partly.json" --json > "$work/partly.json.out"
check "topology --json undetermined" contains "$work/partly.json.out" '"undetermined_gpc_tpcs": "62-65"'

# mask parse: numbers are TPC numbers; descriptor bits (bits:0x...) have holes, which are dropped and said
"$gpupart" mask parse 0-8 > "$work/numbers.txt"; rc=$?
check "mask parse of numbers exits 0" [ "$rc" -eq 0 ]
check "mask parse of numbers keeps them" contains "$work/numbers.txt" "tpcs  0-8"
check "mask parse says their descriptor bits" contains "$work/numbers.txt" "bits  bits:0x8040201008040203 (launch descriptor)"
"$gpupart" mask parse bits:0x1ff > "$work/mask.txt"; rc=$?
check "mask parse exits 0" [ "$rc" -eq 0 ]
check "mask parse normalises" contains "$work/mask.txt" "tpcs  0,8,16,24"
check "mask parse reports holes" contains "$work/mask.txt" "note  dropped descriptor bits 4-8: no TPC there (holes)"
"$gpupart" mask parse "8 tpcs" --json > "$work/mask.json"; rc=$?
check "mask parse --json exits 0" [ "$rc" -eq 0 ]
check "mask parse --json places a count" contains "$work/mask.json" '"tpcs": "0,8,16,24,62-65"'
check "mask parse --json whole gpcs" contains "$work/mask.json" '"gpc0"'

"$gpupart" mask parse bits:0x1f0 > "$work/holes.out" 2> "$work/holes.err"; rc=$?
check "mask of holes is refused" [ "$rc" -eq 1 ]
check "mask of holes: one line" lines "$work/holes.err" 1
check "mask of holes: message" contains "$work/holes.err" "gpupart: mask 'bits:0x1f0' selects no real TPC on NVIDIA H200: descriptor bits 4-8 are holes"
check "mask of holes: nothing on stdout" [ ! -s "$work/holes.out" ]
"$gpupart" mask parse 64-70 > "$work/none.out" 2> "$work/none.err"; rc=$?
check "TPC numbers the GPU lacks are refused" [ "$rc" -eq 1 ]
check "TPC numbers the GPU lacks: one line" lines "$work/none.err" 1
check "TPC numbers the GPU lacks: message" contains "$work/none.err" "which NVIDIA H200 does not have (its TPCs are 0-65"
check "TPC numbers the GPU lacks: nothing on stdout" [ ! -s "$work/none.out" ]

"$gpupart" mask parse "gpc9" 2> "$work/gpc.err" > /dev/null; rc=$?
check "unknown gpc refused" [ "$rc" -eq 1 ]
check "unknown gpc: one line" lines "$work/gpc.err" 1

"$gpupart" mask parse "" 2> "$work/empty.err" > /dev/null; rc=$?
check "empty mask refused" [ "$rc" -eq 1 ]
check "empty mask: message" contains "$work/empty.err" "gpupart: mask is empty"

# export, then read the export back
"$gpupart" export --json "$work/h200.json" 2> "$work/export.err"; rc=$?
check "export exits 0" [ "$rc" -eq 0 ]
"$gpupart" topology --snapshot "$work/h200.json" > "$work/topology2.txt"; rc=$?
check "exported file loads" [ "$rc" -eq 0 ]
check "exported file has the same floorplan" diff <(tail -n +2 "$work/topology.txt") <(tail -n +2 "$work/topology2.txt")

# a malformed snapshot: one line naming file and field
sed 's/"version": 2/"version": 7/' "$work/h200.json" > "$work/v7.json"
"$gpupart" topology --snapshot "$work/v7.json" > "$work/v7.out" 2> "$work/v7.err"; rc=$?
check "unknown version refused" [ "$rc" -eq 1 ]
check "unknown version: one line naming file and field" contains "$work/v7.err" "gpupart: snapshot $work/v7.json: field version: 7 is not supported"
check "unknown version: one line" lines "$work/v7.err" 1
check "unknown version: nothing printed" [ ! -s "$work/v7.out" ]

# export --png/--svg: drawn by gpupart-render (the GUI's painter) where this build has Qt; one line where not
if [ -x "$(dirname "$gpupart")/gpupart-render" ]; then
    "$gpupart" export --png "$work/plan.png" --svg "$work/plan.svg" 2> "$work/render.err"; rc=$?
    check "export --png --svg exits 0" [ "$rc" -eq 0 ]
    check "the PNG is a PNG" [ "$(head -c 8 "$work/plan.png" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ]
    check "the SVG is an SVG" contains "$work/plan.svg" "<svg"
    check "the SVG has the tiles' text" contains "$work/plan.svg" "SM 124"
    check "export says what it wrote" contains "$work/render.err" "wrote $work/plan.png (floorplan of NVIDIA H200, builtin:h200)"
    cp "$work/plan.png" "$work/plan-before.png"
    "$gpupart" export --png "$work/plan.png" --snapshot "$work/missing.json" 2> "$work/render-bad.err"; rc=$?
    check "export --png of a missing snapshot fails" [ "$rc" -eq 1 ]
    check "and leaves the old picture" cmp -s "$work/plan.png" "$work/plan-before.png"
    "$gpupart" export --png /nonexistent-dir/plan.png 2> "$work/render-dir.err"; rc=$?
    check "export --png to a missing directory fails" [ "$rc" -eq 1 ]
    check "in one line" lines "$work/render-dir.err" 1
    check "and names the file" contains "$work/render-dir.err" "/nonexistent-dir/plan.png: cannot write the floorplan image"
else
    "$gpupart" export --png "$work/plan.png" 2> "$work/render.err"; rc=$?
    check "export --png without Qt fails" [ "$rc" -eq 1 ]
    check "in one line" lines "$work/render.err" 1
    check "and says it needs gpupart-render (package gpupart-gui)" contains "$work/render.err" "package gpupart-gui"
fi
"$gpupart" export 2> "$work/export-nothing.err"; rc=$?
check "export with nothing to write fails" [ "$rc" -eq 1 ]
check "and says what it needs" contains "$work/export-nothing.err" "say what to write"

# export onto an existing file from a bad snapshot leaves the file as it was
cp "$work/h200.json" "$work/keep.json"
"$gpupart" export --json "$work/keep.json" --snapshot "$work/v7.json" 2> /dev/null; rc=$?
check "failed export exits non-zero" [ "$rc" -eq 1 ]
check "failed export changed nothing" cmp -s "$work/h200.json" "$work/keep.json"

"$gpupart" topology --gpu 3 2> "$work/gpu.err" > /dev/null; rc=$?
check "bad --gpu refused" [ "$rc" -eq 1 ]
check "bad --gpu: message" contains "$work/gpu.err" "gpupart: --gpu 3: snapshot builtin:h200 has GPU 0"

"$gpupart" frobnicate > /dev/null 2>&1; rc=$?
check "unknown subcommand refused" [ "$rc" -ne 0 ]

# `demo start 2>&1 | cat` ends when demo start does: once registered, the workers let go of the caller's
# stderr (before, the pipe stayed open for their whole life, here 60 s)
timeout 15 bash -c '"$1" demo start --seconds 60 2>&1 | cat' piped "$gpupart" > "$work/demo-piped.out"; rc=$?
check "demo start | cat returns before the workers end" [ "$rc" -eq 0 ]
check "demo start | cat shows the workers" [ "$(grep -c '^started demo worker' "$work/demo-piped.out")" -eq 3 ]
"$gpupart" demo stop > /dev/null 2>&1
for _ in $(seq 1 100); do [ -z "$(ls "$GPUPART_REGISTRY_DIR"/u*/*.slot 2> /dev/null)" ] && break; sleep 0.05; done
check "demo stop ends the piped demo's workers" [ -z "$(ls "$GPUPART_REGISTRY_DIR"/u*/*.slot 2> /dev/null)" ]

# the simulated workload: real processes in the real registry, following `gpupart set`
"$gpupart" demo start --seconds 60 > "$work/demo.out"; rc=$?
check "demo start exits 0" [ "$rc" -eq 0 ]
check "demo start starts three workers" [ "$(grep -c '^started demo worker' "$work/demo.out")" -eq 3 ]
for _ in $(seq 1 50); do [ "$(ls "$GPUPART_REGISTRY_DIR"/u*/*.slot 2> /dev/null | wc -l)" -eq 3 ] && break; sleep 0.05; done
"$gpupart" list > "$work/demo-list.txt"
check "demo workers are listed" [ "$(grep -c 'simulated workload, no GPU' "$work/demo-list.txt")" -eq 3 ]
check "demo workers hold gpc0-3" contains "$work/demo-list.txt" " 0-3,8-11,16-19,24-27,32-34,39-41,46-48,53-55,62-65 "
pid=$(awk '/llm-serving/{print $1}' "$work/demo-list.txt")
"$gpupart" set "$pid" gpc1 --snapshot builtin:h200 > "$work/demo-set.out"; rc=$?
check "set moves a demo worker" [ "$rc" -eq 0 ]
# A set to the mask it has changes nothing: refused (exit 1, id and reference), never journaled,
# so the next undo undoes the real change, not an empty entry
cp "$GPUPART_JOURNAL" "$work/history-before"
"$gpupart" set "$pid" gpc1 --snapshot builtin:h200 > "$work/same-set.out" 2> "$work/same-set.err"; rc=$?
check "set to the current mask is refused" [ "$rc" -eq 1 ]
check "the refusal names its id" contains "$work/same-set.err" "already has TPCs 1,9,17,25,32,39,46,53: nothing to change for it [no-change; controller]; nothing changed"
check "the refusal is not journaled" cmp -s "$work/history-before" "$GPUPART_JOURNAL"
"$gpupart" check --snapshot builtin:h200 > "$work/check.out" 2>&1
check "check prints ids and references" contains "$work/check.out" "[no-mps; Bakita & Anderson, RTAS 2024, rule R4]"
sleep 0.3  # a few simulated launches later
"$gpupart" list --json > "$work/demo-list.json"
check "the worker applies its new mask" contains "$work/demo-list.json" '"applied_tpcs": "1,9,17,25,32,39,46,53"'
check "nothing is pending" lacks "$work/demo-list.json" '"pending": true'
# The same again changes nothing: refused in one line, exit 1, and nothing journaled.
"$gpupart" history --json > "$work/history-before.json"
"$gpupart" set "$pid" gpc1 --snapshot builtin:h200 > "$work/demo-noop.out" 2> "$work/demo-noop.err"; rc=$?
check "a set to the current mask exits 1" [ "$rc" -eq 1 ]
check "and says there is nothing to change" contains "$work/demo-noop.err" "already has TPCs 1,9,17,25,32,39,46,53: nothing to change"
"$gpupart" history --json > "$work/history-after.json"
check "and journals nothing" cmp -s "$work/history-before.json" "$work/history-after.json"
"$gpupart" demo stop > "$work/demo-stop.out"; rc=$?
check "demo stop exits 0" [ "$rc" -eq 0 ]
check "demo stop stops three" contains "$work/demo-stop.out" "stopped 3 demo workers"
for _ in $(seq 1 50); do [ -z "$(ls "$GPUPART_REGISTRY_DIR"/u*/*.slot 2> /dev/null)" ] && break; sleep 0.05; done
check "demo workers removed their slots" [ -z "$(ls "$GPUPART_REGISTRY_DIR"/u*/*.slot 2> /dev/null)" ]

checks_summary cli_end_to_end
