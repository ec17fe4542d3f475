#!/usr/bin/env bash
# one launching thread: the shim as it was against one that counts launches without locked instructions
set -u
. tests/device/device_env.sh .device-carry "$1" gpupart-oneab
export XDG_CACHE_HOME=$out/cache
"$gp" probe > "$out/probe.txt" 2>&1 || { echo probe failed; exit 1; }
lean=$bin/libgpupart-shim-lean.so
variant() {
    local threads=$2
    local prog=("$bin/gpupart-bench-threads" --threads "$threads" --stream own --ms 700)
    case $1 in
        bare) "${prog[@]}" ;;
        run-all) "$gp" run --tpcs all -- "${prog[@]}" ;;
        lean-all) GPUPART_SHIM=$lean "$gp" run --tpcs all -- "${prog[@]}" ;;
        run-half) "$gp" run --tpcs gpc0-3 -- "${prog[@]}" ;;
        lean-half) GPUPART_SHIM=$lean "$gp" run --tpcs gpc0-3 -- "${prog[@]}" ;;
    esac
}
for round in $(seq 1 12); do
  for threads in 1 8; do
    for v in bare run-all lean-all run-half lean-half; do
      echo "$threads $v $(variant $v $threads 2>&1 | tail -1)"
    done
  done
done > "$out/ab.txt"
python3 - "$out/ab.txt" <<'PY' | tee "$out/ab-table.txt"
import collections, statistics, sys
r = collections.defaultdict(list)
for l in open(sys.argv[1]):
    p = l.split()
    if "launches_per_s" in p: r[(p[0], p[1])].append(float(p[p.index("launches_per_s") + 1]))
for t in ("1", "8"):
    b = statistics.median(r[(t, "bare")])
    print(f"{t} thr " + "  ".join(f"{v} {statistics.median(r[(t, v)]):7.0f} {statistics.median(r[(t, v)]) / b:.3f}x" for v in ("bare", "run-all", "lean-all", "run-half", "lean-half") if r[(t, v)]))
PY
rm -rf "$GPUPART_REGISTRY_DIR"
