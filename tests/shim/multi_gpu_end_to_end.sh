#!/usr/bin/env bash
# Multi-GPU servers: the REAL libgpupart-shim.so and the REAL gpupart, with the TEST DOUBLE of
# the CUDA driver playing a machine of three GPUs of different floorsweeps (tests/fixtures/multi-gpu:
# the recorded H100 and H200 maps, and a board with TPC bits 0-3 fused off). Each GPU's mask reaches only
# that GPU's launches; a mask is validated against the GPU it is for; check, list, set, undo and profile
# rules work per GPU; CUDA_VISIBLE_DEVICES reorders ordinals without moving masks.
#   multi_gpu_end_to_end.sh GPUPART SHIM_SO FAKE_DRIVER_DIR SHIM_HOST WORK_DIR
set -u
# shellcheck source-path=SCRIPTDIR source=shim_test_lib.sh
. "$(dirname "$0")/shim_test_lib.sh" "$@"  # arguments, the private registry, cleanup, slot and process helpers

snapshot=$(dirname "$0")/../fixtures/multi-gpu/three-gpus.json
S=(--snapshot "$snapshot")
U0=GPU-e019853f-a4a4-3629-5365-9ff6caee6a2c  # GPU 0: the recorded H100
U1=GPU-258f535b-999d-058c-3642-767b7fb8d4f0  # GPU 1: the recorded H200
U2=GPU-3ecd459c-0b85-7603-9390-0000000000f3  # GPU 2: TPC bits 0-3 are holes there
export FAKE_CUDA_GPUS=$U0,$U1,$U2
# Masks name TPC numbers; the descriptors the shim writes carry bits. The TPCs on descriptor bits 9-16 and
# 18-25, by number on each GPU (`gpupart mask parse bits:0x1fe00 --snapshot FIXTURE --gpu N`): GPUs 0 and 1
# number them alike, GPU 2 (4 TPCs fused off) otherwise.
T9_16=1,9,17,25,32,39,46,53     # bits 9-16 on GPUs 0 and 1
T18_25=2,10,18,26,33,40,47,54   # bits 18-25 on GPUs 0 and 1
T9_16_G2=0,7,14,21,28,35,42,49  # bits 9-16 on GPU 2
M9_16=0xfffe01ff   # disable words (complement of the allowed descriptor bits 9-16), lowest word
M18_25=0xfc03ffff
json_field() {  # json_field FILE PYTHON-EXPRESSION-OF-d: prints it (d is the parsed file)
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"
}

# ---- 0. topology of every GPU ---------------------------------------------------------------------
"$gpupart" topology "${S[@]}" --all-gpus --json > "$work/topology.json"; rc=$?
check "topology --all-gpus --json exits 0" [ "$rc" -eq 0 ]
check "topology --all-gpus: every GPU, its own TPC count" [ "$(json_field "$work/topology.json" "[(g['gpu']['index'], g['summary']['tpcs']) for g in d['gpus']]")" = "[(0, 66), (1, 66), (2, 62)]" ]
"$gpupart" topology "${S[@]}" --all-gpus > "$work/topology.txt"
check "topology --all-gpus: three floorplans" [ "$(grep -c '^GPU [0-9]:' "$work/topology.txt")" -eq 3 ]

# ---- 1. run --gpu 1: GPU 1's launches only -------------------------------------------------------
start a "$gpupart" run "${S[@]}" --gpu 1 --tpcs "$T9_16" -- "$host" load:"$fake" \
    device:0 launch:0x40 device:1 launch:0x40 device:2 launch:0x40 thread:device:1+launch:0x40 \
    ready:"$work/a.1" wait:"$work/a.go1" device:0 launch:0x40 device:1 launch:0x40 ready:"$work/a.2" wait:"$work/a.go2"
a=$started
out=$work/a.out
check "run --gpu 1: reaches its first pause" await "$work/a.1" "$a"
check "run --gpu 1: a launch on GPU 0 is untouched" line_is "$out" 3 "$(untouched 0x40)"
check "run --gpu 1: a launch on GPU 1 carries bits 9-16" line_is "$out" 5 "$(v04_mask $M9_16)"
check "run --gpu 1: a launch on GPU 2 is untouched" line_is "$out" 7 "$(untouched 0x40)"
check "run --gpu 1: another thread on GPU 1 gets it too" line_is "$out" 9 "$(v04_mask $M9_16)"
check "run --gpu 1: says the other GPUs run unconfined" contains "$work/a.err" \
    "gpupart: confined on GPU 1 ($U1) only; other GPUs it opens run unconfined (--only shows it this GPU alone)"

"$gpupart" list "${S[@]}" --json > "$work/list-a.json"; rc=$?
check "list --json exits 0" [ "$rc" -eq 0 ]
# A process's GPUs are listed by UUID, sorted: U1 (258f...), U2 (3ecd...), U0 (e019...).
check "list: the process's GPUs by UUID" [ "$(json_field "$work/list-a.json" "[g['uuid'] for g in d['processes'][0]['gpus']]")" = "['$U1', '$U2', '$U0']" ]
check "list: GPU 1 partitioned $T9_16 (bits 9-16)" [ "$(json_field "$work/list-a.json" "[g['requested']['tpcs'] for g in d['processes'][0]['gpus']]")" = "['$T9_16', 'all', 'all']" ]
check "list: GPU 1 applied $T9_16" [ "$(json_field "$work/list-a.json" "d['processes'][0]['gpus'][0]['shim']['applied_tpcs']")" = "$T9_16" ]
check "list: GPUs 0 and 2 say they run unconfined (state 6)" [ "$(json_field "$work/list-a.json" "[g['shim']['state_code'] for g in d['processes'][0]['gpus']]")" = "[1, 6, 6]" ]
check "list: launches per GPU" [ "$(json_field "$work/list-a.json" "[g['shim']['launches'] for g in d['processes'][0]['gpus']]")" = "[2, 1, 1]" ]
"$gpupart" list "${S[@]}" --gpu "$U1" --format csv,noheader --fields pid,gpu,tpcs > "$work/list-a1.csv"
check "list --gpu UUID: one row, its GPU and mask" [ "$(cat "$work/list-a1.csv")" = "$a,$U1,\"$T9_16\"" ]
"$gpupart" list "${S[@]}" --format csv,noheader --fields gpu,tpcs > "$work/list-all.csv"
check "list: a row per GPU the process is on" [ "$(cat "$work/list-all.csv" | tr '\n' ' ')" = "$U1,\"$T9_16\" $U2,all $U0,all " ]
"$gpupart" list "${S[@]}" > "$work/list-a.txt"
check "list: a GPU column" matches "$work/list-a.txt" "^ +$a .* GPU-258f535b +$T9_16 "

# set without --gpu: the process is on three GPUs
"$gpupart" set "$a" 0-3 "${S[@]}" > "$work/set0.out" 2> "$work/set0.err"; rc=$?
check "set without --gpu on a 3-GPU process: refused" [ "$rc" -eq 1 ]
check "set without --gpu: one line naming the GPUs" [ "$(cat "$work/set0.err")" = "gpupart: process $a is on 3 GPUs ($U1, $U2, $U0): name one with --gpu" ]
# a mask validated against the GPU it is for: descriptor bits 0-3 are TPCs on GPU 0, holes on GPU 2; TPCs 62-65
# are GPU 0's, GPU 2 has 62 (0-61)
"$gpupart" set "$a" bits:0xf "${S[@]}" --gpu 2 > "$work/set2.out" 2> "$work/set2.err"; rc=$?
check "set bits:0xf on GPU 2 (holes there): refused" [ "$rc" -eq 1 ]
check "set bits:0xf on GPU 2: says they are holes" contains "$work/set2.err" "bits 0-3 are holes"
"$gpupart" set "$a" 62-65 "${S[@]}" --gpu 2 > "$work/set2n.out" 2> "$work/set2n.err"; rc=$?
check "set 62-65 on GPU 2 (TPCs it lacks): refused" [ "$rc" -eq 1 ]
check "set 62-65 on GPU 2: one line" lines "$work/set2n.err" 1
check "set 62-65 on GPU 2: says its TPCs are 0-61" contains "$work/set2n.err" "its TPCs are 0-61"
"$gpupart" set "$a" "$T18_25" "${S[@]}" --gpu 0 > "$work/set1.out" 2> "$work/set1.err"; rc=$?
check "set $T18_25 (bits 18-25) --gpu 0: applied" [ "$rc" -eq 0 ]
check "set --gpu 0: journaled" contains "$work/set1.out" "applied as #1"
touch "$work/a.go1"
check "run --gpu 1: reaches its second pause" await "$work/a.2" "$a"
check "set --gpu 0: the next GPU 0 launch carries bits 18-25" line_is "$out" 13 "$(v04_mask $M18_25)"
check "set --gpu 0: GPU 1 keeps its own bits 9-16" line_is "$out" 15 "$(v04_mask $M9_16)"
"$gpupart" list "${S[@]}" --json > "$work/list-b.json"
check "list after set: one generation for the process" [ "$(json_field "$work/list-b.json" "d['processes'][0]['requested']['generation']")" = "2" ]
check "list after set: each GPU its own mask" [ "$(json_field "$work/list-b.json" "[g['requested']['tpcs'] for g in d['processes'][0]['gpus']]")" = "['$T9_16', 'all', '$T18_25']" ]
"$gpupart" history --json > "$work/history.json"
check "history: the change's GPU" [ "$(json_field "$work/history.json" "d['entries'][-1]['changes'][0]['gpu']" 2> /dev/null)" = "$U0" ]
"$gpupart" undo "${S[@]}" --gpu 1 > "$work/undo1.out" 2> "$work/undo1.err"; rc=$?
check "undo --gpu 1 of a GPU 0 change: refused" [ "$rc" -eq 1 ]
check "undo on another GPU: names the change's GPU" contains "$work/undo1.err" "undo it with --gpu $U0"
"$gpupart" undo "${S[@]}" > "$work/undo.out" 2> "$work/undo.err"; rc=$?
check "undo without --gpu: on the change's GPU" [ "$rc" -eq 0 ]
"$gpupart" list "${S[@]}" --json > "$work/list-c.json"
check "undo: GPU 0 unconfined again, GPU 1 untouched" [ "$(json_field "$work/list-c.json" "[g['requested']['tpcs'] for g in d['processes'][0]['gpus']]")" = "['$T9_16', 'all', 'all']" ]
check "list: the process is active" [ "$(json_field "$work/list-c.json" "d['processes'][0]['shim']['state_code']")" = "1" ]
touch "$work/a.go2"
wait "$a"; rc=$?
check "run --gpu 1: exits 0" [ "$rc" -eq 0 ]

# ---- 2. check and placement consider only the processes on their GPU ------------------------------
start p "$gpupart" run "${S[@]}" --gpu 0 --tpcs gpc0-3 -- "$host" load:"$fake" device:0 launch:0x40 ready:"$work/p.1" wait:"$work/pq.go"
p=$started
check "process on GPU 0 starts" await "$work/p.1" "$p"
start q "$gpupart" run "${S[@]}" --gpu 1 --tpcs gpc0-3 -- "$host" load:"$fake" device:1 launch:0x40 ready:"$work/q.1" wait:"$work/pq.go"
q=$started
check "process on GPU 1 starts: no overlap with GPU 0's" await "$work/q.1" "$q"
check "GPU 1's start saw no overlap" lacks "$work/q.err" "overlap"
"$gpupart" check "${S[@]}" --gpu 1 --json > "$work/check1.json"
check "check --gpu 1: no overlap" [ "$(json_field "$work/check1.json" "len([f for f in d['findings'] if 'overlap' in f['id']])")" = "0" ]
check "check --gpu 1: only its own process" contains "$work/check1.json" '"processes": 1,'
"$gpupart" check "${S[@]}" --gpu 0 --json > "$work/check0.json"
check "check --gpu 0: only its own process" contains "$work/check0.json" '"processes": 1,'
check "check --gpu 0: no overlap" [ "$(json_field "$work/check0.json" "len([f for f in d['findings'] if 'overlap' in f['id']])")" = "0" ]
"$gpupart" set "$q" "8 tpcs" "${S[@]}" --dry-run > "$work/count.out" 2> "$work/count.err"; rc=$?
check "a count on GPU 1 fits beside its own process only" [ "$rc" -eq 0 ]
touch "$work/pq.go"
wait "$p" "$q"

# ---- 3. profile rules for GPU 1 reach only GPU 1 launches ------------------------------------------
cat > "$work/gpu1.json" << EOF
{"format": "gpupart-profile", "version": 2, "name": "gpu1-only", "description": "multi-GPU test",
 "rules": [{"match": {"exe": "$(basename "$host")"}, "gpu": 1, "tpcs": "$T18_25"}]}
EOF
"$gpupart" profile apply "$work/gpu1.json" "${S[@]}" --gpu 1 > "$work/apply.out" 2> "$work/apply.err"; rc=$?
check "profile apply --gpu 1: exits 0" [ "$rc" -eq 0 ]
env LD_PRELOAD="$shim" "$host" load:"$fake" device:0 launch:0x40 device:1 launch:0x40 > "$work/rule.out" 2> "$work/rule.err"; rc=$?
check "a later process: runs" [ "$rc" -eq 0 ]
check "the GPU 1 rule: GPU 0 launch untouched" line_is "$work/rule.out" 3 "$(untouched 0x40)"
check "the GPU 1 rule: GPU 1 launch carries bits 18-25" line_is "$work/rule.out" 5 "$(v04_mask $M18_25)"
"$gpupart" profile disarm > /dev/null 2>&1

# ---- 4. CUDA_VISIBLE_DEVICES: ordinals move, masks follow the UUID ---------------------------------
# (The fixture's GPUs are of different models: CUDA numbers them fastest first unless told bus order.)
env CUDA_VISIBLE_DEVICES=2,0 CUDA_DEVICE_ORDER=PCI_BUS_ID "$gpupart" run "${S[@]}" --gpu 0 --tpcs "$T9_16" -- "$host" load:"$fake" \
    device:0 launch:0x40 device:1 launch:0x40 > "$work/cvd.out" 2> "$work/cvd.err"; rc=$?
check "CUDA_VISIBLE_DEVICES=2,0: runs" [ "$rc" -eq 0 ]
check "CUDA_VISIBLE_DEVICES=2,0: ordinal 0 is GPU 2, untouched" line_is "$work/cvd.out" 3 "$(untouched 0x40)"
check "CUDA_VISIBLE_DEVICES=2,0: ordinal 1 is GPU 0, masked" line_is "$work/cvd.out" 5 "$(v04_mask $M9_16)"
"$gpupart" run "${S[@]}" --gpu 2 --only --tpcs "$T9_16_G2" -- "$host" load:"$fake" device:0 launch:0x40 device:1 \
    > "$work/only.out" 2> "$work/only.err"; rc=$?
check "--only: the process sees one GPU (device:1 fails)" [ "$rc" -eq 1 ]
check "--only: its ordinal 0 is GPU 2, masked" line_is "$work/only.out" 3 "$(v04_mask $M9_16)"
check "--only: says nothing about other GPUs" lacks "$work/only.err" "confined on GPU"

# ---- 4b. without --gpu, run confines the GPU the command will see, never one it cannot open ----------
cvd_run() {  # cvd_run NAME CUDA_VISIBLE_DEVICES [ENV...] -- RUN-ARGS: rc in $rc
    local name=$1 value=$2
    shift 2
    env CUDA_VISIBLE_DEVICES="$value" "$@" > "$work/$name.out" 2> "$work/$name.err"; rc=$?
}
cvd_run cvd1 1 CUDA_DEVICE_ORDER=PCI_BUS_ID "$gpupart" run "${S[@]}" --tpcs "$T9_16" -- "$host" load:"$fake" device:0 launch:0x40
check "CUDA_VISIBLE_DEVICES=1: runs" [ "$rc" -eq 0 ]
check "CUDA_VISIBLE_DEVICES=1: its only GPU (ordinal 0, GPU 1) is masked" line_is "$work/cvd1.out" 3 "$(v04_mask $M9_16)"
check "CUDA_VISIBLE_DEVICES=1: nothing said of other GPUs (it sees one)" lacks "$work/cvd1.err" "confined on GPU"
cvd_run cvd-uuid "$U2" "$gpupart" run "${S[@]}" --tpcs "$T9_16_G2" -- "$host" load:"$fake" device:0 launch:0x40
check "CUDA_VISIBLE_DEVICES=UUID: GPU 2 is masked" line_is "$work/cvd-uuid.out" 3 "$(v04_mask $M9_16)"
cvd_run cvd-prefix "${U2:0:12},$U0" "$gpupart" run "${S[@]}" --tpcs "$T9_16_G2" -- "$host" load:"$fake" \
    device:0 launch:0x40 device:1 launch:0x40
check "CUDA_VISIBLE_DEVICES=UUID prefix,UUID: its first GPU (GPU 2) is masked" line_is "$work/cvd-prefix.out" 3 "$(v04_mask $M9_16)"
check "CUDA_VISIBLE_DEVICES=UUID prefix,UUID: its second (GPU 0) is not" line_is "$work/cvd-prefix.out" 5 "$(untouched 0x40)"
check "CUDA_VISIBLE_DEVICES=two GPUs: says which one is confined" contains "$work/cvd-prefix.err" \
    "gpupart: confined on GPU 2 ($U2) only; other GPUs it opens run unconfined"
cvd_run cvd-mixed 1 "$gpupart" run "${S[@]}" --tpcs "$T9_16" -- "$host" load:"$fake" device:0 launch:0x40
check "CUDA_VISIBLE_DEVICES=1 on GPUs of different models, no bus order: refused" [ "$rc" -eq 1 ]
check "refused: one line saying why" lines "$work/cvd-mixed.err" 1
check "refused: names the way out" contains "$work/cvd-mixed.err" "CUDA_DEVICE_ORDER=PCI_BUS_ID"
check "refused: nothing started" lacks "$work/cvd-mixed.out" "launch"
cvd_run cvd-none "" "$gpupart" run "${S[@]}" --tpcs "$T9_16" -- "$host" load:"$fake" device:0 launch:0x40
check "CUDA_VISIBLE_DEVICES empty: refused" [ "$rc" -eq 1 ]
check "CUDA_VISIBLE_DEVICES empty: says the command sees no GPU" contains "$work/cvd-none.err" "lets the command see no GPU"
cvd_run cvd-hidden "$U2" "$gpupart" run "${S[@]}" --gpu 0 --tpcs "$T9_16" -- "$host" load:"$fake" device:0 launch:0x40
check "--gpu 0 hidden by CUDA_VISIBLE_DEVICES: refused" [ "$rc" -eq 1 ]
check "--gpu 0 hidden: says so" contains "$work/cvd-hidden.err" "which CUDA_VISIBLE_DEVICES=$U2 hides from the command"
check "--gpu 0 hidden: nothing started" lacks "$work/cvd-hidden.out" "launch"

# ---- 5. a driver that does not say which GPU launched: never another GPU's mask --------------------
start u env FAKE_CUDA_CTX_FAIL=1 "$gpupart" run "${S[@]}" --gpu 0 --tpcs "$T9_16" -- "$host" load:"$fake" launch:0x40 \
    ready:"$work/u.1" wait:"$work/u.go"
u=$started
check "unknown GPU: starts" await "$work/u.1" "$u"
check "unknown GPU: the launch is untouched" line_is "$work/u.out" 2 "$(untouched 0x40)"
"$gpupart" list "${S[@]}" --json > "$work/list-u.json"
check "unknown GPU: the process says so (state 7)" [ "$(json_field "$work/list-u.json" "d['processes'][0]['shim']['state_code']")" = "7" ]
touch "$work/u.go"
wait "$u"

checks_summary multi_gpu_end_to_end
