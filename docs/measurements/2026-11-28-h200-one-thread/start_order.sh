#!/usr/bin/env bash
# does a start right after a CUDA_DEVICE_MAX_CONNECTIONS=8 process pay for it? same modes, two orders
set -u
. tests/device/device_env.sh .device-carry "$1" gpupart-startorder
export XDG_CACHE_HOME=$out/cache
"$gp" probe > "$out/probe.txt" 2>&1
t() { local s=$(date +%s%N); "$@" > /dev/null 2>&1; echo $(( ($(date +%s%N) - s) / 1000 )); }
for i in $(seq 1 10); do
  echo "A-bare $(t "$bin/gpupart-bench-start")"
  echo "A-conn8 $(t env CUDA_DEVICE_MAX_CONNECTIONS=8 "$bin/gpupart-bench-start")"
  echo "A-run $(t "$gp" run --tpcs all -- "$bin/gpupart-bench-start")"
  echo "B-bare $(t "$bin/gpupart-bench-start")"
  echo "B-run $(t "$gp" run --tpcs all -- "$bin/gpupart-bench-start")"
  echo "B-conn8 $(t env CUDA_DEVICE_MAX_CONNECTIONS=8 "$bin/gpupart-bench-start")"
done > "$out/order.txt"
python3 - "$out/order.txt" <<'PY'
import collections,statistics,sys
d=collections.defaultdict(list)
for l in open(sys.argv[1]):
    k,v=l.split(); d[k].append(int(v)/1000)
for k in sorted(d): print(f"{k:8} median {statistics.median(d[k]):7.1f} ms min {min(d[k]):7.1f}")
PY
rm -rf "$GPUPART_REGISTRY_DIR"
