#!/usr/bin/env bash
# where gpupart run's start cost goes: interleaved starts of the smallest CUDA program
set -u
. tests/device/device_env.sh .device-carry "$1" gpupart-startsplit
export XDG_CACHE_HOME=$out/cache
"$gp" probe > "$out/probe.txt" 2>&1
t() { local s=$(date +%s%N); "$@" > /dev/null 2>&1; echo $(( ($(date +%s%N) - s) / 1000 )); }
for i in $(seq 1 12); do
  echo "bare $(t "$bin/gpupart-bench-start")"
  echo "run $(t "$gp" run --tpcs all -- "$bin/gpupart-bench-start")"
  echo "runcb $(t env GPUPART_LAUNCH_PATH=callback "$gp" run --tpcs all -- "$bin/gpupart-bench-start")"
  echo "preload $(t env LD_PRELOAD="$bin/libgpupart-shim.so" "$bin/gpupart-bench-start")"
  echo "runtrue $(t "$gp" run --tpcs all -- true)"
done > "$out/starts.txt"
python3 - "$out/starts.txt" <<'PY'
import collections,statistics,sys
d=collections.defaultdict(list)
for l in open(sys.argv[1]):
    k,v=l.split(); d[k].append(int(v)/1000)
for k,v in d.items(): print(f"{k:8} median {statistics.median(v):7.1f} ms min {min(v):7.1f}")
PY
rm -rf "$GPUPART_REGISTRY_DIR"
