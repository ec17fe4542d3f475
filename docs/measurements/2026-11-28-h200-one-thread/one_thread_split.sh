#!/usr/bin/env bash
# where a single launching thread's cost under gpupart run goes: interleaved rounds of variants
set -u
. tests/device/device_env.sh .device-carry "$1" gpupart-onesplit
export XDG_CACHE_HOME=$out/cache
"$gp" probe > "$out/probe.txt" 2>&1 || { echo probe failed; exit 1; }
prog=("$bin/gpupart-bench-threads" --threads 1 --stream own --ms 700)
variant() {
    case $1 in
        bare) "${prog[@]}" ;;
        wrap-only) LD_PRELOAD="$bin/libgpupart-investigate-wrap.so" GPUPART_WRAP_ALLOWED=ffffffffffffffff "${prog[@]}" ;;
        wrap-half) LD_PRELOAD="$bin/libgpupart-investigate-wrap.so" GPUPART_WRAP_ALLOWED=ffffffff "${prog[@]}" ;;
        run-all) "$gp" run --tpcs all -- "${prog[@]}" ;;
        run-half) "$gp" run --tpcs gpc0-3 -- "${prog[@]}" ;;
        run-env) "$gp" run --tpcs all -- env > "$out/run-env.txt"; "${prog[@]}" ;;
    esac
}
for round in $(seq 1 10); do
  for v in bare wrap-only wrap-half run-all run-half; do
    echo "$v $(variant $v 2>&1 | tail -1)"
  done
done > "$out/split.txt"
"$gp" run --tpcs all -- env | grep -E 'GPUPART|LD_|CUDA' > "$out/run-env.txt"
python3 - "$out/split.txt" <<'PY' | tee "$out/split-table.txt"
import collections, statistics, sys
r = collections.defaultdict(list)
for l in open(sys.argv[1]):
    p = l.split()
    if "launches_per_s" in p: r[p[0]].append(float(p[p.index("launches_per_s") + 1]))
b = statistics.median(r["bare"])
for v in ("bare", "wrap-only", "wrap-half", "run-all", "run-half"):
    if r[v]: print(f"{v:<10} {statistics.median(r[v]):8.0f} {statistics.median(r[v]) / b:.3f}x n={len(r[v])}")
PY
rm -rf "$GPUPART_REGISTRY_DIR"
