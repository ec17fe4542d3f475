#!/usr/bin/env bash
# Class 2: whatever anyone who may write a slot does to it (truncate, rewrite with garbage,
# replace), the process behind it lives on with a mask that has a real TPC. The REAL shim, preloaded into
# a real process driven by the test double of the CUDA driver, and the demo worker.
#   hostile_slot_tampering.sh GPUPART SHIM_SO FAKE_DRIVER_DIR SHIM_HOST DEMO_WORKER WORK_DIR
set -u
gpupart=$1 shim=$2 fake=$3/libcuda.so.1 host=$4 demo=$5 work=$6
rm -rf "$work" && mkdir -p "$work"
registry=$work/registry
export GPUPART_REGISTRY_DIR=$registry GPUPART_JOURNAL=$work/history.jsonl
unset LD_PRELOAD GPUPART_TPCS GPUPART_REAL_TPCS CUDA_VISIBLE_DEVICES FAKE_CUDA_GPUS
G0=GPU-00000000-0000-0000-0000-000000000001  # the test double's one GPU: the built-in H200 as the registry names it
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
# shellcheck source-path=SCRIPTDIR source=../lib/checks.sh
. "$(dirname "$0")/../lib/checks.sh"
end_jobs_on_exit

running() { local stat; read -r stat 2> /dev/null < "/proc/$1/stat" || return 1; stat=${stat##*) }; [ "${stat%% *}" != Z ]; }
await() { local i; for ((i = 0; i < 1000; ++i)); do [ -e "$1" ] && return 0; running "$2" || break; sleep 0.01; done; [ -e "$1" ]; }
slot_of() { compgen -G "$registry/u*/$1-*.slot"; }
masked_0_3() { grep -c "mask=0xfffffff0,0xffffffff,0xffffffff,0xffffffff" "$1"; }

# ---- A shimmed process on TPCs 0-3 whose slot is truncated, then replaced ----------------------------
env LD_PRELOAD="$shim" GPUPART_TPCS=$G0=0xf GPUPART_REAL_TPCS=$G0=0xff "$host" load:"$fake" launch:0x40 ready:"$work/r1" \
    wait:"$work/g1" launch:0x40 ready:"$work/r2" wait:"$work/g2" launch:0x40 > "$work/host.out" 2> "$work/host.err" &
host_pid=$!
check "host registered" await "$work/r1" $host_pid
slot=$(slot_of $host_pid)
check "slot is not writable by the owner's group (no setgid registry)" [ "$(stat -c %a "$slot")" = 644 ]
truncate -s 0 "$slot"
touch "$work/g1"
check "truncated: the host launches on" await "$work/r2" $host_pid
check "truncated: the host is alive" running $host_pid
check "truncated: it says so once" grep -q "slot was truncated by someone: it keeps its last TPC mask" "$work/host.err"
"$gpupart" list > "$work/list-truncated.out" 2>&1
check "list says the slot is truncated" grep -q "truncated or not a slot" "$work/list-truncated.out"
rm -f "$slot" && head -c 4096 /dev/urandom > "$slot"  # replaced by another file of the right size
touch "$work/g2"
wait $host_pid; rc=$?
check "replaced: the host finished normally (exit 0, got $rc)" [ $rc -eq 0 ]
check "every launch kept TPCs 0-3 (3 launches)" [ "$(masked_0_3 "$work/host.out")" -eq 3 ]

# ---- Shrunk to any size, not only 0: the next launch keeps TPCs 0-3, and says so once ----------------
# Within the first page the rest reads as zeros without a fault (the control block would say "no mask").
for size in 1 100 300 1000 2500 4095 4096 4097 6000 8191; do
    env LD_PRELOAD="$shim" GPUPART_TPCS=$G0=0xf GPUPART_REAL_TPCS=$G0=0xff "$host" load:"$fake" launch:0x40 \
        ready:"$work/t$size" wait:"$work/u$size" launch:0x40 launch:0x40 > "$work/shrunk$size.out" 2> "$work/shrunk$size.err" &
    shrunk_pid=$!
    check "shrunk to $size: host registered" await "$work/t$size" $shrunk_pid
    truncate -s "$size" "$(slot_of $shrunk_pid)"
    touch "$work/u$size"
    wait $shrunk_pid; rc=$?
    check "shrunk to $size: the host finished normally (exit 0, got $rc)" [ $rc -eq 0 ]
    check "shrunk to $size: every launch kept TPCs 0-3 (3 launches)" [ "$(masked_0_3 "$work/shrunk$size.out")" -eq 3 ]
    if [ "$size" -le 4096 ]; then  # beyond the first page the control block is whole: nothing lost, nothing said
        check "shrunk to $size: it says so once" \
            [ "$(grep -c "slot was truncated by someone: it keeps its last TPC mask" "$work/shrunk$size.err")" -eq 1 ]
    fi
done

# ---- A registry name too long for the shim: said in words (never a buffer it did not fill), mask kept --
long_dir=$work/$(printf 'd%.0s' $(seq 1 300))
GPUPART_REGISTRY_DIR=$long_dir env LD_PRELOAD="$shim" GPUPART_TPCS=$G0=0xf GPUPART_REAL_TPCS=$G0=0xff "$host" \
    load:"$fake" launch:0x40 > "$work/long.out" 2> "$work/long.err"
check "long registry name: the host finished normally" [ $? -eq 0 ]
check "long registry name: said so" grep -q "GPUPART_REGISTRY_DIR is longer than 255 characters: no registry: the start mask applies" "$work/long.err"
check "long registry name: stderr is printable text" bash -c "! LC_ALL=C grep -q '[^[:print:]]' '$work/long.err'"
check "long registry name: the launch kept TPCs 0-3" [ "$(masked_0_3 "$work/long.out")" -eq 1 ]

# ---- A shimmed process whose slot is rewritten in place with garbage, again and again ----------------
env LD_PRELOAD="$shim" GPUPART_TPCS=$G0=0xf GPUPART_REAL_TPCS=$G0=0xff "$host" load:"$fake" launch:0x40 ready:"$work/s1" \
    wait:"$work/h1" launch:0x40 launch:0x40 launch:0x40 > "$work/garbage.out" 2> "$work/garbage.err" &
garbage_pid=$!
check "second host registered" await "$work/s1" $garbage_pid
slot=$(slot_of $garbage_pid)
for _ in 1 2 3; do dd if=/dev/urandom of="$slot" bs=4096 count=1 conv=notrunc status=none; done
touch "$work/h1"
wait $garbage_pid; rc=$?
check "garbage: the host finished normally (exit 0, got $rc)" [ $rc -eq 0 ]
check "garbage: 4 launches" [ "$(grep -c '^launch ' "$work/garbage.out")" -eq 4 ]
# A mask from garbage is used only if it allows a real TPC (bits 0-7): never a hole-only mask (a hang).
check "garbage: no launch was confined to holes" bash -c "! grep -q 'word0=0xda5a5a5a mask=0x......ff,' '$work/garbage.out'"

# ---- The demo worker survives the same --------------------------------------------------------------
"$demo" tamper 0xf 0xff 30 200 > "$work/demo.out" 2> "$work/demo.err" &
demo_pid=$!
for _ in $(seq 1 200); do slot=$(slot_of $demo_pid) && break; sleep 0.01; done
check "demo worker registered" [ -n "$slot" ]
truncate -s 0 "$slot"
sleep 0.3
check "demo worker survives its slot being truncated" running $demo_pid
kill -TERM $demo_pid; wait $demo_pid; rc=$?
check "demo worker ends normally on SIGTERM (got $rc)" [ $rc -eq 0 ]

checks_summary "hostile_slot_tampering"
