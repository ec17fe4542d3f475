#!/usr/bin/env bash
# TPCs as a Slurm resource on a node of several GPUs (a multi-GPU server): the same private
# munged + slurmctld + slurmd as slurm_end_to_end.sh, with the TEST DOUBLE CUDA driver playing the three GPUs
# of tests/fixtures/multi-gpu (an H100, an H200, an H100 with TPC bits 0-3 fused off: 66, 66 and 62 TPCs).
# Checked: one tpc type per GPU with its own real count; a job asking TPCs of GPU 1 gets them there only and
# sees only that GPU (its device 0 is GPU 1, its launches carry the mask); a full GPU queues the next job for
# that GPU while a job for another GPU runs; a job on two GPUs gets a mask on each, disjoint from the other
# jobs there, and sees both GPUs; the floorswept GPU's mask holds no hole; `gpupart slurm jobs` per GPU; a
# request without a type that Slurm splits over two GPUs is placed on each GPU with the count Slurm gave it.
#   slurm_multi_gpu.sh GPUPART SPANK_SO SHIM_SO FAKE_DRIVER_DIR SHIM_HOST WORK_DIR
# shellcheck source-path=SCRIPTDIR source=slurm_test_lib.sh
. "$(dirname "$0")/slurm_test_lib.sh" "$@"  # gpupart, spank, shim, fake, host, work; registry, cleanup, helpers
snapshot=$(cd "$(dirname "$0")/../fixtures/multi-gpu" && pwd)/three-gpus.json
S=(--snapshot "$snapshot")
U0=GPU-e019853f-a4a4-3629-5365-9ff6caee6a2c  # GPU 0: the recorded H100, 66 TPCs
U1=GPU-258f535b-999d-058c-3642-767b7fb8d4f0  # GPU 1: the recorded H200, 66 TPCs
U2=GPU-3ecd459c-0b85-7603-9390-0000000000f3  # GPU 2: TPC bits 0-3 are holes there, 62 TPCs
export FAKE_CUDA_GPUS=$U0,$U1,$U2            # the machine the test double plays; jobs inherit it (sbatch --export=ALL)
export HOST_WAIT_SECONDS=120                 # jobs a and b must outlive the later jobs' scheduling (ended by .go files)
node="gpupart-ctest-3gpu"
# `gpupart list` numbers a GPU's masks with its map: this machine's topology does not give the fixture's GPUs.
list_json() { "$gpupart" list "${S[@]}" --json > "$work/$1.json" 2> "$work/$1.err"; }

submit_steps() {  # submit_steps NAME STEPS SBATCH-OPTIONS...: the stand-in CUDA program running STEPS; id in $job
    local name=$1 steps=$2
    shift 2
    job=$(sbatch --parsable -J "$name" -o "$work/jobs/$name.out" -e "$work/jobs/$name.err" "$@" --wrap \
        "echo visible=\$CUDA_VISIBLE_DEVICES; exec $host load:$fake $steps ready:$work/jobs/$name.ready wait:$work/jobs/$name.go")
}
submit() { submit_steps "$1" "device:0 launch:0x40" "${@:2}"; }                          # launches on device 0
submit_two() { submit_steps "$1" "device:0 launch:0x40 device:1 launch:0x40" "${@:2}"; }  # on devices 0 and 1
# The GPU entries (uuid, requested TPCs, applied TPCs) of job step $2's process in list file $1.
gpus_of() {
    json "$work/$1.json" "[(g['uuid'], g['requested']['tpcs'], g['shim']['applied_tpcs']) for p in d['processes'] if p.get('job') == '$2' for g in p['gpus'] if g['requested']['tpcs'] != 'all']"
}
mask_on() {  # mask_on LIST STEP UUID: the step's mask on that GPU (hex)
    json "$work/$1.json" "[g['requested']['mask'] for p in d['processes'] if p.get('job') == '$2' for g in p['gpus'] if g['uuid'] == '$3'][0]"
}
# The n-th launch line (1-based) the task printed carries the complement (disable bits) of the descriptor bits
# of MASK (TPC numbers, hex) on GPU (its index in the fixture).
launch_carries() {  # launch_carries NAME N MASK GPU
    grep 'launch version=0x40' "$work/jobs/$1.out" | sed -n "$2p" |
        grep -qF "callback=1 word0=0xda5a5a5a mask=$(disable_words "$(descriptor_bits_of "$3" "$snapshot" "$4")") "
}
jobs_on() {  # jobs_on GPU-UUID: "job:count" pairs `gpupart slurm jobs --json` lists on that GPU
    "$gpupart" slurm jobs --json > "$work/jobs-now.json" &&
        json "$work/jobs-now.json" "sorted(j['job'] + ':' + str(j['tpc_count']) for g in d['gpus'] if g['gpu_uuid'] == '$1' for j in g['jobs'])"
}

# ---- 1. one tpc type per GPU, each with that GPU's real TPCs -----------------------------------------
"$gpupart" slurm conf "${S[@]}" --node "$node" --plugin "$spank" > "$work/conf.txt" 2> "$work/conf.err"; rc=$?
check "slurm conf: exits 0" [ "$rc" -eq 0 ]
check "slurm conf: GPU 0, 66 TPCs" contains "$work/conf.txt" "NodeName=$node Name=tpc Type=gpu0 Count=66 Flags=CountOnly"
check "slurm conf: GPU 2 counts its 62 real TPCs, not 66" contains "$work/conf.txt" "NodeName=$node Name=tpc Type=gpu2 Count=62 Flags=CountOnly"
check "slurm conf: the node's Gres has all three" contains "$work/conf.txt" "NodeName=$node Gres=tpc:gpu0:66,tpc:gpu1:66,tpc:gpu2:62"
cluster_from_conf "$work/conf.txt" "$node" "gpupart=$gpupart snapshot=$snapshot registry=$GPUPART_REGISTRY_DIR shim=$shim"
check "cluster: the node offers the three GPUs' TPCs" contains <(scontrol show node "$node") "Gres=tpc:gpu0:66,tpc:gpu1:66,tpc:gpu2:62"

# ---- 2. 16 TPCs of GPU 1: there only, and the job sees only GPU 1 ------------------------------------
"$gpupart" run --dry-run --gpu 1 --tpcs "16 tpcs" "${S[@]}" -- true > "$work/dry16.txt" 2>&1
packed16=$(sed -n 's/^would start true on TPCs \([^ ]*\) (16 TPCs.*/\1/p' "$work/dry16.txt")
check "gpupart run --dry-run places 16 TPCs on GPU 1" [ -n "$packed16" ]
submit a --gres=tpc:gpu1:16
a=$job
check "job a (tpc:gpu1:16): starts" started a
check "job a: sees GPU 1 only" contains "$work/jobs/a.out" "visible=$U1"
list_json list-a
check "job a: a mask on GPU 1 alone, GPC-packed where gpupart places 16" \
    [ "$(gpus_of list-a "slurm:$a.batch")" = "[('$U1', '$packed16', '$packed16')]" ]
a_mask=$(mask_on list-a "slurm:$a.batch" "$U1")
check "job a: its device 0 (GPU 1) launches with the mask" launch_carries a 1 "$a_mask" 1
check "job a: stderr names GPU 1" contains "$work/jobs/a.err" \
    "gpupart: Slurm job $a step batch: TPCs $packed16 on GPU 1 (NVIDIA H200, $U1): 16 TPCs, 32 SMs, GPC-packed"
check "slurm jobs: a holds 16 on GPU 1, nothing on GPU 0" [ "$(jobs_on $U1)|$(jobs_on $U0)" = "['slurm:$a:16']|[]" ]

# ---- 3. a full GPU 0 queues the next GPU 0 job; a job for GPU 2 runs meanwhile -----------------------
submit b --gres=tpc:gpu0:66
b=$job
check "job b (all 66 of GPU 0): starts" started b
check "job b: sees GPU 0 only" contains "$work/jobs/b.out" "visible=$U0"
submit c --gres=tpc:gpu0:1
c=$job
check "job c (1 TPC of the full GPU 0): pending" await_condition 10 is_state "$c" PENDING
submit d --gres=tpc:gpu2:30
d=$job
check "job d (30 of GPU 2): runs while c waits" started d
check "job c: still pending, nothing placed" [ ! -e "$work/jobs/c.ready" ]
list_json list-d
d_mask=$(mask_on list-d "slurm:$d.batch" "$U2")
check "job d: 30 TPCs on GPU 2" [ "$(count_of "$d_mask")" -eq 30 ]
check "job d: none of GPU 2's fused-off TPC bits 0-3" disjoint "$(descriptor_bits_of "$d_mask" "$snapshot" 2)" 0xf
check "job d: its launch carries its mask" launch_carries d 1 "$d_mask" 2

# ---- 4. one job on two GPUs: a mask on each, disjoint from what a and d hold there -------------------
submit_two e --gres=tpc:gpu1:8,tpc:gpu2:8
e=$job
check "job e (8 of GPU 1 and 8 of GPU 2): starts" started e
check "job e: sees GPUs 1 and 2, in that order" contains "$work/jobs/e.out" "visible=$U1,$U2"
list_json list-e
e1=$(mask_on list-e "slurm:$e.batch" "$U1")
e2=$(mask_on list-e "slurm:$e.batch" "$U2")
check "job e: 8 TPCs on GPU 1" [ "$(count_of "$e1")" -eq 8 ]
check "job e: 8 TPCs on GPU 2" [ "$(count_of "$e2")" -eq 8 ]
check "job e: masks on GPUs 1 and 2 only" [ "$(json "$work/list-e.json" "sorted(g['uuid'] for p in d['processes'] if p.get('job') == 'slurm:$e.batch' for g in p['gpus'] if g['requested']['tpcs'] != 'all')")" = "['$U1', '$U2']" ]
check "jobs a and e on GPU 1: disjoint" disjoint "$a_mask" "$e1"
check "jobs d and e on GPU 2: disjoint" disjoint "$d_mask" "$e2"
check "job e: GPU 2's mask holds no hole" disjoint "$(descriptor_bits_of "$e2" "$snapshot" 2)" 0xf
check "job e: device 0 (GPU 1) launches with GPU 1's mask" launch_carries e 1 "$e1" 1
check "job e: device 1 (GPU 2) launches with GPU 2's mask" launch_carries e 2 "$e2" 2
check "slurm jobs: GPU 1 holds a and e, GPU 2 holds d and e" \
    [ "$(jobs_on $U1)|$(jobs_on $U2)" = "$(python3 -c "print(sorted(['slurm:$a:16', 'slurm:$e:8']), '|', sorted(['slurm:$d:30', 'slurm:$e:8']), sep='')")" ]

# ---- 5. a live set never moves a job onto another GPU's job's TPCs, and GPU 0 frees for c -------------
e_pid=$(json "$work/list-e.json" "[p['pid'] for p in d['processes'] if p.get('job') == 'slurm:$e.batch'][0]")
d_tpcs=$(json "$work/list-e.json" "[g['requested']['tpcs'] for p in d['processes'] if p.get('job') == 'slurm:$d.batch' for g in p['gpus'] if g['uuid'] == '$U2'][0]")
"$gpupart" set "$e_pid" "$d_tpcs" --gpu 2 "${S[@]}" > "$work/set-onto-d.out" 2> "$work/set-onto-d.err"; rc=$?
check "set job e's GPU 2 onto job d's TPCs: refused" [ "$rc" -eq 1 ]
check "refused: names job d" contains "$work/set-onto-d.err" "Slurm job $d holds"
list_json list-refused
check "refused: job e keeps its GPU 2 mask" [ "$(mask_on list-refused "slurm:$e.batch" "$U2")" = "$e2" ]
scancel "$b"
check "job b: cancelled" await_condition 30 job_gone "$b"
check "job c: runs on GPU 0 once b is gone" started c
check "job c: sees GPU 0 only" contains "$work/jobs/c.out" "visible=$U0"
check "slurm jobs: GPU 0 holds c's 1 TPC" [ "$(jobs_on $U0)" = "['slurm:$c:1']" ]

for name in a c d e; do touch "$work/jobs/$name.go"; done
for id in "$a" "$c" "$d" "$e"; do await_condition 30 job_gone "$id"; done
check "every job ended and gave its TPCs back" [ "$(jobs_on $U0)$(jobs_on $U1)$(jobs_on $U2)" = "[][][]" ]

# ---- 6. a request without a type: Slurm (22.05) fills the lowest GPU first and splits the rest over the
# next one; the plugin places each GPU's share. (sbatch refuses an untyped count above one GPU's TPCs.)
submit g --gres=tpc:gpu0:60
g=$job
check "job g (60 of GPU 0): starts" started g
submit_two f --gres=tpc:66
f=$job
check "job f (tpc:66, untyped, 6 free on GPU 0): starts" started f
scontrol show -d job "$f" > "$work/scontrol-f.txt"
# "GRES=tpc:gpu0(CNT:6),tpc:gpu1(CNT:60)": what Slurm gave per GPU, as uuid:count
slurm_split=$(python3 -c '
import re, sys
uuids = sys.argv[2:]
got = re.findall(r"tpc:gpu(\d)\(CNT:(\d+)\)", open(sys.argv[1]).read())
print(sorted("%s:%s" % (uuids[int(g)], n) for g, n in got))' "$work/scontrol-f.txt" "$U0" "$U1" "$U2")
list_json list-f
placed=$(json "$work/list-f.json" "sorted(g['uuid'] + ':' + str(bin(int(g['requested']['mask'], 16)).count('1')) for p in d['processes'] if p.get('job') == 'slurm:$f.batch' for g in p['gpus'] if g['requested']['tpcs'] != 'all')")
check "job f: Slurm split 66 over two GPUs ($slurm_split)" [ "$(python3 -c "import sys; l = eval(sys.argv[1]); print(len(l), sum(int(x.split(':')[1]) for x in l))" "$slurm_split")" = "2 66" ]
check "job f: each GPU got the count Slurm gave it" [ "$placed" = "$slurm_split" ]
check "job f: on GPU 0, disjoint from job g" disjoint "$(mask_on list-f "slurm:$f.batch" "$U0")" "$(mask_on list-f "slurm:$g.batch" "$U0")"
check "job f: sees exactly those two GPUs" [ "$(sed -n 's/^visible=//p' "$work/jobs/f.out" | tr , '\n' | sort | tr '\n' ' ')" = "$(python3 -c "import sys; print(' '.join(sorted(x.split(':')[0] for x in eval(sys.argv[1]))) + ' ')" "$slurm_split")" ]
check "job f: both of its devices launch masked" [ "$(grep -c 'launch version=0x40 callback=1 word0=0xda5a5a5a mask=' "$work/jobs/f.out")" -eq 2 ]
touch "$work/jobs/f.go" "$work/jobs/g.go"
check "jobs f and g: end" await_condition 30 bash -c "[ -z \"\$(squeue -h -o %i)\" ]"
check "job f: its TPCs on both GPUs are given back" [ "$(jobs_on $U0)$(jobs_on $U1)$(jobs_on $U2)" = "[][][]" ]

checks_summary slurm_multi_gpu
