#!/usr/bin/env bash
# Interactive Slurm jobs and jobs that ask no TPCs, with gpupart's SPANK plugin installed: the same private
# munged + slurmctld + slurmd as slurm_end_to_end.sh, the built gpupart_spank.so, and the shim tests'
# stand-in CUDA program under the TEST DOUBLE driver. Checked: `srun` and `salloc ... srun`, with and without
# --gres=tpc (the node's name comes from slurmd, not from a batch step's environment); a step that asked no
# TPCs gets what the plugin's notpc= says: the node's GPUs hidden (the default), its tasks refused, or run
# unconfined; tpc:0 is no TPCs. The plugstack is read anew by every step, so the test rewrites it between
# jobs rather than restart the cluster.
#   slurm_interactive.sh GPUPART SPANK_SO SHIM_SO FAKE_DRIVER_DIR SHIM_HOST WORK_DIR
# shellcheck source-path=SCRIPTDIR source=slurm_test_lib.sh
. "$(dirname "$0")/slurm_test_lib.sh" "$@"  # gpupart, spank, shim, fake, host, work; registry, cleanup, helpers
node="gpupart-ctest-i"
plugin_args="gpupart=$gpupart snapshot=builtin:h200 registry=$GPUPART_REGISTRY_DIR shim=$shim"
plugstack() { printf 'required %s %s %s\n' "$spank" "$plugin_args" "$1" > "$cluster/etc/plugstack.conf"; }
# What a task sees of CUDA_VISIBLE_DEVICES: "cvd=[]" hidden, "cvd=[unset]" left alone.
show_cvd='echo "cvd=[${CUDA_VISIBLE_DEVICES-unset}]"'
run_srun() {  # run_srun NAME SRUN-ARGS...: srun in the foreground (60 s at most); rc in $rc
    local name=$1
    shift
    timeout 60 srun "$@" > "$work/jobs/$name.out" 2> "$work/jobs/$name.err"; rc=$?
}
run_salloc() {  # run_salloc NAME SALLOC-ARGS...: salloc running its command (60 s at most); rc in $rc
    local name=$1
    shift
    timeout 60 salloc "$@" > "$work/jobs/$name.out" 2> "$work/jobs/$name.err"; rc=$?
}
masked_launch() { grep -q 'launch version=0x40 callback=1 word0=0xda5a5a5a mask=' "$work/jobs/$1.out"; }

"$gpupart" slurm conf --snapshot builtin:h200 --node "$node" --plugin "$spank" > "$work/conf.txt" 2> "$work/conf.err"
cluster_from_conf "$work/conf.txt" "$node" "$plugin_args"

# ---- 1. srun with no job around it, no TPCs asked: it runs, the GPUs hidden --------------------------
run_srun plain hostname
check "srun hostname (no tpc): exits 0" [ "$rc" -eq 0 ]
check "srun hostname: printed the host name" [ -s "$work/jobs/plain.out" ]
check "srun hostname: no plugin failure" lacks "$work/jobs/plain.err" "task_init() failed"
run_srun hidden bash -c "$show_cvd"
check "srun (no tpc): its task sees no GPU" contains "$work/jobs/hidden.out" "cvd=[]"
check "srun (no tpc): stderr says why, once" [ "$(grep -c "asked no TPCs: this node's GPUs, shared by TPC, are hidden" "$work/jobs/hidden.err")" -eq 1 ]

# ---- 2. srun --gres=tpc: placed like a batch job ------------------------------------------------------
run_srun tpc8 --gres=tpc:8 "$host" load:"$fake" launch:0x40
check "srun --gres=tpc:8: exits 0" [ "$rc" -eq 0 ]
check "srun --gres=tpc:8: its step is placed" matches "$work/jobs/tpc8.err" "gpupart: Slurm job [0-9]+ step 0: TPCs [0-9,-]+ on GPU 0 .*: 8 TPCs, 16 SMs, GPC-packed"
check "srun --gres=tpc:8: its launch carries a mask" masked_launch tpc8
run_srun typed --gres=tpc:gpu0:4 "$host" load:"$fake" launch:0x40
check "srun --gres=tpc:gpu0:4: placed" matches "$work/jobs/typed.err" "step 0: TPCs [0-9,-]+ on GPU 0 .*: 4 TPCs, 8 SMs"
check "srun --gres=tpc:gpu0:4: masked" masked_launch typed

# ---- 3. salloc, then srun steps inside the allocation --------------------------------------------------
run_salloc alloc8 --gres=tpc:8 srun "$host" load:"$fake" launch:0x40
check "salloc --gres=tpc:8 srun: exits 0" [ "$rc" -eq 0 ]
check "salloc --gres=tpc:8 srun: the step is placed" matches "$work/jobs/alloc8.err" "step 0: TPCs [0-9,-]+ on GPU 0 .*: 8 TPCs"
check "salloc --gres=tpc:8 srun: masked" masked_launch alloc8
run_salloc alloc-none srun bash -c "$show_cvd"
check "salloc srun (no tpc): exits 0" [ "$rc" -eq 0 ]
check "salloc srun (no tpc): the GPUs hidden" contains "$work/jobs/alloc-none.out" "cvd=[]"
"$gpupart" slurm jobs --json > "$work/jobs-after.json"
check "every interactive job's TPCs were given back" [ "$(json "$work/jobs-after.json" "sum(len(g['jobs']) for g in d['gpus'])")" = 0 ]

# ---- 4. tpc:0 is no TPCs ------------------------------------------------------------------------------
run_srun tpc0 --gres=tpc:0 bash -c "$show_cvd"
check "srun --gres=tpc:0: runs" [ "$rc" -eq 0 ]
check "srun --gres=tpc:0: the GPUs hidden, not unconfined" contains "$work/jobs/tpc0.out" "cvd=[]"

# ---- 5. notpc=refuse: a step that asked no TPCs does not start ------------------------------------------
plugstack notpc=refuse
run_srun refused bash -c "$show_cvd"
check "notpc=refuse: srun without tpc fails" [ "$rc" -ne 0 ]
check "notpc=refuse: its task never ran" lacks "$work/jobs/refused.out" "cvd="
check "notpc=refuse: says what to ask" contains "$work/jobs/refused.err" "asked no TPCs of this node's GPUs, which are shared by TPC: its tasks do not start (ask --gres=tpc:COUNT"
r=$(sbatch --parsable -J r -o "$work/jobs/r.out" -e "$work/jobs/r.err" --wrap "$show_cvd")
check "notpc=refuse: a batch job without tpc ends" await_condition 30 job_gone "$r"
check "notpc=refuse: it failed" contains <(scontrol show job "$r") "JobState=FAILED"
check "notpc=refuse: its stderr says why" contains "$work/jobs/r.err" "asked no TPCs of this node's GPUs"
run_srun refuse-tpc --gres=tpc:4 "$host" load:"$fake" launch:0x40
check "notpc=refuse: a step with TPCs still runs, masked" masked_launch refuse-tpc

# ---- 6. notpc=run: today's behaviour, unconfined, by the admin's choice --------------------------------
plugstack notpc=run
run_srun unconfined bash -c "$show_cvd"
check "notpc=run: runs" [ "$rc" -eq 0 ]
check "notpc=run: CUDA_VISIBLE_DEVICES left alone" contains "$work/jobs/unconfined.out" "cvd=[unset]"
check "notpc=run: no gpupart line" lacks "$work/jobs/unconfined.err" "gpupart:"

# ---- 7. a wrong argument is said, not ignored ----------------------------------------------------------
plugstack notpc=maybe
run_srun bad-arg hostname
check "notpc=maybe: the step fails" [ "$rc" -ne 0 ]
check "notpc=maybe: srun names the argument" contains "$work/jobs/bad-arg.err" "unknown plugstack argument 'notpc=maybe'"

checks_summary slurm_interactive
