#!/usr/bin/env bash
# The REAL libgpupart-shim.so with CUDA graphs of the TEST DOUBLE driver (fake_graphs.c, in
# fake-driver/libcuda.so.1): graph execs uploaded before a `gpupart set` carry the new mask before their
# next replay (the shim's re-mask thread toggles and uploads them while `gpupart set` waits), or, with
# GPUPART_GRAPH_REMASK=at-launch, get it in that replay; what the shim publishes about them; and the
# re-mask thread never inside an exec while the application is (a stress with threads replaying). No GPU;
# tests/device runs the same on the real driver.
#   graph_end_to_end.sh GPUPART SHIM_SO FAKE_DRIVER_DIR SHIM_HOST WORK_DIR STRESS_HOST
set -u
stress_host=$6
# shellcheck source-path=SCRIPTDIR source=shim_test_lib.sh
. "$(dirname "$0")/shim_test_lib.sh" "$1" "$2" "$3" "$4" "$5"  # the private registry, cleanup, slot and process helpers
Q=0,8,16,24  # half of gpc0, as TPC numbers (descriptor bits 0-3 of the built-in H200)
# `gpupart run --tpcs $Q` warns once, before the command starts, in the command's stderr; the shim adds nothing.
HALF_GPC0="gpupart: warning: the new process gets only 4 of gpc0's 8 TPCs: a partition of whole GPCs shares no GPC with others and interferes less [partial-gpc; Bakita & Anderson, RTAS 2023 (SE-packed)]"
only_the_half_gpc0_warning() { [ "$(cat "$1")" = "$HALF_GPC0" ]; }

# ---- CUDA graphs: execs uploaded before a `gpupart set` carry the new mask at their next replay ----------
# The test double models the driver's graphs (fake_graphs.c): descriptors built at an exec's first launch
# only, and again for a kernel node turned off and on. The shim's graph counts are read from the slot
# file itself (struct gpupart_counters at byte 3584, registry_layout.h: u64 fields in this order).
graph_counter() {  # graph_counter PID NAME: counters.graph_NAME of PID's slot
    local slot offset
    slot=$(slot_of "$1") || return 1
    case $2 in
        tracking) offset=3624 ;; generation) offset=3632 ;; execs) offset=3640 ;; current) offset=3648 ;;
        unfollowable) offset=3656 ;; device_launch) offset=3664 ;; remasks) offset=3672 ;; remask_failures) offset=3680 ;;
        launches) offset=3688 ;; remasker) offset=3696 ;; settled_generation) offset=3704 ;;
        last_launch) offset=3600 ;;  # counters.last_launch_realtime_ns: any launch, a graph replay included
        *) return 1 ;;
    esac
    od -A n -t u8 -j "$offset" -N 8 "$slot" | tr -d ' '
}
graph_is() {  # graph_is PID NAME VALUE
    local actual
    actual=$(graph_counter "$1" "$2")
    [ "$actual" = "$3" ] && return 0
    echo "  graph_$2 of $1: expected $3, got '$actual'" >&2
    return 1
}
X=0x0000000f  # allowed descriptor bits 0-3 (TPCs 0,8,16,24), lowest word, as the fake reads it back from a graph kernel's descriptor
Y=0x0001fe00  # gpc1: descriptor bits 9-16

# One exec of two kernels: it keeps its upload mask until a set; the set returns once the shim's re-mask
# thread has rebuilt it with the new mask, so the replay after the set builds nothing.
start graphs "$gpupart" run --tpcs $Q --snapshot builtin:h200 -- "$host" load:"$fake" graph:2 \
    graphlaunch:0 graphlaunch:0 ready:"$work/graphs.1" wait:"$work/graphs.go1" \
    graphmasks:0 graphlaunch:0 graphlaunch:0 ready:"$work/graphs.2" wait:"$work/graphs.go2" \
    execdestroy:0 ready:"$work/graphs.3" wait:"$work/graphs.go3"
pid=$started
out=$work/graphs.out
check "graph: reaches its first pause" await "$work/graphs.1" "$pid"
check "graph: instantiated" line_is "$out" 2 "graph 0 instantiated kernels=2"
check "graph: its upload builds both kernels with 0-3" line_is "$out" 3 "graph 0 launch rebuilt=2 masks=$X,$X"
check "graph: a replay builds nothing" line_is "$out" 4 "graph 0 launch rebuilt=0 masks=$X,$X"
check "graph: followed" graph_is "$pid" tracking 1
check "graph: one exec" graph_is "$pid" execs 1
check "graph: current" graph_is "$pid" current 1
check "graph: followable" graph_is "$pid" unfollowable 0
check "graph: not for device launch" graph_is "$pid" device_launch 0
check "graph: its first launch is no re-mask" graph_is "$pid" remasks 0
check "graph: the re-mask thread runs" graph_is "$pid" remasker 1
"$gpupart" list --json > "$work/graphs-list.json" 2>&1
check "graph: list --json says its execs are re-masked ahead" matches "$work/graphs-list.json" '"remask": *"ahead"'
remasks=$(graph_counter "$pid" remasks)
"$gpupart" set "$pid" gpc1 --snapshot builtin:h200 > "$work/graphs-set.out" 2> "$work/graphs-set.err"; rc=$?
check "graph: set gpc1 exits 0" [ "$rc" -eq 0 ]
check "graph: set waited for the re-mask thread (settled at generation 2)" graph_is "$pid" settled_generation 2
check "graph: set said nothing about graphs" lacks "$work/graphs-set.out" "CUDA graphs"
touch "$work/graphs.go1"
check "graph: reaches its second pause" await "$work/graphs.2" "$pid"
check "graph: before any replay, the exec already carries gpc1" line_is "$out" 7 "graph 0 masks=$Y,$Y"
check "graph: so the replay after the set builds nothing" line_is "$out" 8 "graph 0 launch rebuilt=0 masks=$Y,$Y"
check "graph: the next replay builds nothing, keeps gpc1" line_is "$out" 9 "graph 0 launch rebuilt=0 masks=$Y,$Y"
check "graph: counts refer to generation 2" graph_is "$pid" generation 2
check "graph: still one exec" graph_is "$pid" execs 1
check "graph: current again" graph_is "$pid" current 1
check "graph: re-masked once for the change" graph_is "$pid" remasks $((remasks + 1))
check "graph: no re-mask refused" graph_is "$pid" remask_failures 0
check "graph: four graph launches counted (once each; the thread's upload is none)" graph_is "$pid" launches 4
touch "$work/graphs.go2"
check "graph: reaches its third pause" await "$work/graphs.3" "$pid"
check "graph: exec destroyed" line_is "$out" 12 "exec 0 destroyed"
check "graph: no exec left" graph_is "$pid" execs 0
check "graph: none current" graph_is "$pid" current 0
touch "$work/graphs.go3"
wait "$pid"; rc=$?
check "graph: exits 0" [ "$rc" -eq 0 ]
check "graph: every step ran" lines "$out" 14
check "graph: the shim said nothing" only_the_half_gpc0_warning "$work/graphs.err"

# GPUPART_GRAPH_REMASK=at-launch: no thread; the exec keeps its mask until its first replay after the set,
# which rebuilds both kernels with the new one (the cost the thread takes out of that replay).
start lazy env GPUPART_GRAPH_REMASK=at-launch "$gpupart" run --tpcs $Q --snapshot builtin:h200 -- "$host" \
    load:"$fake" graph:2 graphlaunch:0 ready:"$work/lazy.1" wait:"$work/lazy.go1" \
    graphmasks:0 graphlaunch:0 graphlaunch:0 ready:"$work/lazy.2" wait:"$work/lazy.go2"
pid=$started
out=$work/lazy.out
check "at-launch: reaches its first pause" await "$work/lazy.1" "$pid"
check "at-launch: no re-mask thread" graph_is "$pid" remasker 0
"$gpupart" list --json > "$work/lazy-list.json" 2>&1
check "at-launch: list --json says so" matches "$work/lazy-list.json" '"remask": *"at launch"'
"$gpupart" set "$pid" gpc1 --snapshot builtin:h200 > "$work/lazy-set.out" 2> "$work/lazy-set.err"; rc=$?
check "at-launch: set gpc1 exits 0" [ "$rc" -eq 0 ]
touch "$work/lazy.go1"
check "at-launch: reaches its second pause" await "$work/lazy.2" "$pid"
check "at-launch: until its replay the exec keeps 0-3" line_is "$out" 6 "graph 0 masks=$X,$X"
check "at-launch: the replay after the set rebuilds both kernels with gpc1" line_is "$out" 7 "graph 0 launch rebuilt=2 masks=$Y,$Y"
check "at-launch: the next replay builds nothing" line_is "$out" 8 "graph 0 launch rebuilt=0 masks=$Y,$Y"
check "at-launch: re-masked once" graph_is "$pid" remasks 1
touch "$work/lazy.go2"
wait "$pid"; rc=$?
check "at-launch: exits 0" [ "$rc" -eq 0 ]
check "at-launch: the shim said nothing" only_the_half_gpc0_warning "$work/lazy.err"

# A process whose re-mask thread cannot run (stopped): `gpupart set` waits at most a second for it, makes the
# change all the same and says which process's graphs take the mask at their next launch; once the process
# runs again, its thread brings the exec up to date before any replay.
start stopped "$gpupart" run --tpcs $Q --snapshot builtin:h200 -- "$host" load:"$fake" graph:2 graphlaunch:0 \
    ready:"$work/stopped.1" wait:"$work/stopped.go1" graphmasks:0 ready:"$work/stopped.2" wait:"$work/stopped.go2"
pid=$started
check "stopped: reaches its first pause" await "$work/stopped.1" "$pid"
kill -STOP "$pid"
set_start=$(date +%s%N)
"$gpupart" set "$pid" gpc1 --snapshot builtin:h200 > "$work/stopped-set.out" 2> "$work/stopped-set.err"; rc=$?
set_ms=$(( ($(date +%s%N) - set_start) / 1000000 ))
check "stopped: set gpc1 exits 0" [ "$rc" -eq 0 ]
check "stopped: set waited about a second, not more (${set_ms} ms)" [ "$set_ms" -ge 900 ] && [ "$set_ms" -lt 5000 ]
check "stopped: set says the graphs take the mask at their next launch" contains "$work/stopped-set.err" \
    "process $pid: not all of its CUDA graphs were re-masked within 1000 ms; they take the new mask at their next launch"
kill -CONT "$pid"
for _ in $(seq 1 200); do [ "$(graph_counter "$pid" settled_generation)" = 2 ] && break; sleep 0.01; done
check "stopped: running again, its thread settles the change" graph_is "$pid" settled_generation 2
touch "$work/stopped.go1"
check "stopped: reaches its second pause" await "$work/stopped.2" "$pid"
check "stopped: the exec carries gpc1 before any replay" line_is "$work/stopped.out" 6 "graph 0 masks=$Y,$Y"
touch "$work/stopped.go2"
wait "$pid"; rc=$?
check "stopped: exits 0" [ "$rc" -eq 0 ]

# Someone truncates the slot of a process whose re-mask thread runs: the slot guard swaps in a private copy
# when the thread next reads it (the thread leaves fault signals unblocked so the guard sees them), and the
# process lives on with its mask.
start truncated "$gpupart" run --tpcs $Q --snapshot builtin:h200 -- "$host" load:"$fake" graph:1 graphlaunch:0 \
    ready:"$work/truncated.1" wait:"$work/truncated.go1" graphlaunch:0
pid=$started
check "truncated: reaches its pause" await "$work/truncated.1" "$pid"
truncate -s 0 "$(slot_of "$pid")"
sleep 1.5  # the thread's wait fails on the vanished page and it reads the slot again after a second
check "truncated: the process still runs" running "$pid"
touch "$work/truncated.go1"
wait "$pid"; rc=$?
check "truncated: exits 0" [ "$rc" -eq 0 ]
check "truncated: its last replay kept its mask" line_is "$work/truncated.out" 6 "graph 0 launch rebuilt=0 masks=$X"

# A value the shim does not know: one line on stderr, and the default (the thread).
start odd env GPUPART_GRAPH_REMASK=sometimes "$gpupart" run --tpcs $Q --snapshot builtin:h200 -- "$host" \
    load:"$fake" graph:1 ready:"$work/odd.1" wait:"$work/odd.go1"
pid=$started
check "unknown GPUPART_GRAPH_REMASK: reaches its pause" await "$work/odd.1" "$pid"
check "unknown GPUPART_GRAPH_REMASK: the default, the thread" graph_is "$pid" remasker 1
touch "$work/odd.go1"
wait "$pid"; rc=$?
check "unknown GPUPART_GRAPH_REMASK: exits 0" [ "$rc" -eq 0 ]
check "unknown GPUPART_GRAPH_REMASK: one line says so" contains "$work/odd.err" \
    "gpupart-shim: GPUPART_GRAPH_REMASK must be 'ahead' or 'at-launch', not what it is: graphs are re-masked ahead"

# A process that only replays a graph is not idle: a replay stamps "last launch" too (a
# graph-only process showed "last launch 2.5 s ago" while it replayed hundreds of times a second).
start replay "$gpupart" run --tpcs $Q --snapshot builtin:h200 -- "$host" load:"$fake" graph:1 \
    graphlaunch:0 ready:"$work/replay.1" wait:"$work/replay.go1" graphlaunch:0 ready:"$work/replay.2" wait:"$work/replay.go2"
pid=$started
check "replay: reaches its first pause" await "$work/replay.1" "$pid"
first_launch=$(graph_counter "$pid" last_launch)
sleep 0.1  # the stamp is CLOCK_REALTIME_COARSE (a few ms): the replay must be visibly later
touch "$work/replay.go1"
check "replay: reaches its second pause" await "$work/replay.2" "$pid"
check "replay: two graph launches" graph_is "$pid" launches 2
check "replay: the replay (which builds no descriptor) moved the last launch" \
    [ "$(graph_counter "$pid" last_launch)" -gt $((first_launch + 50000000)) ]
touch "$work/replay.go2"
wait "$pid"

# Graphs of other shapes: destroyed by the application while its exec lives (PyTorch does so right after
# instantiating), a kernel in a child graph, a conditional node (its body cannot be read back, so its
# kernel keeps the old mask and the exec is reported), an exec for device launch (launched from the host).
start shapes "$gpupart" run --tpcs $Q --snapshot builtin:h200 -- "$host" load:"$fake" graph:2 graphdestroy:0 \
    graphchild graphcond devgraph:1 graphlaunch:0 graphlaunch:1 graphlaunch:2 graphlaunch:3 graphcount \
    ready:"$work/shapes.1" wait:"$work/shapes.go1" \
    graphlaunch:0 graphlaunch:1 graphlaunch:2 graphlaunch:3 ready:"$work/shapes.2" wait:"$work/shapes.go2" \
    execdestroy:0 graphcount execdestroy:2 ready:"$work/shapes.3" wait:"$work/shapes.go3"
pid=$started
out=$work/shapes.out
check "graph shapes: reach their first pause" await "$work/shapes.1" "$pid"
check "graph shapes: the application destroys graph 0" line_is "$out" 3 "graph 0 destroyed"
check "graph shapes: child graph instantiated" line_is "$out" 4 "graph 1 instantiated kernels=2"
check "graph shapes: conditional graph instantiated" line_is "$out" 5 "graph 2 instantiated kernels=2"
check "graph shapes: device-launch graph instantiated" line_is "$out" 6 "graph 3 instantiated kernels=1 device-launch"
check "graph shapes: destroyed graph's exec uploads with 0-3" line_is "$out" 7 "graph 0 launch rebuilt=2 masks=$X,$X"
check "graph shapes: child graph's kernel uploads with 0-3" line_is "$out" 8 "graph 1 launch rebuilt=2 masks=$X,$X"
check "graph shapes: conditional body uploads with 0-3" line_is "$out" 9 "graph 2 launch rebuilt=2 masks=$X,$X"
check "graph shapes: device-launch exec uploads with 0-3" line_is "$out" 10 "graph 3 launch rebuilt=1 masks=$X"
check "graph shapes: the shim keeps graph 0 for its exec" line_is "$out" 11 "graphs live=4"
check "graph shapes: four execs" graph_is "$pid" execs 4
check "graph shapes: the conditional one is unfollowable" graph_is "$pid" unfollowable 1
check "graph shapes: one for device launch" graph_is "$pid" device_launch 1
remasks=$(graph_counter "$pid" remasks)
"$gpupart" set "$pid" gpc1 --snapshot builtin:h200 > "$work/shapes-set.out" 2> "$work/shapes-set.err"; rc=$?
check "graph shapes: set gpc1 exits 0" [ "$rc" -eq 0 ]
touch "$work/shapes.go1"
check "graph shapes: reach their second pause" await "$work/shapes.2" "$pid"
# The thread re-masked and uploaded three before the set returned: their replays build nothing. The exec
# made for device launch it leaves to its host launch (the device may launch it at any time).
check "graph shapes: destroyed graph's exec follows" line_is "$out" 14 "graph 0 launch rebuilt=0 masks=$Y,$Y"
check "graph shapes: child graph's kernel follows" line_is "$out" 15 "graph 1 launch rebuilt=0 masks=$Y,$Y"
check "graph shapes: conditional body keeps 0-3, its sibling follows" line_is "$out" 16 \
    "graph 2 launch rebuilt=0 masks=$Y,$X"
check "graph shapes: device-launch exec follows at its host launch" line_is "$out" 17 "graph 3 launch rebuilt=1 masks=$Y"
check "graph shapes: three current" graph_is "$pid" current 3
check "graph shapes: still one unfollowable" graph_is "$pid" unfollowable 1
check "graph shapes: three re-masked for the change" graph_is "$pid" remasks $((remasks + 3))
check "graph shapes: no re-mask refused" graph_is "$pid" remask_failures 0
touch "$work/shapes.go2"
check "graph shapes: reach their third pause" await "$work/shapes.3" "$pid"
check "graph shapes: exec 0 destroyed" line_is "$out" 20 "exec 0 destroyed"
check "graph shapes: its held graph goes with it" line_is "$out" 21 "graphs live=3"
check "graph shapes: exec 2 destroyed" line_is "$out" 22 "exec 2 destroyed"
check "graph shapes: two execs left" graph_is "$pid" execs 2
check "graph shapes: both current" graph_is "$pid" current 2
check "graph shapes: none unfollowable" graph_is "$pid" unfollowable 0
check "graph shapes: still one for device launch" graph_is "$pid" device_launch 1
touch "$work/shapes.go3"
wait "$pid"; rc=$?
check "graph shapes: exit 0" [ "$rc" -eq 0 ]
check "graph shapes: every step ran" lines "$out" 24
check "graph shapes: the shim said nothing" only_the_half_gpc0_warning "$work/shapes.err"


# Threads replaying their execs (and re-enabling nodes) while sets keep moving the process: the re-mask
# thread must never be inside an exec at the same time as the application, and the last set must stand.
start stress "$gpupart" run --tpcs $Q --snapshot builtin:h200 -- "$stress_host" "$fake" 4 "$work/stress.ready" "$work/stress.stop"
pid=$started
check "stress: threads replaying" await "$work/stress.ready" "$pid"
set_failures=0
for ((round = 1; round <= 30; ++round)); do
    case $((round % 3)) in 0) mask=$Q ;; 1) mask=gpc1 ;; 2) mask=gpc6 ;; esac
    "$gpupart" set "$pid" "$mask" --snapshot builtin:h200 > "$work/stress-set.out" 2>&1 || set_failures=$((set_failures + 1))
done
check "stress: every set succeeded" [ "$set_failures" -eq 0 ]
check "stress: every set was settled by the thread (generation 31)" graph_is "$pid" settled_generation 31
touch "$work/stress.stop"
wait "$pid"; rc=$?
check "stress: exits 0 (every call succeeded, no two calls inside one exec)" [ "$rc" -eq 0 ]
check "stress: no overlap" contains "$work/stress.out" "overlaps 0"
check "stress: the last set (0,8,16,24) stands in every exec" [ "$(grep -c "masks=$X,$X,$X,$X" "$work/stress.out")" -eq 4 ]
check "stress: the threads replayed" matches "$work/stress.out" '^replays [1-9][0-9]*$'

checks_summary graph_end_to_end && rm -rf "$work"
[ "$failures" -eq 0 ]
