#!/usr/bin/env bash
# The app on a live GPU (app item 5), through the `device` tool after tests/device/stage.sh and
# tests/device/stage_gui.sh: under MPS, two PyTorch matmul loops (torch_rate.py) run under `gpupart run` on
# gpc0-3 (A) and gpc4-7 (B); gpupart-gui-live-test drives the real window on the live registry: under the
# minimal platform a real drag of gpc3 from A onto B's row and a Ctrl+Z, under offscreen the same change
# with screenshots. OUT_DIR gets the test logs, the rates, the events, the screenshots and rates.txt: each
# process's mean TFLOP/s before the drag, after it and after the undo. Every process it starts is ended.
#   gui_live.sh CARRY_DIR OUT_DIR
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=device_env.sh
. "$here/device_env.sh" "$1" "$2" gpupart-gui-live  # bin, out, gp, GPUPART_*
export XDG_CACHE_HOME=$out/cache GPUPART_JOURNAL=$out/history.jsonl
export CUDA_MPS_PIPE_DIRECTORY=/tmp/gpupart-gui-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/gpupart-gui-log
qt=/tmp/gpupart-gui-qt
rm -rf "$qt" && mkdir -p "$qt" && tar -C "$qt" -xJf "$bin/gui/qt.tar.xz"
export LD_LIBRARY_PATH="$qt/qt/lib:$LD_LIBRARY_PATH" QT_PLUGIN_PATH="$qt/qt/plugins" FONTCONFIG_FILE="$qt/qt/fonts.conf"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2> /dev/null; done
    sleep 1
    for pid in "${pids[@]}"; do kill -9 "$pid" 2> /dev/null; done
    "$gp" mps stop > /dev/null 2>&1
    rm -rf "$GPUPART_REGISTRY_DIR" "$qt"
}
trap cleanup EXIT
"$gp" probe > "$out/probe.txt" 2>&1 || { echo "probe failed"; cat "$out/probe.txt"; exit 1; }
"$gp" mps start > "$out/mps.txt" 2>&1 || { echo "mps start failed"; cat "$out/mps.txt"; exit 1; }
"$gp" run --tpcs gpc0-3 -- python3 "$here/torch_rate.py" "$out/rate-a.txt" 150 > "$out/a.txt" 2>&1 &
a=$!
pids+=("$a")
"$gp" run --tpcs gpc4-7 -- python3 "$here/torch_rate.py" "$out/rate-b.txt" 150 > "$out/b.txt" 2>&1 &
b=$!
pids+=("$b")
for _ in $(seq 60); do [ -s "$out/rate-a.txt" ] && [ -s "$out/rate-b.txt" ] && break; sleep 1; done
"$gp" list > "$out/list-before.txt" 2>&1
export GPUPART_LIVE_A=$a GPUPART_LIVE_B=$b GPUPART_LIVE_EVENTS=$out/events.txt GPUPART_SCREENSHOTS=$out
QT_QPA_PLATFORM=minimal timeout 120 "$bin/gui/gpupart-gui-live-test" > "$out/gui-minimal.txt" 2>&1
echo "minimal (drag and undo): exit $?"
QT_QPA_PLATFORM=offscreen timeout 120 "$bin/gui/gpupart-gui-live-test" > "$out/gui-offscreen.txt" 2>&1
echo "offscreen (screenshots): exit $?"
"$gp" history > "$out/history.txt" 2>&1
python3 - "$out" <<'PY' | tee "$out/rates.txt"
import sys
out = sys.argv[1]
events = {}
for line in open(f"{out}/events.txt"):
    what, when = line.split()
    events[what] = float(when)
windows = [("before the drag (A gpc0-3, B gpc4-7)", "start", "dragged"),
           ("after the drag (A gpc0-2, B gpc3-7)", "dragged", "undone"),
           ("after the undo (A gpc0-3, B gpc4-7)", "undone", "end")]
for name in "ab":
    rates = [tuple(map(float, l.split())) for l in open(f"{out}/rate-{name}.txt")]
    for title, start, stop in windows:
        # 1 s after each event for the change to reach the process and the MPS clients to settle
        inside = [r for t, r in rates if events[start] + 1 < t <= events[stop]]
        mean = sum(inside) / len(inside) if inside else float("nan")
        print(f"{name.upper()}: {title}: {mean:6.1f} TFLOP/s over {len(inside)} samples")
PY
