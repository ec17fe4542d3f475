#!/usr/bin/env bash
# Checks that gpupart-gui starts: on the offscreen platform (no display), with no GPU it opens the demo and
# starts its gpupart-demo-worker processes; after a few seconds it must still run, have its workers, and
# end cleanly (exit 0) on SIGTERM, its workers with it.
#   .ci/gui-starts.sh GPUPART_GUI [SECONDS]
set -euo pipefail
gui=${1:?usage: gui-starts.sh GPUPART_GUI [SECONDS]}
seconds=${2:-4}
log=$(mktemp)
trap 'rm -f "$log"' EXIT

QT_QPA_PLATFORM=offscreen "$gui" > "$log" 2>&1 &
pid=$!
sleep "$seconds"
if ! kill -0 "$pid" 2> /dev/null; then
    wait "$pid" && status=0 || status=$?
    echo "gui-starts: $gui exited within $seconds s (status $status):" >&2
    cat "$log" >&2
    exit 1
fi
workers=$(cat /proc/"$pid"/task/*/children)
worker_names=""
for child in $workers; do worker_names+="$(cat /proc/"$child"/comm 2> /dev/null) "; done
kill -TERM "$pid"
wait "$pid" && status=0 || status=$?
cat "$log"
if [ "$status" -ne 0 ]; then echo "gui-starts: $gui exited with $status on SIGTERM" >&2; exit 1; fi
case $worker_names in
    *gpupart-demo-w*) ;;  # comm is cut at 15 characters
    *) echo "gui-starts: $gui started no gpupart-demo-worker (children: ${worker_names:-none})" >&2; exit 1 ;;
esac
echo "gui-starts: $gui ran $seconds s offscreen with demo workers (${worker_names% }) and ended cleanly"
