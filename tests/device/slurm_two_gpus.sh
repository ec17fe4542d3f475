#!/usr/bin/env bash
# TPCs as a Slurm resource on a machine of two GPUs (kind nvidia-h200-x2): the Slurm cluster of slurm_device.sh with one tpc
# type per GPU. PyTorch matmul jobs at once: a with all 66 TPCs of GPU 0, b and c with 33 each of GPU 1
# (disjoint, under GPU 1's MPS server); d (untyped tpc:20) PENDING while both GPUs are full, then running once
# a ends; last e, one job on both GPUs (tpc:gpu0:16,tpc:gpu1:16) running one process per GPU. OUT_DIR gets
# the cluster config and logs, squeue/scontrol/gpupart list output, each process's rate log and summary.txt
# (VERDICT PASS or FAIL).
#   slurm_two_gpus.sh CARRY_DIR OUT_DIR
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=device_env.sh
. "$here/device_env.sh" "$1" "$2" gpupart-slurm2  # bin, out, gp, GPUPART_*
# shellcheck source-path=SCRIPTDIR source=slurm_device_cluster.sh
. "$here/slurm_device_cluster.sh"  # the cluster on this node, gres/tpc for its GPUs: node, cluster_dir
"$gp" gpus > "$out/gpus.txt" 2>&1
job() {  # job NAME GRES SECONDS: a PyTorch matmul job on the GPU(s) Slurm gives it; its id on stdout
    sbatch --parsable -J "$1" -o "$out/$1.out" -e "$out/$1.err" --gres="$2" --export="ALL,PYTHONUNBUFFERED=1" \
        --wrap "echo visible=\$CUDA_VISIBLE_DEVICES; exec python3 $here/torch_rate.py $out/rate-$1.txt $3 mm"
}
state() { squeue -h -j "$1" -o %T; }
a=$(job a tpc:gpu0:66 40)
b=$(job b tpc:gpu1:33 40)
c=$(job c tpc:gpu1:33 40)
for _ in $(seq 120); do [ -s "$out/rate-a.txt" ] && [ -s "$out/rate-b.txt" ] && [ -s "$out/rate-c.txt" ] && break; sleep 1; done
d=$(job d tpc:20 10)
sleep 8
squeue -o '%i %j %T %R %b' > "$out/squeue-abc.txt"
for id in "$a" "$b" "$c"; do scontrol show -d job "$id"; done > "$out/scontrol-abc.txt"
"$gp" list --json > "$out/list-abc.json" 2>&1
"$gp" list > "$out/list-abc.txt" 2>&1
"$gp" slurm jobs > "$out/slurm-jobs-abc.txt" 2>&1
d_while=$(state "$d")
for _ in $(seq 120); do [ -z "$(state "$a")" ] && break; sleep 1; done
for _ in $(seq 60); do [ "$(state "$d")" = RUNNING ] && break; sleep 1; done
d_after=$(state "$d")
scontrol show -d job "$d" > "$out/scontrol-d.txt"
"$gp" list --json > "$out/list-d.json" 2>&1
for _ in $(seq 120); do [ -z "$(squeue -h -o %i)" ] && break; sleep 1; done
# One job on both GPUs: one process per GPU, each seeing only its own (the shim's masks are per GPU UUID).
e=$(sbatch --parsable -J e -o "$out/e.out" -e "$out/e.err" --gres=tpc:gpu0:16,tpc:gpu1:16 \
    --export="ALL,PYTHONUNBUFFERED=1" --wrap "echo visible=\$CUDA_VISIBLE_DEVICES
i=0; for v in \$(echo \$CUDA_VISIBLE_DEVICES | tr , ' '); do
  CUDA_VISIBLE_DEVICES=\$v python3 $here/torch_rate.py $out/rate-e\$i.txt 20 mm & i=\$((i + 1)); done; wait")
for _ in $(seq 120); do [ -s "$out/rate-e0.txt" ] && [ -s "$out/rate-e1.txt" ] && break; sleep 1; done
sleep 5
"$gp" list --json > "$out/list-e.json" 2>&1
"$gp" slurm jobs > "$out/slurm-jobs-e.txt" 2>&1
for _ in $(seq 120); do [ -z "$(squeue -h -o %i)" ] && break; sleep 1; done
"$gp" slurm jobs > "$out/slurm-jobs-end.txt" 2>&1
python3 - "$out" "$a" "$b" "$c" "$d" "$e" "$d_while" "$d_after" <<'PY' | tee "$out/summary.txt"
import json, re, sys
out, a, b, c, d, e, d_while, d_after = sys.argv[1:]
uuids = [re.search(r"GPU-[0-9a-f-]{36}", l).group(0) for l in open(f"{out}/gpus.txt") if re.search(r"GPU-[0-9a-f-]{36}", l)]
print("GPUs:", uuids)
ok = len(uuids) == 2
def masks(listing, job):  # {uuid: mask} of the job's processes (batch step), GPUs with a mask only
    d = json.load(open(f"{out}/{listing}"))
    got = {}
    for p in d.get("processes", []):
        if p.get("job", "").startswith(f"slurm:{job}."):
            for g in p["gpus"]:
                if g["requested"]["tpcs"] != "all":
                    got[g["uuid"]] = got.get(g["uuid"], 0) | int(g["requested"]["mask"], 16)
    return got
def visible(name):
    return [l.strip()[8:] for l in open(f"{out}/{name}.out") if l.startswith("visible=")][:1]
def rate(name):
    try:
        r = sorted(float(l.split()[1]) for l in open(f"{out}/rate-{name}.txt") if len(l.split()) > 1)
        return r[len(r) // 2] if r else 0.0
    except OSError:
        return 0.0
ma, mb, mc = masks("list-abc.json", a), masks("list-abc.json", b), masks("list-abc.json", c)
for name, m in (("a", ma), ("b", mb), ("c", mc)):
    print(f"job {name}: " + ", ".join(f"GPU {uuids.index(u) if u in uuids else '?'} {bin(x).count('1')} TPCs" for u, x in m.items())
          + f"; sees {visible(name)}; median {rate(name):.0f} TFLOP/s")
if ok:
    g0, g1 = uuids
    ok &= list(ma) == [g0] and bin(ma[g0]).count("1") == 66 and visible("a") == [g0]
    ok &= list(mb) == [g1] and list(mc) == [g1] and bin(mb[g1]).count("1") == 33 and bin(mc[g1]).count("1") == 33
    ok &= mb[g1] & mc[g1] == 0 and visible("b") == [g1] and visible("c") == [g1]
    print("b and c disjoint on GPU 1:", mb[g1] & mc[g1] == 0)
    print(f"a (66 TPCs, GPU 0 alone) against b + c (33 + 33, GPU 1 shared): {rate('a'):.0f} vs {rate('b'):.0f} + {rate('c'):.0f} TFLOP/s")
    ok &= rate("a") > 0 and rate("b") > 0 and rate("c") > 0
md = masks("list-d.json", d)
print(f"job d (tpc:20, no type) while GPUs were full: {d_while}; after a ended: {d_after}; placed "
      + ", ".join(f"GPU {uuids.index(u) if u in uuids else '?'} {bin(x).count('1')} TPCs" for u, x in md.items()))
print("Slurm gave d:", re.findall(r"GRES=tpc:[^ ]*\(CNT:\d+\)", open(f"{out}/scontrol-d.txt").read()))
ok &= d_while == "PENDING" and d_after in ("RUNNING", "") and sum(bin(x).count("1") for x in md.values()) == 20
me = masks("list-e.json", e)
print("job e: " + ", ".join(f"GPU {uuids.index(u) if u in uuids else '?'} {bin(x).count('1')} TPCs" for u, x in me.items())
      + f"; sees {visible('e')}; per-GPU medians {rate('e0'):.0f} and {rate('e1'):.0f} TFLOP/s")
ok &= len(me) == 2 and all(bin(x).count("1") == 16 for x in me.values()) and rate("e0") > 0 and rate("e1") > 0
ok &= "slurm:" not in open(f"{out}/slurm-jobs-end.txt").read()
print("VERDICT", "PASS" if ok else "FAIL")
PY
# The verdict is the script's status: a failed one must fail the run, not only print FAIL.
grep -qx "VERDICT PASS" "$out/summary.txt"
