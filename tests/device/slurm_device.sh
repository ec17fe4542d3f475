#!/usr/bin/env bash
# TPCs as a Slurm resource on a real GPU: Debian 12's Slurm 22.05 (carried as .device-carry/slurm.tar.xz by stage_slurm.sh:
# the GPU machine has neither Slurm nor apt) runs munged, slurmctld and slurmd on localhost with gres/tpc
# from `gpupart slurm conf` and the built gpupart_spank.so (tests/slurm/slurm_cluster.sh, as in CI). Two
# PyTorch matmul jobs with --gres=tpc:gpu0:33 run side by side under the shim and the GPU's MPS server; a
# third job (tpc:gpu0:20) waits PENDING until one ends. OUT_DIR gets the cluster config and logs, squeue and
# scontrol output, gpupart list/slurm jobs, each job's rate log and summary.txt.
#   slurm_device.sh CARRY_DIR OUT_DIR
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=device_env.sh
. "$here/device_env.sh" "$1" "$2" gpupart-slurm  # bin, out, gp, GPUPART_*
# shellcheck source-path=SCRIPTDIR source=slurm_device_cluster.sh
. "$here/slurm_device_cluster.sh"  # the cluster on this node, gres/tpc for its GPUs: node, cluster_dir
job() {  # job NAME TPCS SECONDS: a PyTorch matmul job; its id on stdout
    sbatch --parsable -J "$1" -o "$out/$1.out" -e "$out/$1.err" --gres="tpc:gpu0:$2" \
        --export="ALL,PYTHONUNBUFFERED=1" --wrap "exec python3 $here/torch_rate.py $out/rate-$1.txt $3 mm"
}
a=$(job a 33 40)
b=$(job b 33 40)
for _ in $(seq 90); do [ -s "$out/rate-a.txt" ] && [ -s "$out/rate-b.txt" ] && break; sleep 1; done
c=$(job c 20 10)
sleep 8
squeue -o '%i %j %T %R %b' > "$out/squeue-while-ab.txt"
scontrol show -d job "$a" > "$out/scontrol-a.txt"
"$gp" list --json > "$out/list-ab.json" 2>&1
"$gp" list > "$out/list-ab.txt" 2>&1
"$gp" slurm jobs > "$out/slurm-jobs-ab.txt" 2>&1
c_state_while_ab=$(squeue -h -j "$c" -o %T)
for _ in $(seq 120); do [ -z "$(squeue -h -j "$a" -o %T)" ] && break; sleep 1; done
for _ in $(seq 60); do [ "$(squeue -h -j "$c" -o %T)" = RUNNING ] && break; sleep 1; done
c_state_after_a=$(squeue -h -j "$c" -o %T)
"$gp" list --json > "$out/list-bc.json" 2>&1
for _ in $(seq 120); do [ -z "$(squeue -h -o %i)" ] && break; sleep 1; done
"$gp" slurm jobs > "$out/slurm-jobs-end.txt" 2>&1
python3 - "$out" "$a" "$b" "$c" "$c_state_while_ab" "$c_state_after_a" <<'PY' | tee "$out/summary.txt"
import json, sys
out, a, b, c, c_while, c_after = sys.argv[1:]
def procs(name):
    d = json.load(open(f"{out}/{name}"))
    return {p.get("job", ""): p for p in d.get("processes", []) if p.get("job")}
def mask(p):
    return int(p["gpus"][0]["requested"]["mask"], 16)
ab = procs("list-ab.json")
print("processes with a Slurm job while a and b ran:", sorted(ab))
pa = [p for j, p in ab.items() if j.startswith(f"slurm:{a}.")]
pb = [p for j, p in ab.items() if j.startswith(f"slurm:{b}.")]
ok = bool(pa) and bool(pb)
if ok:
    ma, mb = mask(pa[0]), mask(pb[0])
    print(f"job {a}: {bin(ma).count('1')} TPCs {pa[0]['gpus'][0]['requested']['tpcs']}")
    print(f"job {b}: {bin(mb).count('1')} TPCs {pb[0]['gpus'][0]['requested']['tpcs']}")
    print("disjoint:", ma & mb == 0)
    ok = ok and ma & mb == 0 and bin(ma).count("1") == 33 and bin(mb).count("1") == 33
for name in ("a", "b", "c"):
    try:
        rates = [float(l.split()[1]) for l in open(f"{out}/rate-{name}.txt") if len(l.split()) > 1]
        print(f"job {name}: {len(rates)} rate samples, median {sorted(rates)[len(rates) // 2]:.0f} TFLOP/s")
    except (OSError, ValueError, IndexError) as e:
        print(f"job {name}: no rate log ({e})")
print(f"job {c} (tpc:20) while a and b held 66 TPCs: {c_while}; after a ended: {c_after}")
ok = ok and c_while == "PENDING" and c_after in ("RUNNING", "")
print("VERDICT", "PASS" if ok else "FAIL")
PY
# The verdict is the script's status: a failed one must fail the run, not only print FAIL.
grep -qx "VERDICT PASS" "$out/summary.txt"
