#!/usr/bin/env bash
# The REAL libgpupart-shim.so, preloaded into real processes, driven by a TEST DOUBLE of the CUDA driver
# (fake_libcuda.c and fake_graphs.c, built as fake-driver/libcuda.so.1): what the shim writes into launch
# descriptors, what it publishes in its registry slot, how `gpupart set` moves it, and how slots end
# (CUDA graph execs: graph_end_to_end.sh). No GPU, no CUDA; the real driver is exercised by tests/device on a GPU
# machine.
#   shim_end_to_end.sh GPUPART SHIM_SO FAKE_DRIVER_DIR SHIM_HOST WORK_DIR
set -u
# shellcheck source-path=SCRIPTDIR source=shim_test_lib.sh
. "$(dirname "$0")/shim_test_lib.sh" "$@"  # arguments, the private registry, cleanup, slot and process helpers
# Masks given to gpupart are TPC numbers; the shim writes launch-descriptor bits. TPCs 0,8,16,24 are descriptor
# bits 0-3 of the built-in H200 (`gpupart topology --sources` prints the map), gpc1 is
# TPCs 1,9,17,25,32,39,46,53 = bits 9-16, gpc6 TPCs 6,14,22,30,37,44,51,58,60 = bits 54-62.
Q=0,8,16,24          # half of gpc0, as TPC numbers (descriptor bits 0-3)
TPCS_0_3=0xfffffff0  # the disable mask of bits 0-3 (complement of the allowed bits), lowest word
GPC1=0xfffe01ff      # complement of bits 9-16
# TPCs 0,8,16,24 are half of the built-in H200's gpc0 (0,8,16,24,62-65): `gpupart run --tpcs $Q` warns once, before
# the command starts, in the command's stderr. The shim itself must add nothing to it.
HALF_GPC0="gpupart: warning: the new process gets only 4 of gpc0's 8 TPCs: a partition of whole GPCs shares no GPC with others and interferes less [partial-gpc; Bakita & Anderson, RTAS 2023 (SE-packed)]"
only_the_half_gpc0_warning() { [ "$(cat "$1")" = "$HALF_GPC0" ]; }

# ---- 1. A process that never loads libcuda is untouched: no slot, normal behaviour -------------------
env LD_PRELOAD="$shim" GPUPART_TPCS=$G0=0xf GPUPART_REAL_TPCS=$G0=0xf "$host" pid > "$work/plain.out" 2> "$work/plain.err"; rc=$?
check "no libcuda: exits 0" [ "$rc" -eq 0 ]
check "no libcuda: runs normally" matches "$work/plain.out" '^pid [0-9]+$'
check "no libcuda: one line out" lines "$work/plain.out" 1
check "no libcuda: nothing on stderr" [ ! -s "$work/plain.err" ]
check "no libcuda: no slot" no_slot_files

# The same under `gpupart run`, checking the shim really is in the process while it runs.
start plain-run "$gpupart" run --tpcs $Q --snapshot builtin:h200 -- "$host" pid ready:"$work/plain-run.ready" \
    wait:"$work/plain-run.go"
pid=$started
check "run without libcuda: reaches its pause" await "$work/plain-run.ready" "$pid"
check "run without libcuda: the shim is preloaded" grep -qF -- "$(basename "$shim")" "/proc/$pid/maps"
check "run without libcuda: no slot" no_slot_files
touch "$work/plain-run.go"
wait "$pid"; rc=$?
check "run without libcuda: exits 0" [ "$rc" -eq 0 ]
check "run without libcuda: its own pid" line_is "$work/plain-run.out" 1 "pid $pid"
check "run without libcuda: nothing on stderr but gpupart's warning" only_the_half_gpc0_warning "$work/plain-run.err"
check "run without libcuda: still no slot" no_slot_files

# ---- 2. gpupart run --tpcs 0,8,16,24 (bits 0-3): masks per descriptor version, list, set -----------
start main "$gpupart" run --tpcs $Q --snapshot builtin:h200 -- "$host" load:"$fake" \
    launch:0x40 launch:0x30 launch:0x41 launch:0x50 ready:"$work/main.1" wait:"$work/go.1" \
    launch:0x40 ready:"$work/main.2" wait:"$work/go.2" \
    launch:0x40 ready:"$work/main.3" wait:"$work/go.3"
main=$started
out=$work/main.out
check "run: reaches its first pause" await "$work/main.1" "$main"
check "run: loads the test double" line_is "$out" 1 "loaded"
check "run: V04 (0x40) gets the 128-bit mask of bits 0-3 and the enable bit" line_is "$out" 2 "$(v04_mask $TPCS_0_3)"
check "run: 0x30 gets the 64-bit mask at 84, 304 untouched" line_is "$out" 3 \
    "launch version=0x30 callback=1 word0=$F mask=$F,$F,$F,$F low=$TPCS_0_3,0xffffffff"
check "run: unknown 0x41 untouched" line_is "$out" 4 "$(untouched 0x41)"
check "run: unknown 0x50 untouched" line_is "$out" 5 "$(untouched 0x50)"
check "run: registered" has_slot "$main"

"$gpupart" list --json > "$work/list1.json" 2> "$work/list1.err"; rc=$?
check "list --json exits 0" [ "$rc" -eq 0 ]
check "list: the process" contains "$work/list1.json" "\"pid\": $main,"
check "list: one process" [ "$(grep -c '"pid":' "$work/list1.json")" -eq 1 ]
check "list: alive" contains "$work/list1.json" '"liveness": "alive"'
check "list: its command" contains "$work/list1.json" "\"command\": \"$host load:$fake launch:0x40"
check "list: partitioned" contains "$work/list1.json" '"partitioned": true'
check "list: requested 0,8,16,24" contains "$work/list1.json" '"tpcs": "0,8,16,24"'
check "list: generation 1" contains "$work/list1.json" '"generation": 1,'
check "list: 4 launches" contains "$work/list1.json" '"launches": 4,'
check "list: 2 masked launches" contains "$work/list1.json" '"masked_launches": 2,'
check "list: no errors" contains "$work/list1.json" '"errors": 0,'
check "list: unsupported descriptor state" contains "$work/list1.json" '"state_code": 2,'
check "list: unsupported descriptor text" contains "$work/list1.json" \
    '"state": "unsupported launch descriptor version: not partitioned"'
check "list: last descriptor version 0x50" contains "$work/list1.json" '"descriptor_version": 80,'
check "list: mask applied" contains "$work/list1.json" '"mask_applied": true,'
check "list: applied 0,8,16,24" contains "$work/list1.json" '"applied_tpcs": "0,8,16,24"'

"$gpupart" set "$main" gpc1 --snapshot builtin:h200 > "$work/set1.out" 2> "$work/set1.err"; rc=$?
check "set gpc1 exits 0" [ "$rc" -eq 0 ]
check "set gpc1 says what changed" contains "$work/set1.out" "process $main ("
check "set gpc1: 0,8,16,24 -> gpc1" contains "$work/set1.out" "TPCs 0,8,16,24 -> 1,9,17,25,32,39,46,53 (8 TPCs, 16 SMs)"
check "set gpc1: journaled" contains "$work/set1.out" "applied as #1"
touch "$work/go.1"
check "run: reaches its second pause" await "$work/main.2" "$main"
check "set gpc1: the next launch carries gpc1" line_is "$out" 8 "$(v04_mask $GPC1)"

"$gpupart" list --json > "$work/list2.json"; rc=$?
check "list after set exits 0" [ "$rc" -eq 0 ]
check "list after set: requested gpc1" contains "$work/list2.json" '"tpcs": "1,9,17,25,32,39,46,53"'
check "list after set: generation 2" contains "$work/list2.json" '"generation": 2,'
check "list after set: applied generation 2" contains "$work/list2.json" '"applied_generation": 2,'
check "list after set: applied gpc1" contains "$work/list2.json" '"applied_tpcs": "1,9,17,25,32,39,46,53"'
# The stamps a script times a change with: the control block's write, then the launch that adopted it.
check "list after set: applied at or after the write" python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))["processes"][0]
written = p["requested"]["written_realtime_ns"]; applied = p["gpus"][0]["shim"]["applied_realtime_ns"]
sys.exit(0 if 0 < written <= applied else 1)' "$work/list2.json"
check "list after set: active" contains "$work/list2.json" '"state_code": 1,'
check "list after set: not pending" contains "$work/list2.json" '"pending": false'
check "list after set: 5 launches" contains "$work/list2.json" '"launches": 5,'
check "list after set: 3 masked launches" contains "$work/list2.json" '"masked_launches": 3,'

"$gpupart" set "$main" bits:0x1f0 --snapshot builtin:h200 > "$work/set2.out" 2> "$work/set2.err"; rc=$?
check "set to holes refused" [ "$rc" -eq 1 ]
check "set to holes: one line" lines "$work/set2.err" 1
check "set to holes: message" contains "$work/set2.err" "gpupart: mask 'bits:0x1f0' selects no real TPC on NVIDIA H200: descriptor bits 4-8 are holes"
check "set to holes: nothing on stdout" [ ! -s "$work/set2.out" ]
touch "$work/go.2"
check "run: reaches its third pause" await "$work/main.3" "$main"
check "set to holes: the next launch still carries gpc1" line_is "$out" 11 "$(v04_mask $GPC1)"
"$gpupart" list --json > "$work/list3.json"
check "set to holes: generation unchanged" contains "$work/list3.json" '"generation": 2,'

touch "$work/go.3"
wait "$main"; rc=$?
check "run: exits 0" [ "$rc" -eq 0 ]
check "run: every step ran" lines "$out" 13
check "run: the shim said nothing" only_the_half_gpc0_warning "$work/main.err"
check "run: normal exit removes the slot" no_slot "$main"

# ---- 3. A mask with no real TPC is never applied --------------------------------------------------
start refused env LD_PRELOAD="$shim" GPUPART_TPCS=$G0=0x10 GPUPART_REAL_TPCS=$G0=0xf "$host" load:"$fake" \
    launch:0x40 launch:0x30 launch:0x40 ready:"$work/refused.ready" wait:"$work/refused.go"
pid=$started
check "holes only: reaches its pause" await "$work/refused.ready" "$pid"
check "holes only: V04 untouched" line_is "$work/refused.out" 2 "$(untouched 0x40)"
check "holes only: 0x30 untouched" line_is "$work/refused.out" 3 "$(untouched 0x30)"
check "holes only: still untouched" line_is "$work/refused.out" 4 "$(untouched 0x40)"
"$gpupart" list --json > "$work/refused.json"; rc=$?
check "holes only: list exits 0" [ "$rc" -eq 0 ]
check "holes only: listed" contains "$work/refused.json" "\"pid\": $pid,"
# Descriptor bit 4 is a hole of the H200, no TPC number: the request is shown as the bits it is.
check "holes only: requested bit 4" contains "$work/refused.json" '"tpcs": "bits:0x10"'
check "holes only: refused state" contains "$work/refused.json" '"state_code": 4,'
check "holes only: refused text" contains "$work/refused.json" \
    '"state": "last requested mask refused (no real TPC): previous mask kept"'
check "holes only: no mask applied" contains "$work/refused.json" '"mask_applied": false,'
check "holes only: refused once" contains "$work/refused.json" '"refused_masks": 1'
check "holes only: 3 launches" contains "$work/refused.json" '"launches": 3,'
check "holes only: none masked" contains "$work/refused.json" '"masked_launches": 0,'
touch "$work/refused.go"
wait "$pid"; rc=$?
check "holes only: exits 0" [ "$rc" -eq 0 ]
check "holes only: slot removed at exit" no_slot "$pid"

# ---- 4. A killed process leaves its slot; gpupart list reclaims it ---------------------------------
start killed env LD_PRELOAD="$shim" GPUPART_TPCS=$G0=0xf GPUPART_REAL_TPCS=$G0=0xf "$host" load:"$fake" launch:0x40 \
    ready:"$work/killed.ready" wait:"$work/never"
pid=$started
check "killed: reaches its pause" await "$work/killed.ready" "$pid"
check "killed: masked" line_is "$work/killed.out" 2 "$(v04_mask $TPCS_0_3)"
slot=$(slot_of "$pid")
check "killed: registered" [ -n "$slot" ]
kill -KILL "$pid"
wait "$pid" 2> /dev/null; rc=$?  # (bash would report "Killed")
check "killed: died of SIGKILL" [ "$rc" -eq 137 ]
check "killed: slot left behind" present "$slot"
"$gpupart" list --keep-exited --json > "$work/killed.json"; rc=$?
check "killed: list --keep-exited exits 0" [ "$rc" -eq 0 ]
check "killed: listed" contains "$work/killed.json" "\"pid\": $pid,"
check "killed: shown as exited" contains "$work/killed.json" '"liveness": "exited"'
check "killed: --keep-exited reclaims nothing" contains "$work/killed.json" '"reclaimed_exited_slots": 0,'
check "killed: slot still there" present "$slot"
"$gpupart" list > "$work/killed.txt"; rc=$?
check "killed: list exits 0" [ "$rc" -eq 0 ]
check "killed: list reclaims it" contains "$work/killed.txt" "reclaimed 1 exited slot"
check "killed: slot removed" absent "$slot"
check "killed: registry empty" no_slot_files
check "killed: nothing left to list" contains "$work/killed.txt" "no partitioned process"

# ---- 5. Profiles: running processes now, processes that start later through the armed rules --------
export XDG_CONFIG_HOME=$work/config  # a private profile store: never the user's
uid=$(id -u)
v04_full() { echo "launch version=0x40 callback=1 word0=0xda5a5a5a mask=$1 low=$F,$F"; }
GPC6_FULL=0xffffffff,0x803fffff,0xffffffff,0xffffffff  # complement of bits 54-62
start before env LD_PRELOAD="$shim" "$host" load:"$fake" launch:0x40 ready:"$work/before.1" wait:"$work/before.go1" \
    launch:0x40 ready:"$work/before.2" wait:"$work/before.go2" launch:0x40
before=$started
check "profile: a process registered without a mask" await "$work/before.1" "$before"
check "profile: its launch is untouched" line_is "$work/before.out" 2 "$(untouched 0x40)"
cat > "$work/e2e.json" <<JSON
{"format": "gpupart-profile", "version": 2, "name": "e2e", "description": "end-to-end test",
 "rules": [
  {"match": {"pid": $before}, "tpcs": "gpc1"},
  {"match": {"exe": "$(basename "$host")"}, "tpcs": "gpc6"}
 ]}
JSON
"$gpupart" profile apply "$work/e2e.json" --snapshot builtin:h200 > "$work/apply.out" 2> "$work/apply.err"; rc=$?
check "profile apply: exits 0" [ "$rc" -eq 0 ]
check "profile apply: moves the running process" contains "$work/apply.out" "process $before ("
check "profile apply: to gpc1" contains "$work/apply.out" "TPCs all -> 1,9,17,25,32,39,46,53 (8 TPCs, 16 SMs)"
check "profile apply: journaled" contains "$work/apply.out" "applied as #"
check "profile apply: arms the exe rule" contains "$work/apply.out" "armed: profile e2e line 4: processes that start later matching it get TPCs 6,14,22,30,37,44,51,58,60"
check "profile apply: a pid rule is not armed" contains "$work/apply.out" "not armed: profile e2e line 3: matches pid $before"
check "profile apply: rules table written" present "$registry/u$uid/rules"
touch "$work/before.go1"
check "profile: the running process reaches its next launch" await "$work/before.2" "$before"
check "profile: its next launch carries gpc1" line_is "$work/before.out" 5 "$(v04_mask $GPC1)"

start later env LD_PRELOAD="$shim" "$host" load:"$fake" launch:0x40 ready:"$work/later.ready" wait:"$work/later.go"
later=$started
check "profile: a process started after apply registers" await "$work/later.ready" "$later"
check "profile: its first launch carries gpc6" line_is "$work/later.out" 2 "$(v04_full $GPC6_FULL)"
"$gpupart" check --snapshot builtin:h200 > "$work/check.out"; rc=$?
check "check: exits 0" [ "$rc" -eq 0 ]
check "check: counts both processes" contains "$work/check.out" "2 partitioned processes"
check "check: warns that they run without MPS" contains "$work/check.out" "run without MPS"
"$gpupart" check --snapshot builtin:h200 --json > "$work/check.json"; rc=$?
check "check --json: exits 0" [ "$rc" -eq 0 ]
check "check --json: the no-mps finding by id" contains "$work/check.json" '"id": "no-mps"'
"$gpupart" list --json > "$work/later.json"; rc=$?
check "profile: list exits 0" [ "$rc" -eq 0 ]
check "profile: list names the rule it started with" contains "$work/later.json" "\"start_rule\": \"profile e2e rule at line 4 (uid $uid)\""
check "profile: list shows its tpcs" contains "$work/later.json" '"tpcs": "6,14,22,30,37,44,51,58,60"'

"$gpupart" undo --snapshot builtin:h200 > "$work/undo.out" 2> "$work/undo.err"; rc=$?
check "undo: exits 0" [ "$rc" -eq 0 ]
check "undo: names what it reverts" contains "$work/undo.out" "process $before ("
check "undo: back to every TPC" contains "$work/undo.out" "TPCs 1,9,17,25,32,39,46,53 -> all"
check "undo: the profile's rules for later processes go with it" contains "$work/undo.out" "rules for processes that start later: profile e2e ("
check "undo: no rules armed any more" [ ! -e "$registry/u$uid/rules" ]
touch "$work/before.go2"
wait "$before"; rc=$?
check "undo: the process exits 0" [ "$rc" -eq 0 ]
check "undo: its next launch is untouched again" line_is "$work/before.out" 8 "$(untouched 0x40)"
"$gpupart" history > "$work/history.out"; rc=$?
check "history: exits 0" [ "$rc" -eq 0 ]
check "history: the apply" contains "$work/history.out" "profile apply e2e"
check "history: the undo" contains "$work/history.out" "undo #"

# A malformed profile: one line naming file, line and field; nothing applied, nothing armed.
printf '{"format": "gpupart-profile", "version": 2, "name": "bad", "description": "",\n "rules": [\n  {"match": {"exe": 7}, "tpcs": "gpc1"}\n ]}\n' > "$work/bad.json"
"$gpupart" profile apply "$work/bad.json" --snapshot builtin:h200 > "$work/bad.out" 2> "$work/bad.err"; rc=$?
check "bad profile: refused" [ "$rc" -eq 1 ]
check "bad profile: one line" lines "$work/bad.err" 1
check "bad profile: names file, line and field" contains "$work/bad.err" "$work/bad.json:3: field rules[0].match.exe"
check "bad profile: nothing armed" [ ! -e "$registry/u$uid/rules" ]

# Disarming is a journaled change like any other: undo arms the rules again.
cat > "$work/later-only.json" <<JSON
{"format": "gpupart-profile", "version": 2, "name": "later-only", "description": "",
 "rules": [ {"match": {"exe": "$(basename "$host")"}, "tpcs": "gpc6"} ]}
JSON
"$gpupart" profile apply "$work/later-only.json" --snapshot builtin:h200 > "$work/later-only.out" 2>&1; rc=$?
check "later-only profile: exits 0" [ "$rc" -eq 0 ]
check "later-only profile: arms onto nothing" contains "$work/later-only.out" "rules for processes that start later: no rules -> profile later-only (1 rule)"
"$gpupart" profile disarm > "$work/disarm.out"; rc=$?
check "disarm: exits 0" [ "$rc" -eq 0 ]
check "disarm: says what it disarms" contains "$work/disarm.out" "profile later-only (1 rule) -> no rules"
check "disarm: journaled" contains "$work/disarm.out" "applied as #"
check "disarm: rules table removed" absent "$registry/u$uid/rules"
env LD_PRELOAD="$shim" "$host" load:"$fake" launch:0x40 > "$work/after-disarm.out" 2>&1; rc=$?
check "disarm: a new process exits 0" [ "$rc" -eq 0 ]
check "disarm: a new process is not partitioned" line_is "$work/after-disarm.out" 2 "$(untouched 0x40)"
"$gpupart" profile disarm > "$work/disarm2.out"; rc=$?
check "disarm again: exits 0 with nothing to do" [ "$rc" -eq 0 ]
check "disarm again: says so" contains "$work/disarm2.out" "no profile rules of yours were armed"
"$gpupart" undo --snapshot builtin:h200 > "$work/undo-disarm.out" 2>&1; rc=$?
check "undo disarm: exits 0" [ "$rc" -eq 0 ]
check "undo disarm: the rules are back" present "$registry/u$uid/rules"
env LD_PRELOAD="$shim" "$host" load:"$fake" launch:0x40 > "$work/after-undo-disarm.out" 2>&1; rc=$?
check "undo disarm: a new process exits 0" [ "$rc" -eq 0 ]
check "undo disarm: a new process gets gpc6 again" line_is "$work/after-undo-disarm.out" 2 "$(v04_full $GPC6_FULL)"
"$gpupart" profile disarm > /dev/null
touch "$work/later.go"
wait "$later"

# ---- The environment gpupart run gives: 8 hardware queues for an MPS client only ------------------
# An MPS client gets 2 queues unless CUDA_DEVICE_MAX_CONNECTIONS says otherwise; without MPS the variable
# changes no queue and costs the start time. The daemon is "there" when its control endpoint is.
run_env() { "$gpupart" run --tpcs all --snapshot builtin:h200 -- env 2> /dev/null; }
mkdir -p "$work/mps-none" "$work/mps-up" && : > "$work/mps-up/control"
CUDA_MPS_PIPE_DIRECTORY=$work/mps-none run_env > "$work/env-nomps.txt"
check "run env without MPS: the shim is preloaded" grep -q '^LD_PRELOAD=.*libgpupart-shim' "$work/env-nomps.txt"
check "run env without MPS: no CUDA_DEVICE_MAX_CONNECTIONS" lacks "$work/env-nomps.txt" CUDA_DEVICE_MAX_CONNECTIONS=
CUDA_MPS_PIPE_DIRECTORY=$work/mps-up run_env > "$work/env-mps.txt"
check "run env with an MPS daemon: 8 connections" grep -qx 'CUDA_DEVICE_MAX_CONNECTIONS=8' "$work/env-mps.txt"
CUDA_DEVICE_MAX_CONNECTIONS=4 CUDA_MPS_PIPE_DIRECTORY=$work/mps-up run_env > "$work/env-mine.txt"
check "run env with an MPS daemon: the user's own choice is kept" grep -qx 'CUDA_DEVICE_MAX_CONNECTIONS=4' "$work/env-mine.txt"

checks_summary shim_end_to_end && rm -rf "$work"
[ "$failures" -eq 0 ]
