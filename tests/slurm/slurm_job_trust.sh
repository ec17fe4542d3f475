#!/usr/bin/env bash
# What a job's user, another user and a killed slurmstepd can do to the TPCs Slurm gave a job, with a real
# unprivileged user (made for the test, removed after), the same private munged + slurmctld + slurmd as
# slurm_end_to_end.sh, and the stand-in CUDA program under the TEST DOUBLE driver. Checked:
#  - a directory a user made where the plugin keeps job reservations does not stop placements (root moves it aside);
#  - a job's user cannot grow it beyond the TPCs Slurm gave it, only move within them; root can, warned,
#    and a job that then cannot be placed says which job and process overran;
#  - a user's process naming another user's job (GPUPART_JOB) is no job's: it gets none of the job's TPCs
#    and does not keep them reserved after the job ended;
#  - a task whose slurmstepd was killed runs on: `gpupart check` and the exporter say so.
#   slurm_job_trust.sh GPUPART SPANK_SO SHIM_SO FAKE_DRIVER_DIR SHIM_HOST WORK_DIR
# shellcheck source-path=SCRIPTDIR source=slurm_test_lib.sh
. "$(dirname "$0")/slurm_test_lib.sh" "$@"  # gpupart, spank, shim, fake, host, work; registry, cleanup, helpers
S=(--snapshot builtin:h200)
node="gpupart-ctest-t"
export HOST_WAIT_SECONDS=120
user=gpupart-slurm-t$$
userdel "$user" > /dev/null 2>&1
useradd --no-create-home --shell /usr/sbin/nologin "$user" || { echo "useradd $user failed" >&2; exit 1; }
trap 'cluster_stop; end_background_jobs; userdel "$user" > /dev/null 2>&1' EXIT
chmod 1777 "$work/jobs"  # the user's jobs write their output and ready files there
# The user's own journal: the test's (root's) is not theirs to write.
as_user() { setpriv --reuid="$user" --regid="$user" --clear-groups env GPUPART_JOURNAL="$work/jobs/$user.history.jsonl" "$@"; }

submit() {  # submit NAME SBATCH-OPTIONS...: the stand-in CUDA program, paused at its ready file; id in $job
    local name=$1
    shift
    job=$(sbatch --parsable -J "$name" -o "$work/jobs/$name.out" -e "$work/jobs/$name.err" "$@" \
        --wrap "exec $host load:$fake launch:0x40 ready:$work/jobs/$name.ready wait:$work/jobs/$name.go launch:0x40")
}
started() { await_condition 30 test -e "$work/jobs/$1.ready"; }
process_of() { json "$work/$1.json" "[p for p in d['processes'] if p.get('job') == '$2'][0]$3"; }
tpcs_of() { process_of "$1" "$2" "['gpus'][0]['requested']['tpcs']"; }
finding_ids() { json "$1" "sorted(set(f['id'] for f in d['findings']))"; }

"$gpupart" slurm conf "${S[@]}" --node "$node" --plugin "$spank" > "$work/conf.txt" 2> "$work/conf.err"
cluster_from_conf "$work/conf.txt" "$node" "gpupart=$gpupart snapshot=builtin:h200 registry=$GPUPART_REGISTRY_DIR shim=$shim"

# ---- 1. a squatter's reservations directory --------------------------------------------------------
as_user mkdir "$GPUPART_REGISTRY_DIR/jobs"
check "the user made the reservations directory first" [ "$(stat -c %U "$GPUPART_REGISTRY_DIR/jobs")" = "$user" ]
submit a --uid="$user" --gres=tpc:16
a=$job
check "job a (the user's, tpc:16): starts anyway" started a
check "the reservations directory is root's now" [ "$(stat -c %U "$GPUPART_REGISTRY_DIR/jobs")" = root ]
check "the squatter's directory was moved aside" compgen -G "$GPUPART_REGISTRY_DIR/jobs.untrusted-uid*"
list_json list-a
a_pid=$(process_of list-a "slurm:$a.batch" "['pid']")
a_tpcs=$(tpcs_of list-a "slurm:$a.batch")
check "job a runs as the user" [ "$(stat -c %U "/proc/$a_pid")" = "$user" ]

# ---- 2. the job's user cannot grow it beyond its allocation -------------------------------------------
as_user "$gpupart" set "$a_pid" "20 tpcs" "${S[@]}" > "$work/grow.out" 2> "$work/grow.err"; rc=$?
check "user grows job a to 20 TPCs: refused" [ "$rc" -eq 1 ]
check "refused: one line" lines "$work/grow.err" 1
check "refused: says the job's allocation" contains "$work/grow.err" "outside the 16 TPCs the job was given ($a_tpcs)"
check "refused: the rule" contains "$work/grow.err" "[job-allocation;"
list_json list-grow
check "refused: job a keeps its TPCs" [ "$(tpcs_of list-grow "slurm:$a.batch")" = "$a_tpcs" ]
as_user "$gpupart" set "$a_pid" "8 tpcs" "${S[@]}" > "$work/shrink.out" 2> "$work/shrink.err"; rc=$?
check "user shrinks job a within its TPCs: works" [ "$rc" -eq 0 ]
list_json list-shrink
a_half=$(tpcs_of list-shrink "slurm:$a.batch")
check "within: 8 of the job's TPCs" python3 -c '
import sys
def tpcs(text):
    out = set()
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out |= set(range(int(lo), int(hi or lo) + 1))
    return out
sys.exit(0 if len(tpcs(sys.argv[1])) == 8 and tpcs(sys.argv[1]) <= tpcs(sys.argv[2]) else 1)' "$a_half" "$a_tpcs"
as_user "$gpupart" set "$a_pid" "$a_tpcs" "${S[@]}" > /dev/null 2>&1
"$gpupart" set "$a_pid" "20 tpcs" "${S[@]}" > "$work/root-grow.out" 2> "$work/root-grow.err"; rc=$?
check "root grows job a to 20 TPCs: works" [ "$rc" -eq 0 ]
check "root's grow: warned that Slurm still counts 16" contains "$work/root-grow.out" "4 more than the 16 Slurm gave it: Slurm still counts 16"
x=$(sbatch --parsable -J x -o "$work/jobs/x.out" -e "$work/jobs/x.err" --gres=tpc:50 --wrap "exec $host load:$fake launch:0x40")
check "job x (50 TPCs; Slurm counts 50 free, 46 are): ends" await_condition 30 job_gone "$x"
check "job x: its stderr names the job that overran and its process" contains "$work/jobs/x.err" \
    "Slurm job $a holds 20 ("
check "job x: ... how much beyond its allocation" contains "$work/jobs/x.err" "4 more than the 16 Slurm gave it (grown live; its process $a_pid)"
"$gpupart" check "${S[@]}" --json > "$work/check-grown.json"
check "check: job-over-allocation while job a holds 20" matches <(finding_ids "$work/check-grown.json") "job-over-allocation"
"$gpupart" set "$a_pid" "16 tpcs" "${S[@]}" > /dev/null 2>&1

# ---- 3. a process naming another user's job --------------------------------------------------------
submit b --gres=tpc:8
b=$job
check "job b (root's): starts" started b
list_json list-b
b_tpcs=$(tpcs_of list-b "slurm:$b.batch")
as_user env GPUPART_JOB="slurm:$b.0" "$gpupart" run "${S[@]}" --tpcs "2 tpcs" -- "$host" load:"$fake" launch:0x40 \
    ready:"$work/jobs/forger.ready" wait:"$work/jobs/forger.go" > "$work/jobs/forger.out" 2> "$work/jobs/forger.err" &
check "the user's process naming job b: starts" started forger
list_json list-forger
forger=$(json "$work/list-forger.json" "[p['pid'] for p in d['processes'] if p['command'].startswith('$host') and p.get('job') == 'slurm:$b.0'][0]")
as_user "$gpupart" set "$forger" "$b_tpcs" "${S[@]}" > "$work/forge-set.out" 2> "$work/forge-set.err"; rc=$?
check "the forger onto job b's TPCs: refused" [ "$rc" -eq 1 ]
check "refused: job b holds them" contains "$work/forge-set.err" "process $forger (of no job) would get TPCs $b_tpcs that Slurm job $b holds"
"$gpupart" check "${S[@]}" --json > "$work/check-forger.json"
check "check: the claim is refused, said" matches <(finding_ids "$work/check-forger.json") "job-claim-refused"
touch "$work/jobs/b.go"
check "job b: ends" await_condition 30 job_gone "$b"
"$gpupart" slurm jobs --json > "$work/jobs-b.json"
check "job b's TPCs are given back although the forger runs" \
    [ "$(json "$work/jobs-b.json" "[j['job'] for g in d['gpus'] for j in g['jobs'] if j['job'] == 'slurm:$b']")" = "[]" ]
touch "$work/jobs/forger.go"

# ---- 4. a task whose slurmstepd was killed ---------------------------------------------------------
submit c --gres=tpc:8
c=$job
check "job c: starts" started c
list_json list-c
c_pid=$(process_of list-c "slurm:$c.batch" "['pid']")
"$gpupart" slurm jobs --json > "$work/jobs-c.json"
c_stepd=$(json "$work/jobs-c.json" "[j['steps'][0]['slurmstepd_pid'] for g in d['gpus'] for j in g['jobs'] if j['job'] == 'slurm:$c'][0]")
kill -KILL "$c_stepd"
check "job c: its slurmstepd is gone" await_condition 10 bash -c "! kill -0 $c_stepd 2> /dev/null"
check "job c: its task runs on" kill -0 "$c_pid"
"$gpupart" check "${S[@]}" --json > "$work/check-orphan.json"
check "check: the task of a step that ended is said" matches <(finding_ids "$work/check-orphan.json") "job-step-gone"
check "check: ... naming the process" contains "$work/check-orphan.json" "process $c_pid ("
"$gpupart" exporter --once "${S[@]}" > "$work/metrics-orphan.txt" 2> "$work/metrics-orphan.err"
check "exporter: gpupart_gpu_processes_job_step_gone 1" matches "$work/metrics-orphan.txt" '^gpupart_gpu_processes_job_step_gone\{.*\} 1$'
kill -KILL "$c_pid"
await_condition 10 bash -c "! kill -0 $c_pid 2> /dev/null"
"$gpupart" check "${S[@]}" --json > "$work/check-after.json"
check "check: nothing said once it ended" lacks "$work/check-after.json" "job-step-gone"

touch "$work/jobs/a.go"
checks_summary slurm_job_trust
