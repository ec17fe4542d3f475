#!/usr/bin/env bash
# CPU use of gpupart-gui refreshing the demo (15 simulated processes) at 4 Hz: the window runs offscreen
# for a warm-up, then its own CPU time (utime+stime from /proc) is read over a measured interval.
# Prints one line: "gpupart-gui 4 Hz, 15 processes: X% of one core over S s (Y ms CPU per refresh)".
#   gui_cpu.sh PATH/TO/gpupart-gui [SECONDS]
set -euo pipefail
gui=$1
seconds=${2:-20}
export QT_QPA_PLATFORM=offscreen XDG_CONFIG_HOME=$(mktemp -d)  # default settings: 4 Hz
"$gui" --demo --snapshot builtin:h200 --demo-workers 15 > /dev/null 2>&1 &
pid=$!
trap 'kill $pid 2> /dev/null; wait $pid 2> /dev/null; rm -rf "$XDG_CONFIG_HOME"' EXIT
ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
sleep 3
t0=$(ticks); s0=$(date +%s.%N)
sleep "$seconds"
t1=$(ticks); s1=$(date +%s.%N)
hz=$(getconf CLK_TCK)
awk -v t="$((t1 - t0))" -v hz="$hz" -v w0="$s0" -v w1="$s1" 'BEGIN {
    cpu = t / hz; wall = w1 - w0;
    printf "gpupart-gui 4 Hz, 15 processes: %.1f%% of one core over %.0f s (%.1f ms CPU per refresh)\n",
           100 * cpu / wall, wall, 1000 * cpu / (wall * 4) }'
