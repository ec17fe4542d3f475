#!/usr/bin/env bash
# Device tests of the RM-control reader and the live topology, on a real H100/H200: the
# reader as a normal user (uid 65534, no groups, no capabilities) and as root, the CLI views it feeds,
# and the live snapshot recorded for tests/fixtures/live-LABEL/. Standalone or from run_device_tests.sh:
#   rm_reader_tests.sh CARRY_DIR OUT_DIR LABEL
# Writes OUT_DIR/live-LABEL.json (gpupart export as uid 65534), OUT_DIR/outputs-LABEL.txt (the normal
# user's topology, engines, copy-engines, gpus, topology --sources) and OUT_DIR/root-LABEL.txt (root's
# engines); everything else goes to a scratch directory, removed at the end. Starts one CUDA process
# and ends it, also on failure.
set -u
# shellcheck source-path=SCRIPTDIR source=device_env.sh
. "$(dirname "$0")/device_env.sh" "$1" "$2" gpupart-rmtest  # bin, out, gp
# shellcheck source-path=SCRIPTDIR source=../lib/checks.sh
. "$(dirname "$0")/../lib/checks.sh"
checks_verbose=1
label=$3
started=()
shared_dir=$(mktemp -d /tmp/gpupart-rmtest.XXXXXX); chmod 755 "$shared_dir"  # the normal user reads the resume file here
scratch=$shared_dir
cache=$shared_dir/cache; mkdir -p "$cache"; chown 65534:65534 "$cache"  # the normal user's probe cache
as_nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups -- env LD_LIBRARY_PATH="$LD_LIBRARY_PATH" XDG_CACHE_HOME="$cache")
cleanup() { for pid in "${started[@]}"; do kill -9 "$pid" 2>/dev/null; done; rm -rf "$shared_dir"; }
trap cleanup EXIT
wait_for_line() { for _ in $(seq 1 300); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done; return 1; }

echo "== machine"
nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version,mig.mode.current --format=csv,noheader
head -1 /proc/driver/nvidia/version
ls -l /dev/nvidiactl /dev/nvidia0

echo "== 1. normal user: the live floorplan, engines and copy engines from the RM controls"
outputs=$out/outputs-$label.txt
: > "$outputs"
for view in "topology" "engines" "copy-engines" "gpus" "topology --sources"; do
    # shellcheck disable=SC2086  # the view is a command and its flag
    { echo "\$ gpupart $view   (uid 65534)"; "${as_nobody[@]}" "$gp" $view 2>&1; echo; } >> "$outputs"
done
cat "$outputs"
start=$(date +%s.%N)
"${as_nobody[@]}" "$gp" topology --json > "$scratch/topology-nobody.json" 2> "$scratch/topology-nobody.err"; rc=$?
end=$(date +%s.%N)
echo "gpupart topology --json as uid 65534: $(python3 -c "print(f'{($end - $start) * 1000:.0f}')") ms wall, rc $rc"
cat "$scratch/topology-nobody.err"
check "topology as a normal user exits 0" [ "$rc" -eq 0 ]
check "it is the live GPU" contains "$scratch/topology-nobody.json" '"live": true'
check "the RM source answered" contains "$scratch/topology-nobody.json" '"state": "ok"'
check "no stderr" [ ! -s "$scratch/topology-nobody.err" ]
check "the floorplan has 8 GPCs" contains "$outputs" "66 TPCs, 132 SMs, 8 GPCs, TPC mask bits not known"
check "floorswept slots are empty" matches "$outputs" "^gpc[0-7] +8 +16 +TPC .*\\."
# shellcheck disable=SC2016  # the backquotes are text
check "mask bits say run the probe" contains "$outputs" 'TPC mask bits are not known yet: run `gpupart probe`'
check "runlists need root" contains "$outputs" ": needs root"
check "GRCE sharing shown live" contains "$outputs" "! LCE0 and LCE2 share PCEs"
check "gpus shows the source line" matches "$outputs" "^  rmctrl ok: driver 580\\."
python3 - "$scratch/topology-nobody.json" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))["gpu"]
sms = sorted(s for t in g["tpcs"] for s in t["sms"])
ok = all(len(t["sms"]) == 2 for t in g["tpcs"]) and sms == list(range(g["sm_count"]["value"]))
print(f"  {len(g['tpcs'])} TPCs, SMs {sms[0]}..{sms[-1]}, sm_count {g['sm_count']['value']}")
sys.exit(0 if ok else 1)
PY
check "every TPC has 2 SMs and SM ids 0..N-1 appear once" [ $? -eq 0 ]

echo "== 1b. the probe as the normal user, then the floorplan with every mask bit (probe joined with the RM SM order)"
start=$(date +%s.%N)
"${as_nobody[@]}" "$gp" probe > "$scratch/probe.txt" 2>&1; rc=$?
end=$(date +%s.%N)
echo "gpupart probe as uid 65534: rc $rc, $(python3 -c "print(f'{($end - $start) * 1000:.0f}')") ms wall"
head -3 "$scratch/probe.txt"
check "the probe ran" [ "$rc" -eq 0 ]
for view in "topology" "topology --sources"; do
    # shellcheck disable=SC2086
    { echo "\$ gpupart $view   (uid 65534, after gpupart probe)"; "${as_nobody[@]}" "$gp" $view 2>&1; echo; } >> "$outputs"
done
sed -n '/after gpupart probe/,$p' "$outputs" | sed -n '1,/^Notes/p'
sed -n '/^Sources/,/^$/p' "$outputs" | tail -8
check "the probe agrees with the RM SM order" matches "$outputs" "^  probe ok: "
check "every mask bit is known after the probe" contains "$outputs" "66 TPCs, 132 SMs, 8 GPCs, 62 holes in the 128-bit TPC mask"

echo "== 2. the SM ids the RM order names are the SM ids CUDA reports (%smid, no mask, no MPS)"
"$bin/gpupart-dev-smid" --blocks 4224 --launches 1 > "$scratch/smid.txt" 2>&1
head -2 "$scratch/smid.txt" | cut -c1-120
rm_sms=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['gpu']['sm_count']['value'])" "$scratch/topology-nobody.json")
check "CUDA reaches exactly the SMs the RM order counts" grep -q "^launch 0 sms $rm_sms : 0 1 2 " "$scratch/smid.txt"

echo "== 3. a CUDA process of root's is listed to a normal user (GPU_GET_PIDS)"
resume=$shared_dir/resume
"$bin/gpupart-dev-smid" --blocks 132 --launches 2 --pause-after 1 --resume-file "$resume" > "$scratch/paused.txt" 2>&1 &
started+=($!)
wait_for_line "$scratch/paused.txt" PAUSED
pid=$(awk '/^pid /{print $2}' "$scratch/paused.txt")
"${as_nobody[@]}" "$gp" topology > "$scratch/with-process.txt" 2>&1
sed -n '/^Processes using the GPU/,/source:/p' "$scratch/with-process.txt"
check "the running CUDA process is listed with its command" grep -q "pid $pid .*gpupart-dev-smid" "$scratch/with-process.txt"
touch "$resume"; wait "${started[-1]}"

echo "== 4. root: runlist ids and allocated channels"
"$gp" engines | tee "$out/root-$label.txt"
check "root reads GR0's runlist" matches "$out/root-$label.txt" "^  runlist 0 +GR0"
check "no engine says needs root" lacks "$out/root-$label.txt" "needs root"
"$gp" topology --json > "$scratch/topology-root.json"
check "root's floorplan equals the normal user's" python3 -c "
import json, sys
a = json.load(open(sys.argv[1]))['gpu']; b = json.load(open(sys.argv[2]))['gpu']
sys.exit(0 if [(t['gpc'], t['slot'], t['sms']) for t in a['tpcs']] == [(t['gpc'], t['slot'], t['sms']) for t in b['tpcs']] else 1)
" "$scratch/topology-nobody.json" "$scratch/topology-root.json"

echo "== 5. the live snapshot, exported by the normal user, for tests/fixtures/live-$label"
"${as_nobody[@]}" "$gp" export --json - > "$out/live-$label.json"; rc=$?
check "export exits 0" [ "$rc" -eq 0 ]
"$gp" topology --snapshot "$out/live-$label.json" > /dev/null; rc=$?
check "the exported snapshot loads back" [ "$rc" -eq 0 ]

checks_summary "rm reader device tests ($label)"
