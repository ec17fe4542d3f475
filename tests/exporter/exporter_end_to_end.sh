#!/usr/bin/env bash
# gpupart exporter scraped by Debian's real Prometheus server: the demo workload (real worker
# processes in a private registry), the exporter on a free loopback port, Prometheus scraping it every
# second; Prometheus's HTTP API must return gpupart_tpcs_owned per process, a `gpupart set` must show in
# the next scrape, and `promtool check metrics` must find nothing in the exposition but the camelCase of
# dcgm-exporter's own label names (UUID, modelName, Hostname), kept so that the series join DCGM's.
#   exporter_end_to_end.sh GPUPART WORK_DIR
set -u
gpupart=$1
work=$2
# shellcheck source-path=SCRIPTDIR source=../lib/checks.sh
. "$(dirname "$0")/../lib/checks.sh"
private_registry "$work"
end_jobs_on_exit
S=(--snapshot builtin:h200)

# HTTP through python3 (already a test dependency): http_get URL prints the body; 1 on any failure.
http_get() {
    python3 -c 'import sys, urllib.request
try:
    sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())
except Exception:
    sys.exit(1)' "$1"
}
promql_url() { python3 -c 'import sys, urllib.parse; print(sys.argv[1] + "/api/v1/query?" + urllib.parse.urlencode({"query": sys.argv[2]}))' "$1" "$2"; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
query() {  # query PROMQL: the result vector as "pid=value" lines, sorted (empty when none yet)
    http_get "$(promql_url "http://127.0.0.1:$prom_port" "$1")" |
        python3 -c 'import json,sys; d=json.load(sys.stdin); print("\n".join(sorted(r["metric"].get("pid","-")+"="+r["value"][1] for r in d["data"]["result"])))' 2> /dev/null
}
wait_until() {  # wait_until SECONDS CMD...: CMD succeeds within SECONDS
    local end=$((SECONDS + $1)); shift
    until "$@"; do [ "$SECONDS" -ge "$end" ] && return 1; sleep 0.25; done
}

# ---- the demo workload, and the exporter --------------------------------------------------------
"$gpupart" demo start --workers 3 --seconds 120 > "$work/demo.out" 2>&1 < /dev/null
check "demo workers start" [ "$(grep -c '^started demo worker' "$work/demo.out")" -eq 3 ]
mapfile -t pids < <(sed -n 's/^started demo worker .* (pid \([0-9]*\)).*/\1/p' "$work/demo.out")
exporter_port=$(free_port)
"$gpupart" exporter --listen "127.0.0.1:$exporter_port" "${S[@]}" > "$work/exporter.out" 2> "$work/exporter.err" &
exporter=$!
fetch_metrics() { http_get "http://127.0.0.1:$exporter_port/metrics" > "$work/metrics.txt"; }
check "the exporter serves /metrics" wait_until 10 fetch_metrics
check "the exposition has every worker's gpupart_tpcs_owned" [ "$(grep -c '^gpupart_tpcs_owned{' "$work/metrics.txt")" -eq 3 ]
check "HELP and TYPE for each metric" [ "$(grep -c '^# TYPE gpupart_' "$work/metrics.txt")" -eq "$(grep -c '^# HELP gpupart_' "$work/metrics.txt")" ]
check "counters end in _total" [ -z "$(grep '^# TYPE .* counter$' "$work/metrics.txt" | grep -v '_total counter$')" ]
promtool check metrics < "$work/metrics.txt" > "$work/promtool.txt" 2>&1
check "promtool check metrics: nothing but dcgm-exporter's camelCase label names" \
    [ -z "$(grep -v "label names should be written in 'snake_case' not 'camelCase'" "$work/promtool.txt")" ]
# Every family /metrics serves is documented, prometheus-cpp's own exposer_* too.
undocumented=$(sed -n 's/^# TYPE \([a-z_]*\) .*/\1/p' "$work/metrics.txt" | while read -r name; do
    grep -q "\`$name\`" "$(dirname "$0")/../../docs/metrics.md" || echo "$name"; done)
check "docs/metrics.md names every metric family served (missing: ${undocumented:-none})" [ -z "$undocumented" ]
check "per-process series name their scheduler job (hpc_job; empty outside one)" \
    [ "$(grep -c '^gpupart_tpcs_owned{.*hpc_job=""' "$work/metrics.txt")" -eq 3 ]

# ---- the real Prometheus server -------------------------------------------------------------------
prom_port=$(free_port)
cat > "$work/prometheus.yml" << EOF
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: gpupart
    static_configs: [{targets: ["127.0.0.1:$exporter_port"]}]
EOF
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
    --web.listen-address="127.0.0.1:$prom_port" > "$work/prometheus.log" 2>&1 &
has_three() { [ "$(query 'gpupart_tpcs_owned' | grep -c .)" -eq 3 ]; }
check "Prometheus scraped gpupart_tpcs_owned of the three workers" wait_until 30 has_three
query 'gpupart_tpcs_owned' > "$work/owned-before.txt"
check "per process: 32, 16 and 9 TPCs (the demo's masks)" \
    [ "$(cut -d= -f2 "$work/owned-before.txt" | sort -n | tr '\n' ' ')" = "9 16 32 " ]
check "the GPU's owned TPCs" [ "$(query 'gpupart_gpu_tpcs_owned')" = "-=57" ]

# ---- a set shows in the next scrape -----------------------------------------------------------------
target=${pids[0]}
"$gpupart" set "$target" gpc1 "${S[@]}" > "$work/set.out" 2>&1; rc=$?
check "gpupart set exits 0" [ "$rc" -eq 0 ]
moved() { query "gpupart_tpcs_owned{pid=\"$target\"}" | grep -qx "$target=8"; }
check "the set shows in a following scrape (8 TPCs)" wait_until 15 moved
applied_once() { [ "$(query "sum(gpupart_set_to_first_launch_seconds_count)" | cut -d= -f2)" = "1" ]; }
check "the set's time to its first launch is in the histogram" wait_until 15 applied_once
settled() { [ "$(query 'max(gpupart_change_pending)')" = "-=0" ]; }
check "no change pending once applied" wait_until 10 settled

# ---- exited processes drop their series ---------------------------------------------------------------
kill "${pids[2]}"
gone() { [ "$(http_get "http://127.0.0.1:$exporter_port/metrics" | grep -c "^gpupart_tpcs_owned{")" -eq 2 ]; }
check "an exited worker has no series in the next scrape" wait_until 10 gone

# ---- the textfile for node_exporter -------------------------------------------------------------------
"$gpupart" exporter --textfile "$work/gpupart.prom" --once "${S[@]}" 2> "$work/textfile.err"; rc=$?
check "--textfile --once exits 0" [ "$rc" -eq 0 ]
check "the textfile holds the metrics" [ "$(grep -c '^gpupart_tpcs_owned{' "$work/gpupart.prom")" -eq 2 ]
check "no temporary file is left beside it" [ "$(find "$work" -maxdepth 1 -name '*gpupart.prom*' | wc -l)" -eq 1 ]
ln -s /etc/passwd "$work/link.prom"
"$gpupart" exporter --textfile "$work/link.prom" --once "${S[@]}" > /dev/null 2> "$work/link.err"; rc=$?
check "a symlink in the textfile's place is refused in one line" [ "$rc" -eq 1 ] && [ "$(wc -l < "$work/link.err")" -eq 1 ]
check "and /etc/passwd is untouched" grep -q '^root:' /etc/passwd
"$gpupart" exporter "${S[@]}" > /dev/null 2> "$work/usage.err"; rc=$?
check "no destination: one line, exit 1" [ "$rc" -eq 1 ] && [ "$(wc -l < "$work/usage.err")" -eq 1 ]

kill "$exporter"; wait "$exporter"; rc=$?
check "the exporter ends cleanly on SIGTERM" [ "$rc" -eq 0 ]
"$gpupart" demo stop > /dev/null 2>&1
checks_summary exporter_end_to_end
