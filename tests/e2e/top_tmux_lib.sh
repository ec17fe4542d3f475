# shellcheck shell=bash disable=SC2034,SC2154,SC2155  # screen for, and gpupart, work, shots, socket from, the sourcing test
# What the `gpupart top` terminal tests (top_end_to_end.sh, top_smlp_end_to_end.sh) share, sourced after they
# set gpupart, work (emptied here), shots (a screenshot directory, or "") and socket (their tmux socket's name).
# Exits 77 (ctest: skipped) when tmux is missing. Gives a private registry, journal and config under $work;
# tmx (tmux on the private socket); cleanup of tmux and the demo workers on exit, also when the test is killed
# outright; tests/lib/checks.sh; and capture, screen_until, wait_for, shows, shows_match, hides and save for the screen, kept in
# $screen.
if ! command -v tmux > /dev/null; then
    echo "SKIP: tmux is not installed (apt-get install tmux): the terminal view is not tested"
    exit 77
fi
rm -rf "$work" && mkdir -p "$work"
export GPUPART_REGISTRY_DIR=$work/registry GPUPART_JOURNAL=$work/history.jsonl  # never the machine's or the user's
export XDG_CONFIG_HOME=$(cd "$work" && pwd)/config  # nor the user's toprc (absolute: XDG ignores a relative one)
export LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color PS1='$ '
tmx() { tmux -L "$socket" -f /dev/null "$@"; }
cleanup() {
    # A failed check on the screen says nothing of what was there: show the last screen.
    if [ "${failures:-0}" -gt 0 ] && [ -s "${screen:-}" ]; then echo "--- the last screen:" >&2; cat "$screen" >&2; fi
    tmx kill-server > /dev/null 2>&1
    rm -f "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/$socket"  # the server is gone; its socket file is not
    "$gpupart" demo stop > /dev/null 2>&1  # no demo worker outlives the test
}
# A test killed outright (a ctest timeout) runs no trap: this watcher cleans up once the test is gone. A test
# that ends ends its watcher first: a late one would stop the workers of the next run in the same directory.
( while kill -0 $$ 2> /dev/null; do sleep 1; done; cleanup ) > /dev/null 2>&1 &
watcher=$!
trap 'kill "$watcher" 2> /dev/null; cleanup' EXIT
# shellcheck source-path=SCRIPTDIR source=../lib/checks.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/checks.sh"  # check, contains, lacks, matches, checks_summary

screen=$work/screen.txt
capture() { tmx capture-pane -p -t top > "$screen"; }
# screen_until GREP_FLAG PATTERN: until the screen matches PATTERN (grep -F or -E; 20 s at most: sanitizer
# builds on a loaded machine are slow); the screen is left in $screen.
screen_until() {
    for _ in $(seq 1 200); do
        capture
        grep -q "$1" -- "$2" "$screen" && return 0
        sleep 0.1
    done
    return 1
}
# wait_for TEXT: until the screen shows TEXT; on a timeout it prints the screen it waited on.
wait_for() {
    screen_until -F "$1" && return 0
    echo "--- screen while waiting for '$1':" >&2
    cat "$screen" >&2
    return 1
}
# shows TEXT, shows_match REGEX: the screen shows it, or comes to within wait_for's bound. A frame is drawn
# in pieces, and a capture on a loaded machine can fall between them: a check that reads the screen once
# after waiting for its first line can miss its last ones.
shows() { screen_until -F "$1"; }
# hides TEXT: the screen comes to lack TEXT within wait_for's bound (grep -v would pass on any other line).
hides() {
    for _ in $(seq 1 200); do
        capture
        grep -qF -- "$1" "$screen" || return 0
        sleep 0.1
    done
    return 1
}
shows_match() { screen_until -E "$1"; }
save() { if [ -n "$shots" ]; then mkdir -p "$shots" && cp "$screen" "$shots/$1"; fi; }
