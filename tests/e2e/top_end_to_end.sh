#!/usr/bin/env bash
# `gpupart top` as a user drives it: in a real terminal (tmux) against the demo workload in a private
# registry. Moves TPCs with keys, checks the registry and the screen, undoes with `u`, resizes to 80x24
# and 200x60, quits with q and with SIGTERM and checks the terminal is given back.
#   top_end_to_end.sh PATH/TO/gpupart WORK_DIR [SCREENSHOT_DIR]
# Exits 77 (ctest: skipped) when tmux is missing. With SCREENSHOT_DIR, saves the captures there.
set -u
gpupart=$1
work=$2
shots=${3:-}
socket=gpupart-top-test-$$
# shellcheck source-path=SCRIPTDIR source=top_tmux_lib.sh
. "$(dirname "$0")/top_tmux_lib.sh"  # skip without tmux, private registry, tmx, cleanup, checks, capture, wait_for, save
# laid_out_for ROWS: the frame was laid out for this size: header on the first row, footer on row ROWS
# (a frame of the old size would be cropped or short).
laid_out_for() { [ "$(sed -n 1p "$screen" | cut -c1-11)" = "gpupart top" ] && [ "$(sed -n "$1p" "$screen" | cut -c1-6)" = "F1Help" ]; }

# On a machine with an NVIDIA GPU the built-in map is shown only when named (see gpupart topology).
snapshot=()
gpu_here=no
for vendor in /sys/bus/pci/devices/*/vendor; do grep -q 0x10de "$vendor" 2> /dev/null && gpu_here=yes; done
[ "$gpu_here" = yes ] && snapshot=(--snapshot builtin:h200)

"$gpupart" demo start --seconds 120 > /dev/null
for _ in $(seq 1 200); do [ "$(ls "$GPUPART_REGISTRY_DIR"/u*/*.slot 2> /dev/null | wc -l)" -eq 3 ] && break; sleep 0.05; done
"$gpupart" list > "$work/list.txt"
llm=$(awk '/llm-serving/{print $1}' "$work/list.txt")
vision=$(awk '/vision/{print $1}' "$work/list.txt")
check "the demo runs" [ -n "$llm" ] && [ -n "$vision" ]

tmx new-session -d -s top -x 120 -y 40 sh
tmx send-keys -t top "$gpupart top -d 3 ${snapshot[*]}; echo \"top exited \$?\"" Enter
check "top starts" wait_for "F1Help"
check "header: GPU and recording" shows "GPU 0: NVIDIA H200 Hopper · recording builtin:h200"
check "header: the demo workload" shows "3 simulated processes (demo)"
[ "$gpu_here" = no ] && check "header: no GPU, the built-in H200" shows "no NVIDIA GPU on this machine: showing the built-in recorded H200"
# TPC numbers (TPC k = SMs 2k and 2k+1): gpc1's first slots hold TPCs 1 and 25 (descriptor bits 9 and 12).
check "floorplan: gpc1 held by A" shows_match "^gpc1 .*│ +A 1 +A 25 "
check "table: llm-serving is A" shows_match "A +$llm root .*llm-serving"
check "findings panel" shows "Findings (4)"
save top-demo-120x40.txt

# Give gpc1 (A's) to vision (B): select B in the table, Tab to the floorplan, mark gpc1, Enter, confirm.
tmx send-keys -t top Down Tab Down g Enter
check "the plan is shown before anything changes" wait_for "Give TPCs 1,9,17,25,32,39,46,53 to B $vision?"
# The dialog's title can reach tmux before its body: wait for each line rather than read one capture.
# A GPC's TPC numbers are striped, so at 120 columns the dialog cuts the after-lists (the registry checks below
# read them whole).
check "the plan shows its changes" wait_for "16 TPCs → 24: 4-5,12-13,20-21,28-29,35-36,42-43,49-50,56-57 → 1,4-5,9,12-13,17,20-21,25,28-29,32,35-36,39…"
check "the plan shows what A loses" wait_for "32 TPCs → 24: 0-3,8-11,16-19,24-27,32-34,39-41,46-48,53-55,62-65 → 0,2-3,8,10-11,16,18-19,24,26-27,33-34,…"
"$gpupart" list --json > "$work/before.json"
check "nothing changed before the confirmation" contains "$work/before.json" '"tpcs": "0-3,8-11,16-19,24-27,32-34,39-41,46-48,53-55,62-65"'
save top-demo-confirm.txt
tmx send-keys -t top y
check "applied" wait_for "applied #1: give 1,9,17,25,32,39,46,53 to $vision"
"$gpupart" list --json > "$work/after.json"
check "registry: vision has gpc1" contains "$work/after.json" '"tpcs": "1,4-5,9,12-13,17,20-21,25,28-29,32,35-36,39,42-43,46,49-50,53,56-57"'
check "registry: llm-serving lost it" contains "$work/after.json" '"tpcs": "0,2-3,8,10-11,16,18-19,24,26-27,33-34,40-41,47-48,54-55,62-65"'
check "screen: gpc1 is B's now" shows_match "^gpc1 .*│ +B 1 +B 25 "
check "screen: B has 24 TPCs" shows_match "B +$vision root +24 +48 +36%"
save top-demo.txt

# Undo through the keys: the same journal as `gpupart undo`.
tmx send-keys -t top u
check "undo is planned" wait_for "Undo #1 (give 1,9,17,25,32,39,46,53 to $vision)?"
check "the undo says there is no redo" wait_for "no redo"
tmx send-keys -t top y
check "undo applied" wait_for "applied #2: undo #1"
"$gpupart" list --json > "$work/undone.json"
check "registry: llm-serving has gpc1 again" contains "$work/undone.json" '"tpcs": "0-3,8-11,16-19,24-27,32-34,39-41,46-48,53-55,62-65"'
check "registry: vision is back" contains "$work/undone.json" '"tpcs": "4-5,12-13,20-21,28-29,35-36,42-43,49-50,56-57"'
check "screen: gpc1 is A's again" shows_match "^gpc1 .*│ +A 1 +A 25 "
"$gpupart" history > "$work/history.txt"
check "history has both" [ "$(grep -c '^#' "$work/history.txt")" -eq 2 ]

# Live resizes.
tmx resize-window -t top -x 80 -y 24
check "80x24: compact layout" shows_match "^gpc0 +│ +A 0 +A 24 +A 64 +A 8 +A 62 +A 65 +A 16 +A 63"
sleep 0.3 && capture
check "80x24: laid out for 24 rows" laid_out_for 24
check "80x24: table" shows_match "B +$vision root +16 +32 +24%"
save top-demo-80x24.txt
tmx resize-window -t top -x 200 -y 60
check "200x60: side panel" wait_for "TPC share"
sleep 0.3 && capture
check "200x60: laid out for 60 rows" laid_out_for 60
check "200x60: the selected process in detail" shows "whole GPCs gpc4 gpc5"
check "200x60: SM ids under the TPCs" shows "2-3   50-51   92-93"
save top-demo-200x60.txt

# A process that exits frees its letter and is announced; the others keep theirs.
kill -TERM "$llm"
check "an exit is announced" wait_for "A exited: pid $llm"
check "vision is still B" shows_match "B +$vision "
check "no process took A's place" lacks "$screen" "A $vision "

# htop habits: the findings view, a filter marked, a sort kept in toprc.
tmx send-keys -t top f
check "f opens every finding whole" wait_for "· gpupart check lists the same"
tmx send-keys -t top Escape '\' v i s Enter
check "a filter is marked in the table header" wait_for "filter: vis"
check "and F4 reads FILTER" shows "F4FILTER"
tmx send-keys -t top '>'
check "> sorts by the next column (USER)" wait_for "USER↑"

# Help, then quit: the terminal is given back (alternate screen left, exit 0).
tmx send-keys -t top F1
check "F1 opens the help" wait_for "gpupart top · keys"
tmx send-keys -t top Escape q
check "q quits with 0" wait_for "top exited 0"
check "the view is gone from the terminal" lacks "$screen" "F1Help"
tmx send-keys -t top "stty -a > $work/stty.txt" Enter
for _ in $(seq 1 30); do [ -s "$work/stty.txt" ] && break; sleep 0.1; done
check "the terminal is cooked again: icanon" grep -qE '(^| )icanon( |$)' "$work/stty.txt"
check "the terminal is cooked again: echo" grep -qE '(^| )echo( |$)' "$work/stty.txt"

toprc=$XDG_CONFIG_HOME/gpupart/toprc
check "quitting kept the sort in toprc" grep -qx 'sort=USER' "$toprc"
check "toprc: -d 3 was for that session only" grep -qx 'delay_tenths=10' "$toprc"
check "toprc: the filter is not kept (as in htop)" lacks "$toprc" "vis"

# A signal: SIGTERM ends it the same way.
tmx send-keys -t top clear Enter "sh -c 'echo \$\$ > $work/top.pid; exec $gpupart top ${snapshot[*]}'; echo \"top exited \$?\"" Enter
check "top starts again" wait_for "F1Help"
check "the sort came back from toprc" shows "USER↑"
kill -TERM "$(cat "$work/top.pid")"
check "SIGTERM: exits 143" wait_for "top exited 143"
check "SIGTERM: the view is gone" lacks "$screen" "F1Help"
tmx send-keys -t top "stty -a > $work/stty2.txt" Enter
for _ in $(seq 1 30); do [ -s "$work/stty2.txt" ] && break; sleep 0.1; done
check "SIGTERM: the terminal is cooked again" grep -qE '(^| )icanon( |$)' "$work/stty2.txt"

# --sort and toprc in --batch; a toprc that is a FIFO gives one line and the defaults, and never hangs.
"$gpupart" top --batch --size 80x24 --sort mem ${snapshot[*]} > "$work/batch.txt"
check "--sort MEM: the table sorts by it, highest first" contains "$work/batch.txt" "MEM↓"
"$gpupart" top --batch --sort NICE ${snapshot[*]} > /dev/null 2> "$work/sort-error.txt"
check "--sort NICE is a usage error" [ $? -eq 2 ]
check "--sort NICE names the columns" contains "$work/sort-error.txt" "the columns are PID, USER"
mkdir -p "$work/fifo-config/gpupart" && mkfifo "$work/fifo-config/gpupart/toprc"
XDG_CONFIG_HOME=$XDG_CONFIG_HOME/../fifo-config timeout 20 "$gpupart" top --batch --size 80x24 ${snapshot[*]} > "$work/fifo.txt" 2> "$work/fifo-error.txt"
check "a FIFO toprc does not hang top" [ $? -eq 0 ]
check "a FIFO toprc is said in one line" [ "$(grep -c 'is a FIFO' "$work/fifo-error.txt")" -eq 1 ]
check "and the defaults are used" contains "$work/fifo.txt" "PID↑"

checks_summary top_end_to_end
