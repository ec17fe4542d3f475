#!/usr/bin/env bash
# gpupart for scripts, as nvidia-smi is used: the exit-code contract (0 ok, 1 refused or "no",
# 2 usage), --format csv with field lists, --json where a read command prints something, --version.
#   cli_scripting.sh PATH/TO/gpupart WORK_DIR
set -u
gpupart=$1
work=$2
rm -rf "$work" && mkdir -p "$work"
# Never the machine's registry, journal, profiles or GPUs: CI may run on a GPU machine.
export GPUPART_REGISTRY_DIR=$work/registry GPUPART_JOURNAL=$work/history.jsonl XDG_CONFIG_HOME=$work/config
mkdir -p "$work/sysfs-none"
export GPUPART_SYSFS_ROOT=$work/sysfs-none
trap '"$gpupart" demo stop > /dev/null 2>&1' EXIT
# shellcheck source-path=SCRIPTDIR source=../lib/checks.sh
. "$(dirname "$0")/../lib/checks.sh"

# --- usage errors: 2, in one line; --help and --version: 0
for args in "frobnicate" "" "list --bogus" "topology --gpu" "check --fail-on sometimes" "list --format xml" \
            "list --fields pid" "list --json --format csv" "profile show"; do
    # shellcheck disable=SC2086  # word splitting of the case is intended
    "$gpupart" $args > "$work/usage.out" 2> "$work/usage.err"; rc=$?
    check "usage error '$args' exits 2" [ "$rc" -eq 2 ]
    check "usage error '$args' is one line" lines "$work/usage.err" 1
    check "usage error '$args' says usage" contains "$work/usage.err" "gpupart: usage: "
    check "usage error '$args' prints nothing on stdout" [ ! -s "$work/usage.out" ]
done
# A --gpu that names no GPU is not a usage error: the command understood it and refuses (1), as for a PID.
"$gpupart" topology --snapshot builtin:h200 --gpu GPU-ffff > /dev/null 2> "$work/gpu.err"; rc=$?
check "--gpu naming no GPU exits 1" [ "$rc" -eq 1 ]
check "--gpu naming no GPU says which there are, in one line" bash -c "grep -q 'names no GPU' '$work/gpu.err' && [ \$(wc -l < '$work/gpu.err') -eq 1 ]"
"$gpupart" --help > /dev/null; rc=$?
check "--help exits 0" [ "$rc" -eq 0 ]
"$gpupart" list --format csv --fields pid,gpu_util > /dev/null 2> "$work/fields.err"; rc=$?
check "an unknown field is a usage error" [ "$rc" -eq 2 ]
check "which lists the known fields in one line" contains "$work/fields.err" "unknown field 'gpu_util': known fields are pid,start_time,uid,user,"
check "in one line" lines "$work/fields.err" 1
"$gpupart" mask parse bits:0x1f0 > /dev/null 2>&1; rc=$?  # descriptor bits 4-8: holes of the H200
check "a refused command exits 1" [ "$rc" -eq 1 ]

# --- --version: gpupart, registry layout, git id; a driver line only where a GPU is
"$gpupart" --version > "$work/version.txt"; rc=$?
check "--version exits 0" [ "$rc" -eq 0 ]
check "--version names gpupart and its git id" matches "$work/version.txt" '^gpupart [0-9]+\.[0-9]+\.[0-9]+ \(git [0-9a-z.-]+\)$'
check "--version names the registry layout" matches "$work/version.txt" '^registry layout [0-9]+$'
check "--version without a GPU has no driver line" lacks "$work/version.txt" "driver"
gpu=$work/sysfs-gpu/bus/pci/devices/0000:00:06.0
mkdir -p "$gpu" "$work/sysfs-gpu/module/nvidia"
echo 0x10de > "$gpu/vendor"; echo 0x2335 > "$gpu/device"; echo 0x030200 > "$gpu/class"
GPUPART_SYSFS_ROOT=$work/sysfs-gpu "$gpupart" --version > "$work/version-unloaded.txt"
check "--version says when the driver is not loaded" contains "$work/version-unloaded.txt" "nvidia kernel module is not loaded"
echo 580.159.04 > "$work/sysfs-gpu/module/nvidia/version"
GPUPART_SYSFS_ROOT=$work/sysfs-gpu "$gpupart" --version > "$work/version-gpu.txt"
check "--version names the driver and its branch" contains "$work/version-gpu.txt" "driver 580.159.04 (branch 580)"

# --- gpus --format csv (built-in H200)
"$gpupart" gpus --format csv > "$work/gpus.csv"; rc=$?
check "gpus --format csv exits 0" [ "$rc" -eq 0 ]
check "gpus csv header" [ "$(head -1 "$work/gpus.csv")" = "index,name,pci_bus_id,uuid,driver_version,tpcs,sms" ]
check "gpus csv row" matches "$work/gpus.csv" '^0,NVIDIA H200,[^,]*,[^,]*,[^,]*,66,132$'
"$gpupart" gpus --format csv,noheader --fields sms,index > "$work/gpus-nh.csv"
check "noheader and the fields in the order named" [ "$(cat "$work/gpus-nh.csv")" = "132,0" ]

# --- check: --format csv and --fail-on
"$gpupart" check --snapshot builtin:h200 --format csv > "$work/check.csv"; rc=$?
check "check --format csv exits 0" [ "$rc" -eq 0 ]
check "check csv header" [ "$(head -1 "$work/check.csv")" = "severity,id,rule,message" ]
"$gpupart" check --snapshot builtin:h200 --fail-on error > /dev/null; rc=$?
check "check --fail-on error with no error exits 0" [ "$rc" -eq 0 ]

# --- demo workers: list csv, check --fail-on, profile show/diff
"$gpupart" demo start --seconds 60 > /dev/null
for _ in $(seq 1 50); do [ "$(ls "$GPUPART_REGISTRY_DIR"/u*/*.slot 2> /dev/null | wc -l)" -eq 3 ] && break; sleep 0.05; done
"$gpupart" list --format csv,noheader --fields pid,user,tpcs,command > "$work/list.csv"; rc=$?
check "list --format csv exits 0" [ "$rc" -eq 0 ]
check "list csv has a row per worker" lines "$work/list.csv" 3
check "list csv quotes a mask with commas" matches "$work/list.csv" '^[0-9]+,[^,]+,"0-3,8-11,16-19,24-27,32-34,39-41,46-48,53-55,62-65","gpupart-demo-worker llm-serving \(simulated workload, no GPU\)"$'
"$gpupart" list --format csv | head -1 > "$work/list-header.csv"
check "list csv default header" [ "$(cat "$work/list-header.csv")" = "pid,user,liveness,gpu,tpcs,applied,launches,command" ]

"$gpupart" check --snapshot builtin:h200 --json > "$work/check.json"
if grep -qE '"severity": "(warning|error)"' "$work/check.json"; then expect=1; else expect=0; fi
"$gpupart" check --snapshot builtin:h200 --fail-on warning > /dev/null; rc=$?
check "check --fail-on warning is 1 exactly when a warning or error is found" [ "$rc" -eq "$expect" ]
grep -qE '"severity": "error"' "$work/check.json" && expect=1 || expect=0
"$gpupart" check --snapshot builtin:h200 --fail-on error --format csv > /dev/null; rc=$?
check "check --fail-on error is 1 exactly when an error is found" [ "$rc" -eq "$expect" ]

"$gpupart" profile save scripted --snapshot builtin:h200 > /dev/null; rc=$?
check "profile save exits 0" [ "$rc" -eq 0 ]
"$gpupart" profile show scripted --json > "$work/show.json"; rc=$?
check "profile show --json exits 0" [ "$rc" -eq 0 ]
check "profile show --json is pure JSON" python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$work/show.json"
"$gpupart" profile diff scripted --snapshot builtin:h200 > "$work/unarmed.txt"; rc=$?
check "profile diff of a profile saved but not applied exits 1 (its rules are not armed)" [ "$rc" -eq 1 ]
check "and says so" contains "$work/unarmed.txt" "~ rules for processes that start later: no rules -> profile scripted (3 rules)"
"$gpupart" profile apply scripted --snapshot builtin:h200 > /dev/null; rc=$?
check "profile apply exits 0" [ "$rc" -eq 0 ]
"$gpupart" profile diff scripted --snapshot builtin:h200 > "$work/diff.txt"; rc=$?
check "profile diff of the profile in effect exits 0" [ "$rc" -eq 0 ]
check "and says so" contains "$work/diff.txt" "as the profile says"
check "and shows no drift" lacks "$work/diff.txt" "~"
pid=$(awk -F, '/llm-serving/{print $1}' "$work/list.csv")
"$gpupart" set "$pid" gpc6 --snapshot builtin:h200 > /dev/null
"$gpupart" profile diff scripted --snapshot builtin:h200 > "$work/drift.txt"; rc=$?
check "profile diff on drift exits 1" [ "$rc" -eq 1 ]
check "and shows the drift" contains "$work/drift.txt" "~ process $pid"
"$gpupart" profile diff scripted --snapshot builtin:h200 --json > "$work/drift.json"; rc=$?
check "profile diff --json on drift exits 1" [ "$rc" -eq 1 ]
check "profile diff --json says drifted" contains "$work/drift.json" '"drifted": true'
"$gpupart" profile diff nosuchprofile --snapshot builtin:h200 > /dev/null 2>&1; rc=$?
check "profile diff of a missing profile exits 1" [ "$rc" -eq 1 ]
"$gpupart" demo stop > /dev/null

# --- mps status: 1 when MPS is down, 0 when up; the same answer as --json
"$gpupart" mps status --json > "$work/mps.json"; rc=$?
if grep -q '"running": true' "$work/mps.json"; then expect=0; else expect=1; fi
check "mps status exit code follows running" [ "$rc" -eq "$expect" ]

checks_summary cli_scripting
