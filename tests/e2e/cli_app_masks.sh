#!/usr/bin/env bash
# `gpupart list` with a program that chooses its own masks (libgpupart.so; registry layout 5), played by a
# demo worker (`gpupart demo start --app-masks`): the table's marker and the lines under it, --json's
# app_masks and app_effective, the CSV fields, and the effective sets following an operator's `set`.
#   cli_app_masks.sh PATH/TO/gpupart WORK_DIR
set -u
gpupart=$1
work=$2
# shellcheck source-path=SCRIPTDIR source=../lib/checks.sh
. "$(dirname "$0")/../lib/checks.sh"
private_registry "$work"
trap '"$gpupart" demo stop > /dev/null 2>&1' EXIT  # no demo worker outlives the test
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

"$gpupart" demo start --app-masks --workers 2 --seconds 120 > "$work/start.txt"
check "the first worker plays a program with its own masks" contains "$work/start.txt" "choosing its own masks (libgpupart)"
for _ in $(seq 1 100); do [ "$(ls "$GPUPART_REGISTRY_DIR"/u*/*.slot 2> /dev/null | wc -l)" -eq 2 ] && break; sleep 0.05; done
sleep 0.3  # some launches on each of its masks

"$gpupart" list > "$work/list.txt"
llm=$(awk '/llm-serving/{print $1}' "$work/list.txt")
check "TPCS marks the program" matches "$work/list.txt" "^ +$llm .* 0-3,8-11,16-19,24-27,32-34,39-41,46-48,53-55,62-65 \+app "
check "the other worker is not marked" lacks "$work/list.txt" "4-5,12-13,20-21,28-29,35-36,42-43,49-50,56-57 +app"
check "the summary line" matches "$work/list.txt" "process $llm chooses its own masks \(libgpupart\): global 0-3,8-11,16-19,24-27 · 2 stream masks · [0-9]+ launches"
check "the operator's bound" contains "$work/list.txt" "(operator's mask 0-3,8-11,16-19,24-27,32-34,39-41,46-48,53-55,62-65):"
check "global: chosen and effective" contains "$work/list.txt" "global 0-3,8-11,16-19,24-27 → 0-3,8-11,16-19,24-27"
check "a stream inside the bound" contains "$work/list.txt" "stream 0x7f0000001000 0-3,8-11 → 0-3,8-11 · "
check "a stream outside the bound runs on the operator's mask" \
    contains "$work/list.txt" "stream 0x7f0000002000 4-7 → 0-3,8-11,16-19,24-27,32-34,39-41,46-48,53-55,62-65 (none inside the operator's mask: runs on it)"

"$gpupart" list --json > "$work/list.json"
check "json: app_masks in use" [ "$(json "$work/list.json" "[p['app_masks']['in_use'] for p in d['processes'] if p['pid']==$llm][0]")" = True ]
check "json: global as allowed set and raw disable mask" [ "$(json "$work/list.json" \
    "[(p['app_masks']['global']['tpcs'], p['app_masks']['global']['disable_mask']) for p in d['processes'] if p['pid']==$llm][0]")" \
    = "('0-3,8-11,16-19,24-27', '0xfffffffffffffffffffffffff0f0f0f0')" ]
check "json: two streams" [ "$(json "$work/list.json" "[len(p['app_masks']['streams']) for p in d['processes'] if p['pid']==$llm][0]")" = 2 ]
check "json: outside launches counted" [ "$(json "$work/list.json" "[p['app_masks']['outside_bound'] > 0 for p in d['processes'] if p['pid']==$llm][0]")" = True ]
check "json: effective per GPU" [ "$(json "$work/list.json" \
    "[[s['outside_bound'] for s in p['gpus'][0]['app_effective']['streams']] for p in d['processes'] if p['pid']==$llm][0]")" = "[False, True]" ]
check "json: a process without the API has null" [ "$(json "$work/list.json" "[p['app_masks'] for p in d['processes'] if p['pid']!=$llm][0]")" = None ]

"$gpupart" list --format csv,noheader --fields pid,app_masks,app_global,app_streams > "$work/list.csv"
check "csv: the app fields" contains "$work/list.csv" "$llm,yes,\"0-3,8-11,16-19,24-27\",2"

# Masks are TPC numbers: the operator's gpc0-3 (32 TPCs); the program chooses in numbers as a program using
# libgpupart.so does: global = the lowest 16 of its operator's TPCs (0-3,8-11,16-19,24-27, disable mask
# 0x...f0f0f0f0), the inside stream the lowest 8 (0-3,8-11), the outside stream the lowest 4 real TPCs outside
# its operator's mask (4-7: gpc4-7's first TPCs); gpc7 is 7,15,23,31,38,45,52,59,61.
# The operator moves the program to gpc6-7: its global choice has no TPC there any more, so it runs on gpc6-7.
"$gpupart" set "$llm" gpc7 --snapshot builtin:h200 > "$work/set.txt" 2>&1
check "the operator's set applies" [ $? -eq 0 ]
sleep 0.2
"$gpupart" list > "$work/after.txt"
check "the bound follows the operator" contains "$work/after.txt" "(operator's mask 7,15,23,31,38,45,52,59,61):"
check "the global choice is outside the new bound" contains "$work/after.txt" "global 0-3,8-11,16-19,24-27 → 7,15,23,31,38,45,52,59,61 (none inside the operator's mask: runs on it)"

# The worker translates its numbers through the map it is given (each TPC number's descriptor bit): a map that is
# not one-to-one onto its real TPCs is refused in one line, before it registers.
worker=${GPUPART_DEMO_WORKER:-$(dirname "$gpupart")/gpupart-demo-worker}
"$worker" --app-masks 0,0 badmap 0x1 0x3 5 > /dev/null 2> "$work/badmap.err"
check "a map naming one bit twice is refused" [ $? -eq 2 ]
"$worker" --app-masks 1 badmap 0x1 0x3 5 > /dev/null 2> "$work/badmap2.err"
check "a map that leaves a real TPC unnumbered is refused" [ $? -eq 2 ]
check "in one line that says what TPC_BITS must be" [ "$(cat "$work/badmap.err" "$work/badmap2.err" | wc -l)" -eq 2 ]
check "the line" contains "$work/badmap.err" "TPC_BITS must give each TPC number's descriptor bit"
check "the same line for the unnumbered TPC" contains "$work/badmap2.err" "every bit of REAL_TPCS_HEX once"
"$gpupart" list > "$work/after-badmap.txt"
check "nothing registered" lacks "$work/after-badmap.txt" "badmap"

checks_summary "cli_app_masks"
