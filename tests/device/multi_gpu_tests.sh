#!/usr/bin/env bash
# Device tests of per-GPU masks on the real driver, on every GPU of the machine: one GPU
# (H100/H200) or two (nvidia-h200-x2). gpupart-dev-multictx has two contexts on every GPU it sees and
# reports the SMs each launch ran on (%smid, physical without MPS).
#   multi_gpu_tests.sh CARRY_DIR OUT_DIR
set -u
# shellcheck source-path=SCRIPTDIR source=device_env.sh
. "$(dirname "$0")/device_env.sh" "$1" "$2" gpupart-multigpu  # bin, out, gp, GPUPART_*
# shellcheck source-path=SCRIPTDIR source=../lib/checks.sh
. "$(dirname "$0")/../lib/checks.sh"  # check, checks_summary
checks_verbose=1
started=()
cleanup() {
    for pid in "${started[@]}"; do kill -9 "$pid" 2>/dev/null; done
    rm -rf "$GPUPART_REGISTRY_DIR"
}
trap cleanup EXIT
mctx=$bin/gpupart-dev-multictx
# Probe results in a private cache: the machine's users are left as they were (rm_reader_tests.sh compares
# an unprobed user's floorplan with root's).
export XDG_CACHE_HOME=$out/probe-cache
mkdir -p "$XDG_CACHE_HOME"
wait_for_line() { for _ in $(seq 1 600); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done; return 1; }
sms_of() {  # sms_of EXPR GPU: the SM ids of EXPR on GPU (live topology)
    "$gp" mask parse "$1" --gpu "$2" --json | python3 -c 'import json,sys; print(" ".join(map(str,json.load(sys.stdin)["sms"])))'
}
# expect FILE ROUNDS "UUID=SMS|all;..." : every launch of FILE in ROUNDS (e.g. "0 1") on the GPU with
# that UUID ran on exactly SMS (or on every SM of it: all), in both contexts.
expect() {
    python3 - "$@" <<'PY'
import sys
path, rounds, spec = sys.argv[1], set(map(int, sys.argv[2].split())), sys.argv[3]
want = {}
for item in spec.split(";"):
    uuid, sms = item.split("=")
    want[uuid] = sms
uuid_of, total = {}, {}
ok, seen = True, 0
for line in open(path):
    p = line.split()
    if p[:1] == ["device"]:
        uuid_of[int(p[1])] = p[3]; total[int(p[1])] = int(p[5])
    if p[:1] == ["round"] and int(p[1]) in rounds:
        d = int(p[3]); uuid = uuid_of[d]; sms = set(map(int, line.split(":")[1].split()))
        if uuid not in want: continue
        seen += 1
        expected = set(range(total[d])) if want[uuid] == "all" else set(map(int, want[uuid].split()))
        if sms != expected:
            ok = False
            print(f"  round {p[1]} device {d} ({uuid}) context {p[5]}: {len(sms)} SMs, expected {len(expected)}")
wanted = sum(1 for u in want if u in uuid_of.values()) * 2 * len(rounds)
if seen != wanted: ok = False; print(f"  {seen} launches checked, expected {wanted}")
sys.exit(0 if ok else 1)
PY
}

nvidia-smi --query-gpu=index,name,uuid,pci.bus_id --format=csv,noheader | tee "$out/gpus.txt"
mapfile -t uuids < <(nvidia-smi --query-gpu=uuid --format=csv,noheader)
n=${#uuids[@]}
echo "== 0. gpupart probe on each of the $n GPU(s): live mask bits"
for ((i = 0; i < n; ++i)); do
    "$gp" probe --gpu "$i" > "$out/probe-$i.txt" 2>&1; rc=$?
    check "gpupart probe --gpu $i exits 0" [ "$rc" -eq 0 ]
    gpc1[i]=$(sms_of gpc1 "$i"); gpc6[i]=$(sms_of gpc6 "$i")
    echo "GPU $i ${uuids[i]}: gpc1 SMs ${gpc1[i]}; gpc6 SMs ${gpc6[i]}"
done

echo "== 1. run --gpu I: both contexts on GPU I on its gpc1; every other GPU unconfined"
for ((i = 0; i < n; ++i)); do
    "$gp" run --gpu "$i" --tpcs gpc1 -- "$mctx" --rounds 2 > "$out/run-$i.txt" 2> "$out/run-$i.err"; rc=$?
    cat "$out/run-$i.txt" "$out/run-$i.err"
    spec="${uuids[i]}=${gpc1[i]}"
    for ((j = 0; j < n; ++j)); do [ "$j" -ne "$i" ] && spec="$spec;${uuids[j]}=all"; done
    check "run --gpu $i exits 0" [ "$rc" -eq 0 ]
    check "run --gpu $i: GPU $i's launches on its gpc1, in both contexts; other GPUs whole" expect "$out/run-$i.txt" "0 1" "$spec"
done

echo "== 2. CUDA_VISIBLE_DEVICES: the mask follows the GPU's UUID, not its ordinal"
last=$((n - 1))
env CUDA_VISIBLE_DEVICES="${uuids[last]}" "$gp" run --gpu "$last" --tpcs gpc6 -- "$mctx" --rounds 1 > "$out/cvd.txt" 2>&1; rc=$?
cat "$out/cvd.txt"
check "CUDA_VISIBLE_DEVICES=<uuid of GPU $last>: exits 0" [ "$rc" -eq 0 ]
check "CUDA_VISIBLE_DEVICES: one device seen" grep -q "devices 1$" "$out/cvd.txt"
check "CUDA_VISIBLE_DEVICES: its launches on GPU $last's gpc6" expect "$out/cvd.txt" "0" "${uuids[last]}=${gpc6[last]}"
"$gp" run --gpu "$last" --only --tpcs gpc6 -- "$mctx" --rounds 1 > "$out/only.txt" 2>&1; rc=$?
check "run --only: exits 0, one device seen" grep -q "devices 1$" "$out/only.txt"
check "run --only: its launches on GPU $last's gpc6" expect "$out/only.txt" "0" "${uuids[last]}=${gpc6[last]}"
if [ "$n" -ge 2 ]; then
    env CUDA_VISIBLE_DEVICES=1,0 "$gp" run --gpu 0 --tpcs gpc1 -- "$mctx" --rounds 1 > "$out/cvd-swap.txt" 2>&1; rc=$?
    cat "$out/cvd-swap.txt"
    check "CUDA_VISIBLE_DEVICES=1,0: ordinal 1 is GPU 0, confined; ordinal 0 is GPU 1, whole" \
        expect "$out/cvd-swap.txt" "0" "${uuids[0]}=${gpc1[0]};${uuids[1]}=all"
fi

echo "== 2b. without --gpu, run confines the GPU CUDA_VISIBLE_DEVICES lets the command see"
env CUDA_VISIBLE_DEVICES="$last" "$gp" run --tpcs gpc6 -- "$mctx" --rounds 1 > "$out/cvd-nogpu.txt" 2> "$out/cvd-nogpu.err"; rc=$?
cat "$out/cvd-nogpu.txt" "$out/cvd-nogpu.err"
check "CUDA_VISIBLE_DEVICES=$last, no --gpu: exits 0, one device seen" grep -q "devices 1$" "$out/cvd-nogpu.txt"
check "CUDA_VISIBLE_DEVICES=$last, no --gpu: its launches on GPU $last's gpc6" expect "$out/cvd-nogpu.txt" "0" "${uuids[last]}=${gpc6[last]}"
env CUDA_VISIBLE_DEVICES="${uuids[last]}" "$gp" run --tpcs gpc6 -- "$mctx" --rounds 1 > "$out/cvd-uuid.txt" 2>&1
check "CUDA_VISIBLE_DEVICES=<uuid of GPU $last>, no --gpu: on its gpc6" expect "$out/cvd-uuid.txt" "0" "${uuids[last]}=${gpc6[last]}"
env CUDA_VISIBLE_DEVICES= "$gp" run --tpcs gpc6 -- "$mctx" --rounds 1 > "$out/cvd-none.txt" 2>&1; rc=$?
cat "$out/cvd-none.txt"
check "CUDA_VISIBLE_DEVICES empty: refused in one line, nothing run" [ "$rc" -eq 1 ] && [ "$(wc -l < "$out/cvd-none.txt")" -eq 1 ]
env CUDA_VISIBLE_DEVICES= "$mctx" --rounds 1 > "$out/hidden.txt" 2>&1; rc=$?
cat "$out/hidden.txt"
check "CUDA_VISIBLE_DEVICES empty (the Slurm plugin's notpc=hide): CUDA shows the program no GPU" \
    bash -c "[ $rc -ne 0 ] && ! grep -q '^device ' '$out/hidden.txt'"
if [ "$n" -ge 2 ]; then
    env CUDA_VISIBLE_DEVICES=1,0 "$gp" run --tpcs gpc1 -- "$mctx" --rounds 1 > "$out/cvd-swap-nogpu.txt" 2> "$out/cvd-swap-nogpu.err"; rc=$?
    cat "$out/cvd-swap-nogpu.txt" "$out/cvd-swap-nogpu.err"
    check "CUDA_VISIBLE_DEVICES=1,0, no --gpu: GPU 1 (its ordinal 0) confined, GPU 0 whole" \
        expect "$out/cvd-swap-nogpu.txt" "0" "${uuids[1]}=${gpc1[1]};${uuids[0]}=all"
    check "CUDA_VISIBLE_DEVICES=1,0, no --gpu: says GPU 1 is the confined one" grep -q "confined on GPU 1 (${uuids[1]}) only" "$out/cvd-swap-nogpu.err"
fi

echo "== 2c. a process no mask holds, beside a partitioned one: the unconfined finding and gauge"
"$gp" run --gpu 0 --tpcs gpc1 -- "$mctx" --rounds 2 --pause-after 1 --resume-file "$out/resume-p" > "$out/part.txt" 2>&1 &
started+=($!)
"$mctx" --rounds 2 --pause-after 1 --resume-file "$out/resume-b" > "$out/bare.txt" 2>&1 &
bare=$!
started+=($bare)
wait_for_line "$out/part.txt" PAUSED
wait_for_line "$out/bare.txt" PAUSED
"$gp" check --gpu 0 --json > "$out/check-unconfined.json" 2> "$out/check-unconfined.err"
"$gp" exporter --once > "$out/metrics-unconfined.txt" 2>&1
grep -E '^gpupart_gpu_processes_unconfined|id="unconfined"' "$out/metrics-unconfined.txt"
check "check: the bare CUDA process is unconfined, by pid" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
hits = [f["message"] for f in d["findings"] if f["id"] == "unconfined"]
print(hits)
sys.exit(0 if any(f"process {sys.argv[2]} (" in m for m in hits) else 1)' "$out/check-unconfined.json" "$bare"
check "exporter: gpupart_gpu_processes_unconfined counts it on GPU 0" grep -qE '^gpupart_gpu_processes_unconfined\{gpu="0".*\} [1-9]' "$out/metrics-unconfined.txt"
touch "$out/resume-p" "$out/resume-b"
wait "$bare"

echo "== 3. set moves one GPU of a running process at its next launch there"
resume=$out/resume
"$gp" run --gpu 0 --tpcs gpc1 -- "$mctx" --rounds 2 --pause-after 1 --resume-file "$resume" > "$out/set.txt" 2>&1 &
started+=($!)
wait_for_line "$out/set.txt" PAUSED
pid=$(awk '/^pid /{print $2}' "$out/set.txt")
"$gp" list | tee "$out/list-paused.txt"
"$gp" list --json > "$out/list-paused.json"
if [ "$n" -ge 2 ]; then
    "$gp" set "$pid" gpc6 > "$out/set-nogpu.txt" 2>&1; rc=$?
    cat "$out/set-nogpu.txt"
    check "set without --gpu on a process on $n GPUs: refused" [ "$rc" -eq 1 ]
    "$gp" set "$pid" gpc6 --gpu 1 | tee "$out/set-out.txt"
    touch "$resume"; wait "$pid"
    check "after set --gpu 1: GPU 0 keeps gpc1, GPU 1 moves to its gpc6" \
        expect "$out/set.txt" "1" "${uuids[0]}=${gpc1[0]};${uuids[1]}=${gpc6[1]}"
else
    "$gp" set "$pid" gpc6 | tee "$out/set-out.txt"
    touch "$resume"; wait "$pid"
    check "after set (its only GPU, no --gpu): round 1 on gpc6" expect "$out/set.txt" "1" "${uuids[0]}=${gpc6[0]}"
fi
check "round 0 was on gpc1 of GPU 0" expect "$out/set.txt" "0" "${uuids[0]}=${gpc1[0]}"
cat "$out/set.txt"
echo "== list --json while paused (quoted in the issue note)"
cat "$out/list-paused.json"
checks_summary "multi-GPU device tests"
