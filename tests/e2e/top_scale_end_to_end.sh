#!/usr/bin/env bash
# `gpupart top` at the scale of a GPU node, in a real terminal (tmux): 33 demo workers (real processes) in a
# private registry at 200x50 and 80x24. Checks that the table gets the rows, that every row shows CPU% and RSS
# (read from /proc for those very pids), that "↓ N more" has its own line, that letters are not drawn bold
# on colours, that the selection moves to the neighbour of a process that exits and then follows a process
# (not a row) across a re-sort, that the exited letter is not given to a newcomer while its notice shows,
# that NO_COLOR still gives attributes only,
# and that --batch prints every process.
#   top_scale_end_to_end.sh PATH/TO/gpupart WORK_DIR [SCREENSHOT_DIR]
# Exits 77 (ctest: skipped) when tmux is missing.
set -u
gpupart=$1
work=$2
shots=${3:-}
socket=gpupart-top-scale-$$
# shellcheck source-path=SCRIPTDIR source=top_tmux_lib.sh
. "$(dirname "$0")/top_tmux_lib.sh"  # skip without tmux, private registry, tmx, cleanup, checks, capture, wait_for, save

snapshot=()
for vendor in /sys/bus/pci/devices/*/vendor; do grep -q 0x10de "$vendor" 2> /dev/null && snapshot=(--snapshot builtin:h200); done

# 33 workers: the demo starts 16 at most a call.
for n in 16 16 1; do "$gpupart" demo start --workers "$n" --seconds 300 > /dev/null 2>&1 < /dev/null; done
slots() { find "$GPUPART_REGISTRY_DIR" -mindepth 2 -maxdepth 2 -name "*.slot" 2> /dev/null | wc -l; }
for _ in $(seq 1 200); do [ "$(slots)" -eq 33 ] && break; sleep 0.05; done
check "33 demo workers" [ "$(slots)" -eq 33 ]

# A process row: cursor, tag, letter, pid, user. `rows` counts them on the screen.
row_re='^[ ▸][ *][A-Za-z#] +[0-9]+ root '
rows() { grep -cE "$row_re" "$screen"; }
# holds CONDITION...: the screen comes to satisfy it within wait_for's bound (a frame is drawn in pieces).
holds() {
    for _ in $(seq 1 200); do
        capture
        "$@" && return 0
        sleep 0.1
    done
    return 1
}
at_least_rows() { [ "$(rows)" -ge "$1" ]; }
every_row_has_cpu_and_rss() { [ "$(grep -cE "$row_re.* [0-9]+ +- +- +[0-9]+ +[0-9]+[MG] active " "$screen")" -eq "$(rows)" ] && [ "$(rows)" -gt 0 ]; }
more_line='^ +(↑ [0-9]+ above · )?↓ [0-9]+ more'

tmx new-session -d -s top -x 200 -y 50 sh
tmx send-keys -t top "$gpupart top -d 5 ${snapshot[*]}; echo \"top exited \$?\"" Enter
check "top starts" wait_for "F1Help"
check "33 processes in the header" shows "33 simulated processes (demo)"
# CPU% and RSS come from /proc after the second sample: wait for a row with an RSS figure.
check "RSS shows" shows_match "$row_re.* [0-9]+M active "
save top-scale-200x50.txt
check "200x50: at least 28 process rows (5 before)" holds at_least_rows 28
# Every row shown: LAUNCHES, MEM -, GPU% -, CPU% a number, RSS a size, then the shim's state.
check "200x50: CPU% and RSS on every row" holds every_row_has_cpu_and_rss
check "200x50: ↓ N more on a line of its own" shows_match "$more_line · PgUp"
check "200x50: the side panel names the biggest holders" shows "TPC share · the "
tmx capture-pane -p -e -t top > "$work/colours.txt"
# Bold (1) with black (30) on a colour (4x), as the letters were: grey on green in xterm.
check "no bold black on a colour" bash -c "! grep -qP '\\e\\[1m(\\e\\[[0-9;]*m)*\\e\\[30m\\e\\[4[0-7]m|\\e\\[1;30;4[0-7]m' '$work/colours.txt'"
check "the letters are black on their colour" grep -qP '\e\[30m\e\[42mA' "$work/colours.txt"

# The selection: down to the 6th row, the worker there exits.
tmx send-keys -t top Down Down Down Down Down
check "the 6th row is selected" shows_match "^▸ F +[0-9]+ root"
gone=$(grep -E "^▸ F " "$screen" | awk '{print $3}')
below=$(grep -E "^  G " "$screen" | awk '{print $2}')
kill "$gone"
check "the exit is said" wait_for "F exited: pid $gone"
check "the selection moves to the next process, not to row 1" shows_match "^▸ G +$below root"
# A newcomer while "F exited" shows does not get F.
"$gpupart" demo start --workers 1 --seconds 300 > "$work/newcomer.txt" 2>&1 < /dev/null
newcomer=$(grep -oE 'pid [0-9]+' "$work/newcomer.txt" | awk '{print $2}')
# It is an llm-serving worker (gpc0-3, the most TPCs): the side panel's first meters show it.
check "the newcomer is shown" shows_match "[A-Za-z#] $newcomer +\["
check "the notice still shows" shows "F exited: pid $gone"
check "the newcomer's letter is not F" bash -c "! grep -qE 'F $newcomer ' '$screen'"
save top-scale-exit.txt
# Sorted the other way, the selection stays on G's process (it was the 6th row, it is not now).
tmx send-keys -t top I
check "PID sorted highest first" shows "PID↓"
check "the selection follows the process across the re-sort" shows_match "^▸ G +$below root"
check "G's process is no longer on the 6th row" bash -c "[ \"\$(grep -E '$row_re' '$screen' | sed -n 6p | awk '{print \$3}')\" != '$below' ]"

# 80x24: the compact header and floorplan leave 8 rows, "↓ N more" below them.
tmx resize-window -t top -x 80 -y 24
check "80x24: laid out again" shows_match "^F1Help.*F10Quit$"
check "80x24: ↓ N more on a line of its own" shows_match "$more_line"
check "80x24: at least 8 process rows" holds at_least_rows 8
save top-scale-80x24.txt
# v hides the floorplan: the table takes its rows.
tmx send-keys -t top v
check "v hides the floorplan" hides "Floorplan"
check "80x24 without the floorplan: at least 13 rows" holds at_least_rows 13
tmx send-keys -t top q
# Keys typed before the shell is back would go to the old view, whose coloured screen would then be read.
check "q quits with 0" wait_for "top exited 0"
check "the view is gone from the terminal" hides "F1Help"
# NO_COLOR still means attributes only: no colour at all, the header and the selection in reverse video.
tmx send-keys -t top clear Enter "NO_COLOR=1 $gpupart top -d 5 ${snapshot[*]}" Enter
check "NO_COLOR: top starts" wait_for "F1Help"
check "NO_COLOR: the header and rows are drawn" shows_match "$row_re"
tmx capture-pane -p -e -t top > "$work/no-colour.txt"
check "NO_COLOR: no colour" bash -c "! grep -qP '\e\[(3|4)[0-7]m' '$work/no-colour.txt'"
check "NO_COLOR: reverse video" grep -qP '\e\[7m' "$work/no-colour.txt"
tmx send-keys -t top q

# --batch, as top -b: every live process, no key hints.
live=$(slots)
"$gpupart" top --batch --size 120x40 "${snapshot[@]}" > "$work/batch.txt"
check "--batch: every process" [ "$(grep -cE "$row_re" "$work/batch.txt")" -eq "$live" ]
check "--batch: no keys" lacks "$work/batch.txt" "F1Help"
check "--batch: no scroll line" bash -c "! grep -qE '$more_line' '$work/batch.txt'"

checks_summary top_scale_end_to_end
