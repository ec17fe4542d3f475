# shellcheck shell=bash
# Checks for the test scripts, sourced by each relative to its own location:
#   . "$(dirname "$0")/../lib/checks.sh"
# check NAME CONDITION...  runs CONDITION and counts it as passed or failed. A failure prints
#                          "FAIL: NAME" on stderr, a pass nothing; with checks_verbose=1 (set after
#                          sourcing) each prints "PASS NAME" or "FAIL NAME" on stdout instead.
# checks_summary LABEL     prints "LABEL: N passed, M failed"; its status is 0 when none failed.
# contains FILE TEXT, lacks FILE TEXT, matches FILE REGEX, lines FILE N: conditions on a file.
# end_jobs_on_exit         makes sure nothing the script started in the background outlives it.
# private_registry WORK    empties WORK and points the registry and the journal into it (never the machine's).
passes=0
failures=0
checks_verbose=0

check() {  # check NAME CONDITION...
    local name=$1
    shift
    if "$@"; then
        passes=$((passes + 1))
        if [ "$checks_verbose" = 1 ]; then echo "PASS $name"; fi
    else
        failures=$((failures + 1))
        if [ "$checks_verbose" = 1 ]; then echo "FAIL $name"; else echo "FAIL: $name" >&2; fi
    fi
    return 0
}
checks_summary() {  # checks_summary LABEL
    echo "$1: $passes passed, $failures failed"
    [ "$failures" -eq 0 ]
}
contains() { grep -qF -- "$2" "$1"; }
lacks() { ! grep -qF -- "$2" "$1"; }
matches() { grep -qE -- "$2" "$1"; }
lines() { [ "$(wc -l < "$1")" -eq "$2" ]; }

# Nothing started in the background outlives the script, whatever happens: an unreaped child's pid cannot
# be reused, so killing what `jobs -p` lists is safe.
end_background_jobs() {
    local pid
    for pid in $(jobs -p); do kill -KILL "$pid" 2> /dev/null; done
    wait 2> /dev/null
}
end_jobs_on_exit() {
    trap end_background_jobs EXIT
    trap 'exit 1' INT TERM
}

private_registry() {
    rm -rf "$1" && mkdir -p "$1"
    export GPUPART_REGISTRY_DIR=$1/registry GPUPART_JOURNAL=$1/history.jsonl
}
