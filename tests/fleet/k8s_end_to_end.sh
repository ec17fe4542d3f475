#!/usr/bin/env bash
# gpupart k8s (docs/kubernetes.md) on the built-in H200, as the future DRA driver would use it: claims
# placed GPC-packed and disjoint, a kubelet retry, refusals that change nothing, the ResourceSlice, CDI specs, and
# the REAL shim started with exactly the env and mounts a claim's CDI spec gives a container (container paths
# mapped back to their host paths: what a runtime does, without the mount namespace), under the TEST DOUBLE of
# the CUDA driver (tests/shim). Then planted and corrupt claim files. No cluster, no GPU.
#   k8s_end_to_end.sh GPUPART SHIM_SO FAKE_DRIVER_DIR SHIM_HOST WORK_DIR
set -u
gpupart=$1
shim=$2
fake=$3/libcuda.so.1
host=$4
work=$5
# shellcheck source-path=SCRIPTDIR source=../lib/checks.sh
. "$(dirname "$0")/../lib/checks.sh"
private_registry "$work"  # never the machine's registry or the user's history
end_jobs_on_exit
export GPUPART_SHIM=$shim
unset LD_PRELOAD GPUPART_TPCS GPUPART_REAL_TPCS GPUPART_JOB CUDA_VISIBLE_DEVICES
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
state=$work/state registries=$work/claims cdi=$work/cdi mps=$work/mps
G0=GPU-00000000-0000-0000-0000-000000000001
A=3f6c1a9e-6f7b-4c1d-9a55-0c2d1e4b8a77 B=9b1e0c55-2a4d-4f6e-8c7b-1d2e3f4a5b6c
mkdir -p "$mps/$G0"  # the GPU's MPS pipe directory, as gpupart-mps@.service makes it (no daemon needed here)
k8s() { "$gpupart" k8s "$@"; }
prep() { k8s prepare --snapshot builtin:h200 --state-dir "$state" --registry-root "$registries" --cdi-dir "$cdi" --mps-root "$mps" "$@"; }
unprep() { k8s unprepare --state-dir "$state" --registry-root "$registries" --cdi-dir "$cdi" "$@"; }
field() { python3 -c 'import json,sys; v=json.load(open(sys.argv[1])); [v:=v[k] for k in sys.argv[2].split(".")]; print(v)' "$1" "$2"; }
spec_of() { echo "$cdi/gpupart.io-tpc_$1.json"; }
# The env a container of claim $1 gets from its spec, its paths mapped back through the spec's mounts.
container_env() {
    python3 - "$(spec_of "$1")" <<'PY'
import json, sys
edits = json.load(open(sys.argv[1]))["devices"][0]["containerEdits"]
mounts = sorted(edits["mounts"], key=lambda m: -len(m["containerPath"]))
for entry in edits["env"]:
    name, value = entry.split("=", 1)
    for m in mounts:
        value = value.replace(m["containerPath"], m["hostPath"])
    print(f"{name}={value}")
PY
}
# The disable words a V04 descriptor gets for the allowed TPCs $1 (hex): as shim_end_to_end.sh's v04_full.
v04_for() { python3 -c 'import sys; a=int(sys.argv[1],16); d=~a&((1<<128)-1); print("launch version=0x40 callback=1 word0=0xda5a5a5a mask=" + ",".join("0x%08x" % ((d>>(32*i))&0xffffffff) for i in range(4)) + " low=0x5a5a5a5a,0x5a5a5a5a")' "$1"; }

# ---- The ResourceSlice -------------------------------------------------------------------------------
k8s resource-slice --snapshot builtin:h200 --node node-1 > "$work/slice.yaml"; rc=$?
check "resource-slice exits 0" [ "$rc" -eq 0 ]
check "resource-slice: YAML that reads back as the JSON form" python3 -c '
import json, subprocess, sys, yaml
a = yaml.safe_load(open(sys.argv[1]))
b = json.loads(subprocess.run([sys.argv[2], "k8s", "resource-slice", "--snapshot", "builtin:h200", "--node", "node-1", "--json"],
                              check=True, capture_output=True).stdout)
sys.exit(0 if a == b else 1)' "$work/slice.yaml" "$gpupart"
check "resource-slice: the v1 API" contains "$work/slice.yaml" 'apiVersion: "resource.k8s.io/v1"'
check "resource-slice: 66 TPCs of capacity" contains "$work/slice.yaml" 'value: "66"'
check "resource-slice: shared by claims" contains "$work/slice.yaml" "allowMultipleAllocations: true"
k8s resource-slice --snapshot builtin:h200 --node Node_1 > /dev/null 2> "$work/slice-bad.err"; rc=$?
check "resource-slice: a bad node name exits 1" [ "$rc" -eq 1 ]
check "resource-slice: in one line" lines "$work/slice-bad.err" 1

# ---- Two claims: packed, disjoint; a retry; refusals ------------------------------------------------
prep --claim "$A" --namespace inference --name llm --tpcs 16 --json > "$work/a.json" 2> "$work/a.err"; rc=$?
check "prepare A exits 0" [ "$rc" -eq 0 ]
# Claims are TPC numbers: gpc0 + gpc1 of the H200 are TPCs 0-1,8-9,16-17,24-25,32,39,46,53,62-65
# (launch-descriptor bits 0-3,9-16,75,78,81,83, which the container's shim is given in GPUPART_TPCS).
GPC01_BITS=0xa4800000000000001fe0f
check "A: two whole GPCs" [ "$(field "$work/a.json" claim.tpcs)" = "0-1,8-9,16-17,24-25,32,39,46,53,62-65" ]
check "A's CDI spec gives the shim their descriptor bits" contains "$(spec_of "$A")" "=$GPC01_BITS\""
check "A: its job" [ "$(field "$work/a.json" claim.job)" = "k8s:inference/$A" ]
check "A: says the device node is assumed" contains "$work/a.err" "its device node is assumed to be /dev/nvidia0"
check "A: the spec file" [ -f "$(spec_of "$A")" ]
check "A: the CDI device" [ "$(field "$work/a.json" cdi_device)" = "gpupart.io/tpc=$A" ]
check "A: its registry is sticky and open to every uid" [ "$(stat -c %a "$registries/$A")" = 1777 ]
prep --claim "$B" --namespace batch --tpcs 9 --json > "$work/b.json" 2> /dev/null; rc=$?
check "prepare B exits 0" [ "$rc" -eq 0 ]
check "B: one whole GPC of 9" [ "$(field "$work/b.json" claim.tpcs)" = "6,14,22,30,37,44,51,58,60" ]  # gpc6
check "A and B share no TPC" python3 -c 'import sys; sys.exit(int(sys.argv[1],16) & int(sys.argv[2],16))' \
    "$(field "$work/a.json" claim.tpcs_hex)" "$(field "$work/b.json" claim.tpcs_hex)"
cp "$state/$G0.claims.json" "$work/claims.before"
prep --claim "$A" --namespace inference --name llm --tpcs 16 > "$work/retry.out" 2> /dev/null; rc=$?
check "a kubelet retry exits 0" [ "$rc" -eq 0 ]
check "a retry says so" contains "$work/retry.out" "was already prepared: 16 TPCs 0-1,8-9,16-17,24-25,32,39,46,53,62-65"
check "a retry changes no claim" cmp -s "$state/$G0.claims.json" "$work/claims.before"
prep --claim "$A" --namespace inference --tpcs 20 > /dev/null 2> "$work/other.err"; rc=$?
check "A with another size exits 1" [ "$rc" -eq 1 ]
check "and says to unprepare first" contains "$work/other.err" "unprepare it first; nothing changed"
prep --claim c-big --tpcs 42 > /dev/null 2> "$work/big.err"; rc=$?
check "42 TPCs with 41 free exit 1" [ "$rc" -eq 1 ]
check "and say it does not fit" contains "$work/big.err" "41 of the 66 TPCs of GPU 0"
check "in one line, after the recording's note" [ "$(grep -vc 'is a recording' "$work/big.err")" -eq 1 ]
prep --claim ../../etc --tpcs 1 > /dev/null 2> "$work/uid.err"; rc=$?
check "a uid that is a path exits 1" [ "$rc" -eq 1 ]
check "and names what a uid is" contains "$work/uid.err" "not a Kubernetes uid"
check "refusals change no claim" cmp -s "$state/$G0.claims.json" "$work/claims.before"
check "and make no registry" [ "$(ls "$registries")" = "$(printf '%s\n' "$A" "$B" | sort)" ]
prep --claim g2 --gpcs 2 --no-mps --json > "$work/g.json" 2> /dev/null; rc=$?
check "two whole GPCs exit 0" [ "$rc" -eq 0 ]
check "and are two wholly free GPCs" [ "$(field "$work/g.json" claim.whole_gpcs)" = "['gpc2', 'gpc3']" ]
check "--no-mps: no MPS in the spec" lacks "$(spec_of g2)" "CUDA_MPS_PIPE_DIRECTORY"
k8s claims --state-dir "$state" --json > "$work/claims.json"; rc=$?
check "claims --json exits 0" [ "$rc" -eq 0 ]
check "claims: three" [ "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["claims"]))' "$work/claims.json")" = 3 ]

# ---- A container's process under claim A's spec: the real shim, its mask, its registry ---------------
mapfile -t a_env < <(container_env "$A")
check "the spec gives the container LD_PRELOAD" [ "${a_env[0]}" = "LD_PRELOAD=$shim" ]
env -i PATH="$PATH" ASAN_OPTIONS="$ASAN_OPTIONS" "${a_env[@]}" "$host" load:"$fake" launch:0x40 \
    ready:"$work/a.ready" wait:"$work/a.go" > "$work/a-proc.out" 2> "$work/a-proc.err" &
a_pid=$!
for _ in $(seq 1 1000); do [ -e "$work/a.ready" ] && break; sleep 0.01; done
check "the container's process runs" [ -e "$work/a.ready" ]
check "its launch carries claim A's TPCs (their descriptor bits)" [ "$(sed -n 2p "$work/a-proc.out")" = "$(v04_for "$GPC01_BITS")" ]
check "it registers in claim A's registry" [ -n "$(find "$registries/$A" -name "$a_pid-*.slot")" ]
check "and nowhere else" [ -z "$(find "$GPUPART_REGISTRY_DIR" -name '*.slot' 2> /dev/null)" ]
GPUPART_REGISTRY_DIR=$registries/$A "$gpupart" list --json > "$work/list-a.json"
check "gpupart list on the claim's registry shows it with A's TPCs, applied" \
    python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["processes"]; sys.exit(not (len(p)==1 and p[0]["pid"]==int(sys.argv[2]) and p[0]["gpus"][0]["requested"]["tpcs"]==p[0]["gpus"][0]["shim"]["applied_tpcs"]==sys.argv[3]))' \
    "$work/list-a.json" "$a_pid" "$(field "$work/a.json" claim.tpcs)"
check "gpupart list names the process's job: the claim's" \
    [ "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["processes"][0].get("job"))' "$work/list-a.json")" = "$(field "$work/a.json" claim.job)" ]
kill -KILL "$a_pid"; wait "$a_pid" 2> /dev/null  # the pod is killed; the kubelet then unprepares

# ---- Unprepare: spec, registry (with the dead process's slot) and TPCs go; a second one is no error ----
unprep --claim "$A" > "$work/un.out"; rc=$?
check "unprepare A exits 0" [ "$rc" -eq 0 ]
check "unprepare says what is free" contains "$work/un.out" "claim $A released: TPCs 0-1,8-9,16-17,24-25,32,39,46,53,62-65"
check "its spec is gone" [ ! -e "$(spec_of "$A")" ]
check "its registry is gone" [ ! -e "$registries/$A" ]
unprep --claim "$A" > "$work/un2.out"; rc=$?
check "a second unprepare exits 0" [ "$rc" -eq 0 ]
check "and says there is nothing to release" contains "$work/un2.out" "is not prepared on this node"
prep --claim c-next --tpcs 16 --json > "$work/next.json" 2> /dev/null
check "a new claim gets the freed TPCs" [ "$(field "$work/next.json" claim.tpcs)" = "0-1,8-9,16-17,24-25,32,39,46,53,62-65" ]

# ---- Planted and corrupt claim files: refused in one line, nothing changed, no hang -------------------
claims_file=$state/$G0.claims.json
mv "$claims_file" "$work/claims.good"
mkfifo "$claims_file"
timeout 10 "$gpupart" k8s claims --state-dir "$state" > /dev/null 2> "$work/fifo.err"; rc=$?
check "a FIFO claims file: exits 1, no hang" [ "$rc" -eq 1 ]
check "a FIFO claims file: says so" contains "$work/fifo.err" "is a FIFO"
rm "$claims_file"
ln -s "$work/claims.good" "$claims_file"
prep --claim c-x --tpcs 1 > /dev/null 2> "$work/link.err"; rc=$?
check "a symlinked claims file: exits 1" [ "$rc" -eq 1 ]
check "a symlinked claims file: not followed" contains "$work/link.err" "symbolic link"
rm "$claims_file"
head -c 100 "$work/claims.good" > "$claims_file"
prep --claim c-x --tpcs 1 > /dev/null 2> "$work/corrupt.err"; rc=$?
check "a torn claims file: exits 1" [ "$rc" -eq 1 ]
check "a torn claims file: names it" contains "$work/corrupt.err" "claims file $claims_file: not a JSON object"
check "a torn claims file: left as it was" [ "$(wc -c < "$claims_file")" -eq 100 ]
check "a torn claims file: no spec for the refused claim" [ ! -e "$(spec_of c-x)" ]
mv "$work/claims.good" "$claims_file"
chmod 0777 "$state"
prep --claim c-x --tpcs 1 > /dev/null 2> "$work/mode.err"; rc=$?
check "a claims directory others may write: exits 1" [ "$rc" -eq 1 ]
check "and says so" contains "$work/mode.err" "writable by others"
chmod 0755 "$state"

# ---- A claim's registry: no other user of the node reaches it; nesting of any depth is removed; an unprepare
# that cannot remove everything still releases the TPCs and says what is left (never "nothing changed") ---------
prep --claim c-deep --tpcs 4 --json > "$work/deep.json" 2> /dev/null
check "the claim registries' root is closed to other users (0700)" [ "$(stat -c %a "$registries")" = 700 ]
if [ "$(id -u)" -eq 0 ] && command -v setpriv > /dev/null; then
    userdel gpk8smallory > /dev/null 2>&1
    useradd --no-create-home --shell /usr/sbin/nologin gpk8smallory
    as_mallory() { setpriv --reuid=gpk8smallory --regid=gpk8smallory --clear-groups "$@"; }
    as_mallory mkdir "$registries/c-deep/planted" 2> /dev/null
    check "another user of the node cannot plant in a claim's registry" [ ! -e "$registries/c-deep/planted" ]
    userdel gpk8smallory
else
    echo "not root (or no setpriv): the real-user check of the claim registry is skipped"
fi
# What a container's process may do inside its own registry: nest far deeper than gpupart makes.
mkdir -p "$registries/c-deep/u1000/$(printf 'd/%.0s' $(seq 1 40))"
unprep --claim c-deep > "$work/deep-un.out" 2> "$work/deep-un.err"; rc=$?
check "unprepare of a 40-deep registry exits 0" [ "$rc" -eq 0 ]
check "and removes it whole" [ ! -e "$registries/c-deep" ]
check "and releases the TPCs" contains "$work/deep-un.out" "claim c-deep released: TPCs"
check "and leaves nothing behind it moved up" [ -z "$(ls -A "$registries" | grep gpupart-removing)" ]
prep --claim c-busy --tpcs 4 > /dev/null 2>&1
mkdir -p "$registries/c-busy/u1000/mnt"
if [ "$(id -u)" -eq 0 ] && mount -t tmpfs -o size=1m gpupart-test "$registries/c-busy/u1000/mnt" 2> /dev/null; then
    unprep --claim c-busy > "$work/busy-un.out" 2> "$work/busy-un.err"; rc=$?
    umount "$registries/c-busy/u1000/mnt"
    check "an unprepare that cannot remove a mount point exits 1" [ "$rc" -eq 1 ]
    check "its TPCs are released anyway" contains "$work/busy-un.out" "claim c-busy released: TPCs"
    check "its spec is gone" [ ! -e "$(spec_of c-busy)" ]
    check "it says what is left, in one line" [ "$(grep -c . "$work/busy-un.err")" -eq 1 ]
    check "naming the mount point" contains "$work/busy-un.err" "left behind: claim registry $registries/c-busy/u1000/mnt: cannot remove it"
    check "and what was done" contains "$work/busy-un.err" "its CDI spec was removed, its TPCs"
    check "never 'nothing changed'" lacks "$work/busy-un.err" "nothing changed"
    k8s claims --state-dir "$state" --json > "$work/claims-after.json"
    check "the claim is no longer recorded" lacks "$work/claims-after.json" "c-busy"
    unprep --claim c-busy > "$work/busy-un2.out" 2>&1; rc=$?
    check "a second unprepare removes the rest and exits 0" [ "$rc" -eq 0 ] && [ ! -e "$registries/c-busy" ]
else
    echo "not root (or no tmpfs mount): the partial unprepare check is skipped"
    unprep --claim c-busy > /dev/null 2>&1
fi

checks_summary k8s_end_to_end && rm -rf "$work"
