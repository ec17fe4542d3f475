#!/usr/bin/env bash
# TPCs as a Slurm resource, end to end: a real munged, slurmctld and slurmd on localhost
# (slurm_cluster.sh) with gres/tpc from `gpupart slurm conf` and the built gpupart_spank.so; the jobs' tasks are
# the shim tests' stand-in CUDA program (gpupart_shim_host) with the REAL libgpupart-shim.so and the TEST DOUBLE
# CUDA driver (tests/shim/fake_libcuda.c: the built-in H200's one GPU, no GPU, no MPS). Checked: a tpc:16
# job gets a GPC-packed 16-TPC mask (its slot, the descriptors it writes, `gpupart list`); two running jobs
# get disjoint masks; a job that does not fit waits PENDING, then runs; srun steps share their job's TPCs;
# scancel frees a job's TPCs; a killed slurmstepd's TPCs are swept; a live `gpupart set` of one job onto
# another job's TPCs is refused, within its own or onto free ones it works and moves the job's reservation.
#   slurm_end_to_end.sh GPUPART SPANK_SO SHIM_SO FAKE_DRIVER_DIR SHIM_HOST WORK_DIR
# shellcheck source-path=SCRIPTDIR source=slurm_test_lib.sh
. "$(dirname "$0")/slurm_test_lib.sh" "$@"  # gpupart, spank, shim, fake, host, work; registry, cleanup, helpers
S=(--snapshot builtin:h200)  # the test double's GPU
G0=GPU-00000000-0000-0000-0000-000000000001
node="gpupart-ctest"
# Jobs a and b must outlive several scheduling rounds and live changes (ended by .go files and scancel): with
# the stand-in program's 20 s default, a loaded machine ended job a's task mid-test, which freed its TPCs.
export HOST_WAIT_SECONDS=120

submit() {  # submit NAME SBATCH-OPTIONS... : a job whose task is the stand-in CUDA program; its id in $job
    local name=$1
    shift
    job=$(sbatch --parsable -J "$name" -o "$work/jobs/$name.out" -e "$work/jobs/$name.err" "$@" \
        --wrap "exec $host load:$fake launch:0x40 ready:$work/jobs/$name.ready wait:$work/jobs/$name.go launch:0x40")
}
# The process of job step $2 in list file $1: field $3 of it.
process_of() { json "$work/$1.json" "[p for p in d['processes'] if p.get('job') == '$2'][0]$3"; }
mask_of() { process_of "$1" "$2" "['gpus'][0]['requested']['mask']"; }
tpcs_of() { process_of "$1" "$2" "['gpus'][0]['requested']['tpcs']"; }
# The descriptor line the task printed for its first launch carries the complement of its mask's descriptor bits
# (disable bits); MASK is TPC numbers.
descriptor_carries() {  # descriptor_carries NAME MASK
    grep -qF "launch version=0x40 callback=1 word0=0xda5a5a5a mask=$(disable_words "$(descriptor_bits_of "$2" builtin:h200)") " "$work/jobs/$1.out"
}

# ---- 1. the configuration comes from `gpupart slurm conf`; the cluster starts ------------------------
"$gpupart" slurm conf "${S[@]}" --node "$node" --plugin "$spank" > "$work/conf.txt" 2> "$work/conf.err"; rc=$?
check "slurm conf: exits 0" [ "$rc" -eq 0 ]
check "slurm conf: one tpc type for the GPU, Count = its 66 real TPCs" \
    contains "$work/conf.txt" "NodeName=$node Name=tpc Type=gpu0 Count=66 Flags=CountOnly"
check "slurm conf: the node's Gres" contains "$work/conf.txt" "NodeName=$node Gres=tpc:gpu0:66"
check "slurm conf: the plugstack line" contains "$work/conf.txt" "required $spank"
cluster_from_conf "$work/conf.txt" "$node" "gpupart=$gpupart snapshot=builtin:h200 registry=$GPUPART_REGISTRY_DIR shim=$shim"
check "cluster: the node offers 66 TPCs" contains <(scontrol show node "$node") "Gres=tpc:gpu0:66"

# Where gpupart itself puts 16 TPCs on the empty GPU: the job must get exactly that.
"$gpupart" run --dry-run --tpcs "16 tpcs" "${S[@]}" -- true > "$work/dry16.txt" 2>&1
packed16=$(sed -n 's/^would start true on TPCs \([^ ]*\) (16 TPCs.*/\1/p' "$work/dry16.txt")
check "gpupart run --dry-run places 16 TPCs" [ -n "$packed16" ]

# ---- 2. one job, tpc:16: a GPC-packed 16-TPC mask in its slot and its descriptors ------------------
submit a --gres=tpc:16
a=$job
check "job a: starts" started a
list_json list-a
check "job a: its process is in the registry with its Slurm job" [ "$(process_of list-a "slurm:$a.batch" "['pid']")" -gt 0 ]
a_mask=$(mask_of list-a "slurm:$a.batch")
check "job a: 16 TPCs" [ "$(count_of "$a_mask")" -eq 16 ]
check "job a: GPC-packed, where gpupart places 16 ($packed16)" [ "$(tpcs_of list-a "slurm:$a.batch")" = "$packed16" ]
check "job a: the shim applies them" [ "$(process_of list-a "slurm:$a.batch" "['gpus'][0]['shim']['applied_tpcs']")" = "$packed16" ]
check "job a: its descriptors carry them" descriptor_carries a "$a_mask"
check "job a: stderr says where its TPCs are" contains "$work/jobs/a.err" \
    "gpupart: Slurm job $a step batch: TPCs $packed16 on GPU 0 (NVIDIA H200, $G0): 16 TPCs, 32 SMs, GPC-packed"
# No nvidia-cuda-mps-control here (no GPU, no CUDA): the plugin says MPS could not be started.
check "job a: MPS could not be started, said in its stderr" contains "$work/jobs/a.err" \
    "gpupart: warning: MPS is not running and could not be started"
"$gpupart" list > "$work/list-a.txt"
check "gpupart list: a JOB column with the Slurm job" matches "$work/list-a.txt" " slurm:$a\.batch +$host "
"$gpupart" slurm jobs --json > "$work/jobs-a.json"
check "slurm jobs: job a holds 16 TPCs" [ "$(json "$work/jobs-a.json" "[j['tpc_count'] for j in d['gpus'][0]['jobs'] if j['job'] == 'slurm:$a']")" = "[16]" ]
scontrol show -d job "$a" > "$work/scontrol-a.txt"
check "scontrol: the job asked tpc:16" contains "$work/scontrol-a.txt" "TresPerNode=gres:tpc:16"
check "scontrol -d: it got 16 of gpu0's" contains "$work/scontrol-a.txt" "GRES=tpc:gpu0(CNT:16)"

# ---- 3. a second job beside it: disjoint ------------------------------------------------------------
submit b --gres=tpc:16
b=$job
check "job b: starts while a runs" started b
list_json list-b
b_mask=$(mask_of list-b "slurm:$b.batch")
check "job b: 16 TPCs" [ "$(count_of "$b_mask")" -eq 16 ]
check "jobs a and b: disjoint masks" disjoint "$a_mask" "$b_mask"
check "job b: its descriptors carry its mask" descriptor_carries b "$b_mask"
b_pid=$(process_of list-b "slurm:$b.batch" "['pid']")

# ---- 4. live changes: never onto another job's TPCs ------------------------------------------------
a_tpcs=$(tpcs_of list-b "slurm:$a.batch")
b_tpcs=$(tpcs_of list-b "slurm:$b.batch")
"$gpupart" set "$b_pid" "$a_tpcs" "${S[@]}" > "$work/set-onto-a.out" 2> "$work/set-onto-a.err"; rc=$?
check "set job b onto job a's TPCs: refused" [ "$rc" -eq 1 ]
check "refused: one line" lines "$work/set-onto-a.err" 1
check "refused: names job a" contains "$work/set-onto-a.err" "would get TPCs $a_tpcs that Slurm job $a holds"
check "refused: the rule" contains "$work/set-onto-a.err" "[job-tpcs-taken;"
list_json list-refused
check "refused: job b keeps its mask" [ "$(mask_of list-refused "slurm:$b.batch")" = "$b_mask" ]
b_half=$(python3 -c 'import sys; print(",".join(sys.argv[1].split(",")[:1]))' "$b_tpcs")  # its first range
"$gpupart" set "$b_pid" "$b_half" "${S[@]}" > "$work/set-within.out" 2>&1; rc=$?
check "set job b within its own TPCs: works" [ "$rc" -eq 0 ]
"$gpupart" slurm jobs --json > "$work/jobs-within.json"
check "set within: job b's reservation follows" [ "$(json "$work/jobs-within.json" "[j['tpcs'] for j in d['gpus'][0]['jobs'] if j['job'] == 'slurm:$b']")" = "['$b_half']" ]
"$gpupart" set "$b_pid" "$b_tpcs" "${S[@]}" > "$work/set-back.out" 2>&1; rc=$?
check "set job b back onto its TPCs (free again): works" [ "$rc" -eq 0 ]

check "job a: still running (its task waits for a.go)" is_state "$a" RUNNING
# Grown beyond what Slurm gave it, job b leaves fewer free TPCs than Slurm counts: a job Slurm starts then
# cannot be placed, and fails with why, rather than run unconfined (the plugin is "required").
"$gpupart" set "$b_pid" "46 tpcs" "${S[@]}" > "$work/set-grow.out" 2>&1; rc=$?
check "grow job b to 46 TPCs (16 + 30 free): works" [ "$rc" -eq 0 ]
x=$(sbatch --parsable -J x -o "$work/jobs/x.out" -e "$work/jobs/x.err" --gres=tpc:10 --wrap "exec $host load:$fake launch:0x40")
check "job x (10 TPCs; Slurm counts 34 free, 4 are): ends" await_condition 30 job_gone "$x"
check "job x: failed" contains <(scontrol show job "$x") "JobState=FAILED"
check "job x: its stderr says why" contains "$work/jobs/x.err" \
    "gpupart: Slurm job $x asks 10 TPCs on GPU 0 (NVIDIA H200) but only 4 are free: Slurm job $a holds 16 ($a_tpcs); Slurm job $b holds 46"
check "job x: its task never ran" lacks "$work/jobs/x.out" "launch version"
"$gpupart" set "$b_pid" "$b_tpcs" "${S[@]}" > "$work/set-back2.out" 2>&1; rc=$?
check "job b back to its 16 TPCs: works" [ "$rc" -eq 0 ]

# ---- 5. a job that does not fit waits, then runs ----------------------------------------------------
submit c --gres=tpc:40  # 66 - 16 - 16 = 34 free
c=$job
check "job c (40 TPCs, 34 free): pending" await_condition 10 is_state "$c" PENDING
waits_for_resources() { [ "$(squeue -h -j "$1" -o %r)" = Resources ]; }
check "job c: Slurm says why (Resources)" await_condition 10 waits_for_resources "$c"
sleep 2
check "job c: still pending, nothing placed" [ ! -e "$work/jobs/c.ready" ]
touch "$work/jobs/a.go"  # job a ends
check "job a: ends" await_condition 30 job_gone "$a"
check "job c: runs once a has ended" started c
list_json list-c
c_mask=$(mask_of list-c "slurm:$c.batch")
check "job c: 40 TPCs" [ "$(count_of "$c_mask")" -eq 40 ]
check "jobs b and c: disjoint masks" disjoint "$b_mask" "$c_mask"
"$gpupart" slurm jobs --json > "$work/jobs-c.json"
check "slurm jobs: job a's TPCs were released" [ "$(json "$work/jobs-c.json" "[j['job'] for j in d['gpus'][0]['jobs'] if j['job'] == 'slurm:$a']")" = "[]" ]

# ---- 6. scancel frees a job's TPCs ------------------------------------------------------------------
scancel "$b"
check "job b: cancelled" await_condition 30 job_gone "$b"
"$gpupart" slurm jobs --json > "$work/jobs-cancelled.json"
check "scancel: job b's TPCs are released" [ "$(json "$work/jobs-cancelled.json" "[j['job'] for j in d['gpus'][0]['jobs'] if j['job'] == 'slurm:$b']")" = "[]" ]
# All 26 TPCs left: exactly the GPU's real TPCs that job c does not hold.
submit d --gres=tpc:26
d=$job
check "job d: the 26 TPCs c leaves, b's among them" started d
list_json list-d
d_mask=$(mask_of list-d "slurm:$d.batch")
check "job d: 26 TPCs" [ "$(count_of "$d_mask")" -eq 26 ]
check "jobs c and d: disjoint masks" disjoint "$c_mask" "$d_mask"

# ---- 7. srun steps share their job's TPCs ----------------------------------------------------------
touch "$work/jobs/c.go"
check "job c: ends" await_condition 30 job_gone "$c"
e=$(sbatch --parsable -J e -o "$work/jobs/e.out" -e "$work/jobs/e.err" --gres=tpc:8 \
    --wrap "srun --overlap $host load:$fake launch:0x40 && srun --overlap $host load:$fake launch:0x40")
check "job e (two srun steps): ends" await_condition 60 job_gone "$e"
check "job e: step 0 got the job's TPCs" contains "$work/jobs/e.err" "gpupart: Slurm job $e step 0: TPCs "
check "job e: step 1 shares them" matches "$work/jobs/e.err" "Slurm job $e step 1: TPCs .*: 8 TPCs, 16 SMs, the job's"
check "job e: both steps launched masked" [ "$(grep -c 'launch version=0x40 callback=1 word0=0xda5a5a5a' "$work/jobs/e.out")" -eq 2 ]

# ---- 8. a task killed: its step ends and gives the TPCs back ----------------------------------------
submit g --gres=tpc:8
g=$job
check "job g: starts" started g
list_json list-g
kill -KILL "$(process_of list-g "slurm:$g.batch" "['pid']")"
check "job g: ends once its task is killed" await_condition 30 job_gone "$g"
"$gpupart" slurm jobs --json > "$work/jobs-g.json"
check "killed task: job g's TPCs are released at its step's end" \
    [ "$(json "$work/jobs-g.json" "[j['job'] for j in d['gpus'][0]['jobs'] if j['job'] == 'slurm:$g']")" = "[]" ]

# ---- 9. a killed slurmstepd: its TPCs are swept at the next placement -------------------------------
"$gpupart" slurm jobs --json > "$work/jobs-d.json"
d_stepd=$(json "$work/jobs-d.json" "[j['steps'][0]['slurmstepd_pid'] for j in d['gpus'][0]['jobs'] if j['job'] == 'slurm:$d'][0]")
d_pid=$(process_of list-d "slurm:$d.batch" "['pid']")
kill -KILL "$d_stepd" "$d_pid"
check "job d: slurmstepd and task killed" await_condition 10 bash -c "! kill -0 $d_stepd 2> /dev/null && ! kill -0 $d_pid 2> /dev/null"
"$gpupart" slurm jobs > "$work/jobs-killed.txt"
check "slurm jobs: job d's step is gone" matches "$work/jobs-killed.txt" "slurm:$d .*slurm:$d\.batch \(gone\)"
f=$(sbatch --parsable -J f -o "$work/jobs/f.out" -e "$work/jobs/f.err" --gres=tpc:8 --wrap "exec $host load:$fake launch:0x40")
check "job f: runs" await_condition 30 job_gone "$f"
"$gpupart" slurm jobs --json > "$work/jobs-swept.json"
check "job f's placement swept job d" [ "$(json "$work/jobs-swept.json" "[j['job'] for j in d['gpus'][0]['jobs'] if j['job'] == 'slurm:$d']")" = "[]" ]
check "the sweep is in slurmd's log" grep -q "gpupart: Slurm job $d: TPCs .* released" "$work/cluster/log/slurmd.log"
scancel "$d"

checks_summary slurm_end_to_end
