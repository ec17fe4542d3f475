#!/usr/bin/env bash
# Programs that partition themselves in `gpupart top` as a user sees it, in a real terminal (tmux): a demo worker that chooses its own
# masks (`gpupart demo start --app-masks`) is marked APP and its masks are in the side panel; an SMLP
# component (written as libgpupart.so would) is in the components view (x) with its holder's letter on the
# TPCs it holds, follows a change of the file live, and `gpupart smlp` prints the same.
#   top_smlp_end_to_end.sh PATH/TO/gpupart PATH/TO/smlp-fixture-tool WORK_DIR [SCREENSHOT_DIR]
# Exits 77 (ctest: skipped) when tmux is missing.
set -u
gpupart=$1
fixture=$2
work=$3
shots=${4:-}
socket=gpupart-top-smlp-test-$$
# shellcheck source-path=SCRIPTDIR source=top_tmux_lib.sh
. "$(dirname "$0")/top_tmux_lib.sh"  # skip without tmux, private registry, tmx, cleanup, checks, capture, wait_for, save

snapshot=()
for vendor in /sys/bus/pci/devices/*/vendor; do grep -q 0x10de "$vendor" 2> /dev/null && snapshot=(--snapshot builtin:h200); done

"$gpupart" demo start --app-masks --seconds 120 > /dev/null
for _ in $(seq 1 200); do [ "$(ls "$GPUPART_REGISTRY_DIR"/u*/*.slot 2> /dev/null | wc -l)" -eq 3 ] && break; sleep 0.05; done
"$gpupart" list > "$work/list.txt"
llm=$(awk '/llm-serving/{print $1}' "$work/list.txt")
vision=$(awk '/vision/{print $1}' "$work/list.txt")
check "the demo runs" [ -n "$llm" ] && [ -n "$vision" ]
"$fixture" "$GPUPART_REGISTRY_DIR" camera "$vision" "$llm" > /dev/null
check "gpupart smlp lists the component" "$gpupart" smlp camera > "$work/smlp.txt"
check "gpupart smlp: the holder" matches "$work/smlp.txt" "SQ +$vision .* 36-39 +held .* detect"

# 220 columns: the side panel then shows the outside stream's whole run-on list (gpc0-3 in TPC numbers) and
# the start of its verdict; at 200 the list is cut.
tmx new-session -d -s top -x 220 -y 60 sh
tmx send-keys -t top "$gpupart top -d 5 ${snapshot[*]}; echo \"top exited \$?\"" Enter
check "top starts" wait_for "F1Help"
check "the header counts the component" shows "1 SMLP component (x)"
check "APP marks the program with its own masks" shows_match "A +$llm root .* yes +active"
# llm-serving holds gpc0-3 (TPCs 0-3,8-11,16-19,24-27,32-34,39-41,46-48,53-55,62-65) and chooses in TPC numbers:
# global = its lowest 16 TPCs, the outside stream the lowest 4 real TPCs outside them (4-7).
check "the side panel shows its masks" shows "program    global 0-3,8-11,16-19,24-27 · 2 stream masks"
check "and what the outside stream runs on" shows "stream 0x7f0000002000 4-7 → 0-3,8-11,16-19,24-27,32-34,39-41,46-48,53-55,62-65 (non"
save top-app-masks-220x60.txt

tmx send-keys -t top x
check "x opens the components view" wait_for "SMLP components (1) · live"
check "the component" shows "camera (root) · this GPU · TPCs 36-43 · H 8 h 2 M 2"
check "B's letter on the TPCs it holds" shows "held  BBBB....   free 40-43"
check "the holder" shows_match "SQ B +$vision prio +5 .* TPCs 36-39 +held .* detect"
check "then the FQ" shows_match "FQ A +$llm prio +9 .* waits .* plan"
save top-smlp-220x60.txt
# The holder finishes and another request takes its place: the view follows the file at the next sample.
"$fixture" "$GPUPART_REGISTRY_DIR" camera "$llm" "$vision" > /dev/null
check "the view follows the change live" wait_for "held  AAAA....   free 40-43"
tmx send-keys -t top Escape
check "Esc closes it" wait_for "F1Help"
check "the floorplan is back" shows "Floorplan"
tmx send-keys -t top q
check "q quits with 0" wait_for "top exited 0"

checks_summary top_smlp_end_to_end
