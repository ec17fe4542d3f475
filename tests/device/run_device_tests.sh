#!/usr/bin/env bash
# Device tests for the shim and `gpupart run/set/list/mps`, on a real H200 (run through the `device`
# tool after tests/device/stage.sh; CI cannot run them). Usage: run_device_tests.sh CARRY_DIR OUT_DIR
# Every process it starts is ended, MPS included, also on failure.
set -u
# shellcheck source-path=SCRIPTDIR source=device_env.sh
. "$(dirname "$0")/device_env.sh" "$1" "$2" gpupart-devtest  # bin, out, gp, GPUPART_*
# shellcheck source-path=SCRIPTDIR source=../lib/checks.sh
. "$(dirname "$0")/../lib/checks.sh"  # check, checks_summary
checks_verbose=1  # "PASS NAME" / "FAIL NAME" on stdout
export CUDA_MPS_PIPE_DIRECTORY=/tmp/gpupart-mps CUDA_MPS_LOG_DIRECTORY=/tmp/gpupart-mps-log
# This GPU's live topology, probed below and exported to a file every user of the test reads: masks are
# kept per GPU UUID (registry layout 4), so a recording of another GPU (builtin:h200 has no UUID) would
# reach no launch here. The probe result goes to a private cache, so that the RM-reader tests below still
# see a machine whose users have not probed it.
snap=()
started=()
cleanup() {
    for pid in "${started[@]}"; do kill -9 "$pid" 2>/dev/null; done
    "$gp" mps stop > /dev/null 2>&1
    rm -rf "$GPUPART_REGISTRY_DIR" /tmp/gpupart-devtest-live.json
}
trap cleanup EXIT
# The slot files of every user (layout 3: $GPUPART_REGISTRY_DIR/u<uid>/<pid>-<start>.slot); the user directories
# and the rules tables stay, so listing the root is not enough.
slots() { find "$GPUPART_REGISTRY_DIR" -name '*.slot' 2>/dev/null; }

nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee "$out/gpu.txt"
mkdir -p "$out/probe-cache"
XDG_CACHE_HOME="$out/probe-cache" "$gp" probe > "$out/probe.txt" 2>&1 || { echo "gpupart probe failed:"; cat "$out/probe.txt"; }
live=/tmp/gpupart-devtest-live.json  # where the other user of section 6 can read it too
XDG_CACHE_HOME="$out/probe-cache" "$gp" export --json "$live" > /dev/null && chmod 0644 "$live" && cp "$live" "$out/live.json"
snap=(--snapshot "$live")
gpc1=$(sms_of gpc1); gpc6=$(sms_of gpc6)
gpc1_tpcs=$("$gp" mask parse gpc1 "${snap[@]}" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["tpcs"])')

echo "== 1. an unmodified program under gpupart run lands only on the allowed SMs (no MPS)"
"$bin/gpupart-dev-smid" --blocks 4224 --launches 2 > "$out/unmasked.txt" 2>&1
check "unmasked run reaches all 132 SMs" grep -q "launch 1 sms 132 " "$out/unmasked.txt"
"$gp" run --tpcs gpc1 "${snap[@]}" -- "$bin/gpupart-dev-smid" --blocks 4224 --launches 5 > "$out/run-gpc1.txt" 2>&1
cat "$out/run-gpc1.txt"
check "gpupart run --tpcs gpc1: every launch on exactly gpc1's 16 SMs" launches_on "$out/run-gpc1.txt" 0 4 "$gpc1"
check "the process removed its slot at exit" [ -z "$(slots)" ]

echo "== 2. gpupart set moves a running process at its next launch"
resume=$out/resume
"$gp" run --tpcs gpc1 "${snap[@]}" -- "$bin/gpupart-dev-smid" --blocks 4224 --launches 6 --pause-after 3 --resume-file "$resume" > "$out/set.txt" 2>&1 &
started+=($!)
wait_for_line "$out/set.txt" PAUSED
pid=$(awk '/^pid /{print $2}' "$out/set.txt")
"$gp" list "${snap[@]}" | tee "$out/list-before.txt"  # the probe's map is in the snapshot: masks as TPC numbers
"$gp" set "$pid" gpc6 "${snap[@]}" | tee "$out/set-output.txt"
touch "$resume"
wait "${started[-1]}"
cat "$out/set.txt"
"$gp" list --keep-exited --json > "$out/list-after.json"
check "launches before the set ran on gpc1" launches_on "$out/set.txt" 0 2 "$gpc1"
check "launches after the set ran on gpc6" launches_on "$out/set.txt" 3 5 "$gpc6"
check "list showed the process with its mask" grep -q " $gpc1_tpcs " "$out/list-before.txt"

echo "== 3. a CUDA graph uploaded before gpupart set follows it from its next replay (docs/cuda-graphs.md; graph_tests.sh has the rest)"
rm -f "$resume"
"$gp" run --tpcs gpc1 "${snap[@]}" -- "$bin/gpupart-dev-smid" --blocks 4224 --graph --launches 6 --pause-after 3 --resume-file "$resume" > "$out/graph.txt" 2>&1 &
started+=($!)
wait_for_line "$out/graph.txt" PAUSED
pid=$(awk '/^pid /{print $2}' "$out/graph.txt")
"$gp" set "$pid" gpc6 "${snap[@]}" > /dev/null
touch "$resume"; wait "${started[-1]}"
cat "$out/graph.txt"
check "graph launches before the set ran on gpc1" launches_on "$out/graph.txt" 0 2 "$gpc1"
check "graph launches after the set ran on gpc6" launches_on "$out/graph.txt" 3 5 "$gpc6"

echo "== 4. a CUDA-free program under the shim is untouched"
"$gp" run --tpcs gpc1 "${snap[@]}" -- "$bin/gpupart-dev-nocuda" > "$out/nocuda.txt" 2>&1; rc=$?
cat "$out/nocuda.txt"
check "CUDA-free program exits 0 with its output" [ "$rc" -eq 0 ]
check "CUDA-free program computed its result" grep -q "ok 500000500000" "$out/nocuda.txt"
check "CUDA-free program registered nothing" [ -z "$(slots)" ]

echo "== 5. under MPS, disjoint partitions run side by side and each is confined (checked by timing)"
half_a="0-32"; half_b="33-65"  # TPC numbers (TPC k = SMs 2k and 2k+1), as gpupart prints them: half of the 66 each
"$gp" mps start | tee "$out/mps.txt"
"$gp" mps status | tee -a "$out/mps.txt"
spin=("$bin/gpupart-dev-spin" --spin-ms 100 --repeat 3)
"${spin[@]}" > "$out/mps-alone-unmasked.txt" 2>&1
"$gp" run --tpcs "$half_a" "${snap[@]}" -- "${spin[@]}" > "$out/mps-alone-half.txt" 2>&1
"$gp" run --tpcs "$half_a" "${snap[@]}" -- "${spin[@]}" > "$out/mps-pair-a.txt" 2>&1 &
a=$!; started+=($a)
"$gp" run --tpcs "$half_b" "${snap[@]}" -- "${spin[@]}" > "$out/mps-pair-b.txt" 2>&1 &
b=$!; started+=($b)
wait $a; wait $b
"$gp" mps stop | tee -a "$out/mps.txt"
for f in mps-alone-unmasked mps-alone-half mps-pair-a mps-pair-b; do echo "-- $f"; cat "$out/$f.txt"; done
ms() { awk '/^run 2 /{print $6}' "$1"; }
u=$(ms "$out/mps-alone-unmasked.txt"); h=$(ms "$out/mps-alone-half.txt"); pa=$(ms "$out/mps-pair-a.txt"); pb=$(ms "$out/mps-pair-b.txt")
echo "one-wave kernel: unconfined ${u} ms, half alone ${h} ms, pair ${pa} / ${pb} ms"
ratio() { python3 -c "import sys; print(abs(float(sys.argv[1])/float(sys.argv[2]) - 2) < 0.3)" "$1" "$2"; }
check "half of the TPCs alone takes ~2x (mask enforced under MPS)" [ "$(ratio "$h" "$u")" = True ]
check "client A of a disjoint pair takes ~2x" [ "$(ratio "$pa" "$u")" = True ]
check "client B of a disjoint pair takes ~2x" [ "$(ratio "$pb" "$u")" = True ]

echo "== 6. kernel-enforced permissions: another user cannot move a process; its owner and root can"
as_nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
rm -f "$resume"
"$gp" run --tpcs gpc1 "${snap[@]}" -- "$bin/gpupart-dev-smid" --blocks 4224 --launches 4 --pause-after 2 --resume-file "$resume" > "$out/perm-root.txt" 2>&1 &
started+=($!)
wait_for_line "$out/perm-root.txt" PAUSED
pid=$(awk '/^pid /{print $2}' "$out/perm-root.txt")
"${as_nobody[@]}" env LD_LIBRARY_PATH="$LD_LIBRARY_PATH" GPUPART_REGISTRY_DIR="$GPUPART_REGISTRY_DIR" "$gp" set "$pid" gpc6 "${snap[@]}" > "$out/perm-nobody.out" 2> "$out/perm-nobody.err"; rc=$?
cat "$out/perm-nobody.err"
lines=$(wc -l < "$out/perm-nobody.err")
check "another user is refused with one line" [ "$rc" -eq 1 -a "$lines" -eq 1 ]
check "the refusal names the owner" grep -q "belongs to root" "$out/perm-nobody.err"
touch "$resume"; wait "${started[-1]}"
check "the refused change changed nothing" launches_on "$out/perm-root.txt" 2 3 "$gpc1"
# The other user cannot look inside $OUT: its resume file lives in a directory it may read.
shared_dir=$(mktemp -d /tmp/gpupart-devtest.XXXXXX); chmod 755 "$shared_dir"; resume=$shared_dir/resume
"${as_nobody[@]}" env LD_LIBRARY_PATH="$LD_LIBRARY_PATH" GPUPART_REGISTRY_DIR="$GPUPART_REGISTRY_DIR" GPUPART_SHIM="$GPUPART_SHIM" \
    "$gp" run --tpcs gpc1 "${snap[@]}" -- "$bin/gpupart-dev-smid" --blocks 4224 --launches 4 --pause-after 2 --resume-file "$resume" > "$out/perm-user.txt" 2>&1 &
started+=($!)
wait_for_line "$out/perm-user.txt" PAUSED
pid=$(awk '/^pid /{print $2}' "$out/perm-user.txt")
"$gp" list "${snap[@]}" | grep -E "^ *$pid " | tee "$out/perm-list.txt"
check "the user's process is listed as theirs" grep -q "nobody" "$out/perm-list.txt"
"$gp" set "$pid" gpc6 "${snap[@]}" > /dev/null; rc=$?
check "root (admin) may move another user's process" [ "$rc" -eq 0 ]
touch "$resume"; wait "${started[-1]}"
check "the user's process moved to gpc6" launches_on "$out/perm-user.txt" 2 3 "$gpc6"
rm -rf "$shared_dir"

echo "== 7. a profile applied before two MPS clients start confines both as it says (timing, %smid is virtualised)"
export XDG_CONFIG_HOME=$out/config GPUPART_JOURNAL=$out/history.jsonl
cat > "$out/halves.json" <<JSON
{"format": "gpupart-profile", "version": 2, "name": "halves", "description": "two spin clients, one half each",
 "rules": [
  {"match": {"exe": "gpupart-dev-spin", "cmdline": "*--repeat 3*"}, "tpcs": "$half_a"},
  {"match": {"exe": "gpupart-dev-spin", "cmdline": "*--repeat 4*"}, "tpcs": "$half_b"}
 ]}
JSON
"$gp" mps start > /dev/null
"$gp" profile apply "$out/halves.json" "${snap[@]}" | tee "$out/profile-apply.txt"
check "the profile armed both rules" [ "$(grep -c '^armed: ' "$out/profile-apply.txt")" -eq 2 ]
# Started by hand with the shim preloaded, not by `gpupart run`: the armed profile alone decides.
for repeat in 3 4; do
    env LD_PRELOAD="$GPUPART_SHIM" CUDA_DEVICE_MAX_CONNECTIONS=8 "$bin/gpupart-dev-spin" --spin-ms 100 --repeat "$repeat" \
        > "$out/profile-client-$repeat.txt" 2>&1 &
    started+=($!)
done
sleep 0.5
"$gp" list "${snap[@]}" | tee "$out/profile-list.txt"
wait "${started[-1]}"; wait "${started[-2]}"
"$gp" profile disarm > /dev/null
"$gp" mps stop > /dev/null
ca=$(ms "$out/profile-client-3.txt"); cb=$(awk '/^run 3 /{print $6}' "$out/profile-client-4.txt")
echo "profile clients: ${ca} ms and ${cb} ms (unconfined ${u} ms)"
check "client A (profile rule 1) takes ~2x" [ "$(ratio "$ca" "$u")" = True ]
check "client B (profile rule 2) takes ~2x" [ "$(ratio "$cb" "$u")" = True ]
check "client A was listed with half A" grep -qF -- " $half_a " "$out/profile-list.txt"
check "client B was listed with half B" grep -qF -- " $half_b " "$out/profile-list.txt"

echo "== 8. the RM-control reader and the live topology (rm_reader_tests.sh)"
"$(dirname "$0")/rm_reader_tests.sh" "$1" "$out/rm-reader" "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | awk '{print tolower($2)}')"
check "RM reader device tests pass" [ $? -eq 0 ]

echo "== 9. a truncated slot on the real driver: a process whose slot is truncated mid-run keeps running and keeps its mask"
resume=$out/resume-truncate; rm -f "$resume"
"$gp" run --tpcs gpc1 "${snap[@]}" -- "$bin/gpupart-dev-smid" --blocks 4224 --launches 6 --pause-after 3 --resume-file "$resume" > "$out/truncate.txt" 2> "$out/truncate.err" &
started+=($!)
wait_for_line "$out/truncate.txt" PAUSED
pid=$(awk '/^pid /{print $2}' "$out/truncate.txt")
slot=$(find "$GPUPART_REGISTRY_DIR" -name "$pid-*.slot")
echo "truncating $slot"
truncate -s 0 "$slot"
"$gp" list > "$out/truncate-list.txt" 2>&1; list_rc=$?
"$gp" set "$pid" gpc6 "${snap[@]}" > "$out/truncate-set.txt" 2>&1; set_rc=$?
touch "$resume"; wait "${started[-1]}"; rc=$?
cat "$out/truncate.txt" "$out/truncate.err" "$out/truncate-list.txt" "$out/truncate-set.txt"
check "the process with a truncated slot exits 0 (no SIGBUS)" [ "$rc" -eq 0 ]
check "it ran all its launches" grep -q "^launch 5 " "$out/truncate.txt"
check "launches before the truncation ran on gpc1" launches_on "$out/truncate.txt" 0 2 "$gpc1"
check "launches after the truncation still ran on gpc1 (mask kept)" launches_on "$out/truncate.txt" 3 5 "$gpc1"
check "the shim said so on stderr, once" [ "$(grep -c "registry slot was truncated" "$out/truncate.err")" -eq 1 ]
check "gpupart list survived the truncated slot" [ "$list_rc" -le 1 ]
check "gpupart set refused the truncated slot in one line" [ "$set_rc" -ne 0 -a "$(wc -l < "$out/truncate-set.txt")" -eq 1 ]

checks_summary "device tests"
