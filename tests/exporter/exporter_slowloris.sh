#!/usr/bin/env bash
# Slow and idle HTTP clients against `gpupart exporter --listen` on 127.0.0.1: a local user who opens
# connections and sends nothing, or half a request a byte at a time (and reconnects whenever dropped),
# must not keep Prometheus's scrapes out. With prometheus-cpp's defaults (2 threads, 30 s request timeout)
# two idle connections did. Functional bounds, not timings: every scrape is answered within 5 s while
# 8 idle and 8 half-request connections are held, and the server drops a half request within its timeout.
#   exporter_slowloris.sh GPUPART WORK_DIR
set -u
gpupart=$1
work=$2
# shellcheck source-path=SCRIPTDIR source=../lib/checks.sh
. "$(dirname "$0")/../lib/checks.sh"
private_registry "$work"
end_jobs_on_exit
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$gpupart" exporter --listen "127.0.0.1:$port" --snapshot builtin:h200 > "$work/exporter.out" 2> "$work/exporter.err" &
exporter=$!

# The clients and the scrapes in one python3 (already a test dependency); it prints one "NAME VALUE" line
# per finding.
python3 - "$port" > "$work/findings.txt" 2> "$work/python.err" << 'PY'
import socket, sys, threading, time, urllib.request
port = int(sys.argv[1])
def scrape():
    started = time.monotonic()
    try:
        body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
        return "gpupart_exporter_registry_ok" in body, time.monotonic() - started
    except Exception:
        return False, time.monotonic() - started
for _ in range(100):  # the exporter is up
    if scrape()[0]: break
    time.sleep(0.1)
stop = threading.Event()
dropped = []  # seconds a half request was held before the server closed it
def idle():
    while not stop.is_set():
        with socket.create_connection(("127.0.0.1", port)) as s:
            s.settimeout(0.5)
            while not stop.is_set():
                try:
                    if s.recv(1) == b"": break  # closed by the server: connect again
                except socket.timeout:
                    pass
def half():
    while not stop.is_set():
        with socket.create_connection(("127.0.0.1", port)) as s:
            opened = time.monotonic()
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            try:
                while not stop.is_set():  # a header byte a second, never the blank line that ends the request
                    s.sendall(b"X")
                    time.sleep(1)
            except OSError:
                dropped.append(time.monotonic() - opened)
clients = [threading.Thread(target=f, daemon=True) for f in [idle] * 8 + [half] * 8]
for c in clients: c.start()
time.sleep(1)
results = []
end = time.monotonic() + 12  # longer than the request timeout: half requests are dropped and come back
while time.monotonic() < end:
    results.append(scrape())
    time.sleep(0.5)
stop.set()
print("scrapes", len(results))
print("answered", sum(1 for ok, _ in results if ok))
print("slowest", max(seconds for _, seconds in results))
print("half_requests_dropped", len(dropped))
print("longest_half_request", max(dropped) if dropped else 0)
PY
value() { awk -v k="$1" '$1 == k { print $2 }' "$work/findings.txt"; }
check "the clients ran" [ -n "$(value scrapes)" ]
check "every scrape was answered while 8 idle and 8 half-request connections were held" \
    [ "$(value answered)" = "$(value scrapes)" ] && [ "$(value scrapes)" -ge 10 ]
check "each within 5 s" python3 -c 'import sys; sys.exit(float(sys.argv[1]) >= 5)' "$(value slowest)"
check "half requests were dropped by the server" [ "$(value half_requests_dropped)" -ge 8 ]
check "within its request timeout (3 s) and a margin" python3 -c 'import sys; sys.exit(float(sys.argv[1]) >= 8)' "$(value longest_half_request)"

"$gpupart" exporter --listen "127.0.0.1:$port" --http-threads 2 --snapshot builtin:h200 > /dev/null 2> "$work/bad.err"; rc=$?
check "--http-threads below 4 is refused in one line" [ "$rc" -ne 0 ] && [ "$(grep -c . "$work/bad.err")" -eq 1 ]
kill "$exporter"; wait "$exporter"; rc=$?
check "the exporter ends cleanly on SIGTERM" [ "$rc" -eq 0 ]
checks_summary exporter_slowloris
