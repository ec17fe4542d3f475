#!/usr/bin/env bash
# one launching thread, many interleaved rounds: bare, gpupart run all, gpc0-3, and the callback alone
set -u
. tests/device/device_env.sh .device-carry "$1" gpupart-onethread
export XDG_CACHE_HOME=$out/cache
"$gp" probe > "$out/probe.txt" 2>&1 || { echo probe failed; exit 1; }
as_mode() {
    local mode=$1; shift
    case $mode in
        bare) "$@" ;;
        all) "$gp" run --tpcs all -- "$@" ;;
        gpc0-3) "$gp" run --tpcs gpc0-3 -- "$@" ;;
        cb-gpc0-3) GPUPART_LAUNCH_PATH=callback "$gp" run --tpcs gpc0-3 -- "$@" ;;
    esac
}
for round in $(seq 1 12); do
  for variant in own pinned-own legacy; do
    for mode in bare all gpc0-3 cb-gpc0-3; do
      stream=${variant#pinned-}
      if [ "$variant" = pinned-own ]; then pin=(taskset -c 3); else pin=(); fi
      line=$(as_mode "$mode" "${pin[@]}" "$bin/gpupart-bench-threads" --threads 1 --stream "$stream" --ms 700 2>&1 | tail -1)
      echo "$variant $mode $line"
    done
  done
done > "$out/one-thread.txt"
python3 - "$out/one-thread.txt" <<'PY' | tee "$out/one-thread-table.txt"
import collections, statistics, sys
r = collections.defaultdict(list)
for l in open(sys.argv[1]):
    p = l.split()
    if "launches_per_s" in p: r[(p[0], p[1])].append(float(p[p.index("launches_per_s") + 1]))
for v in ("own", "pinned-own", "legacy"):
    b = statistics.median(r[(v, "bare")])
    print(f"{v:<11} " + "  ".join(f"{m} {statistics.median(r[(v, m)]):8.0f} ({statistics.median(r[(v, m)]) / b:.2f}x, n={len(r[(v, m)])})" for m in ("bare", "all", "gpc0-3", "cb-gpc0-3")))
PY
rm -rf "$GPUPART_REGISTRY_DIR"
