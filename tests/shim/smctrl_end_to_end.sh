#!/usr/bin/env bash
# Programs that partition themselves through libgpupart.so (the libsmctrl API), as real processes with a
# real registry, driven by the TEST DOUBLE of the CUDA driver (fake_libcuda.c, fake_launch.c, which models the
# H200): masks in TPC numbers translated through the GPU's GPC map (and refused without one), the precedence
# of next, stream and global masks per thread and per stream, TPCs above 63, streams destroyed and their
# addresses reused, errors returned (never an abort), the operator's mask on top through a real `gpupart set`,
# the library and the preloaded shim in one process, and GPC maps. No GPU; tests/device/smctrl_api.cu is the
# GPU run, libsmctrl_style.sh the libsmctrl test suite.
#   smctrl_end_to_end.sh GPUPART SHIM_SO FAKE_DRIVER_DIR SMCTRL_HOST WORK_DIR
set -u
fake_dir=$3
# shellcheck source-path=SCRIPTDIR source=shim_test_lib.sh
. "$(dirname "$0")/shim_test_lib.sh" "$1" "$2" "$3" "$4" "$5"  # the private registry, cleanup, slot helpers
uid=$(id -u)
fixture=$(cd "$(dirname "$0")/../fixtures/live-h200" && pwd)/live-h200.json  # a recorded H200 with its UUID
H200=GPU-258f535b-999d-058c-3642-767b7fb8d4f0
api=(env LD_LIBRARY_PATH="$fake_dir")  # the program finds "libcuda.so.1" (the test double) itself; env execs it

app_block() {  # app_block PID > FILE: the slot's app block (registry_layout.h, offset 5248), one fact per line
    python3 - "$(slot_of "$1")" <<'PY'
import struct, sys
b = open(sys.argv[1], 'rb').read()[5248:5248 + 2112]
seq, flags, count, hidden = struct.unpack_from('<4I', b, 0)
def hex128(w): return hex(w[0] | w[1] << 32 | w[2] << 64 | w[3] << 96)
print(f"flags={flags:#x} streams={count} hidden={hidden} global={hex128(struct.unpack_from('<4I', b, 16))}")
print("app_launches={} next_launches={} outside_bound={}".format(*struct.unpack_from('<3Q', b, 40)))
for i in range(count):
    s, d0, d1, d2, d3, n = struct.unpack_from('<Q4IQ', b, 64 + 32 * i)
    print(f"stream {s:#x} disable={hex128((d0, d1, d2, d3))} launches={n}")
PY
}
address_of() { sed -n "s/^stream $2 at //p" "$1"; }  # address_of OUT S: where newstream:S put stream S
G0_TEXT=GPU-00000000-0000-0000-0000-000000000001

# ---- 0. Masks are TPC numbers, translated through the GPU's GPC map: without a map, none is applied --------
NOMAP=GPU-99999999-0000-0000-0000-000000000009
"${api[@]}" FAKE_CUDA_GPUS=$NOMAP "$host" global:0xfffffffffffffff0 launch:null next:0x1 launch:null tpcs:0 \
    > "$work/nomap.out" 2> "$work/nomap.err"; rc=$?
check "no map: exits 0" [ "$rc" -eq 0 ]
check "no map: a mask is refused, naming the command that writes the map" line_is "$work/nomap.out" 1 \
    "global error libgpupart: libsmctrl_set_global_mask: no GPC map for $NOMAP (CUDA device 0): run \`gpupart gpcs --gpu $NOMAP --write\` (or \`gpupart topology\`) once on this machine"
check "no map: ... and never applied in another numbering" line_is "$work/nomap.out" 2 "launch null allowed=all"
check "no map: a next mask too" line_is "$work/nomap.out" 4 "launch null allowed=all"
check "no map: get_tpc_info says so" line_is "$work/nomap.out" 5 \
    "tpcs 0 error=61 libgpupart: libsmctrl_get_tpc_info: no GPC map for $NOMAP (CUDA device 0): run \`gpupart gpcs --gpu $NOMAP --write\` (or \`gpupart topology\`) once on this machine"

# The maps the rest uses, as gpupart writes them: the recorded H200's, and the same GPU under the UUID the test
# double's default GPU has (G0: the built-in H200, which has no UUID for gpupart to write a map under).
"$gpupart" gpcs --snapshot "$fixture" --write > "$work/gpcs-setup.out" 2>&1; rc=$?
check "setup: gpupart gpcs --write exits 0" [ "$rc" -eq 0 ]
python3 - "$registry/u$uid/$H200.gpcs" "$registry/u$uid/$G0_TEXT.gpcs" <<'PY'
import sys
b = bytearray(open(sys.argv[1], 'rb').read())
b[16:32] = bytes.fromhex("00000000000000000000000000000001")  # gpupart_gpu_uuid: the 16 bytes in order
open(sys.argv[2], 'wb').write(bytes(b))
PY

# Two GPUs, one without a map: masks apply on the one with a map; launches on the other run without them,
# counted in the app block (unmapped_launches, offset 32) and said once on stderr.
start twogpus "${api[@]}" FAKE_CUDA_GPUS=$G0_TEXT,$NOMAP "$host" global:0xfffffffffffffff0 launch:null device:1 launch:null \
    launch:null device:0 launch:null ready:"$work/twogpus.1" wait:"$work/twogpus.go"
pid=$started
check "two GPUs: reaches its pause" await "$work/twogpus.1" "$pid"
check "two GPUs: the mask set while on the GPU with a map" line_is "$work/twogpus.out" 1 "global ok"
check "two GPUs: ... applies there" line_is "$work/twogpus.out" 2 "launch null allowed=0-3"
check "two GPUs: ... not on the GPU without a map" line_is "$work/twogpus.out" 4 "launch null allowed=all"
check "two GPUs: ... and again on the first" line_is "$work/twogpus.out" 7 "launch null allowed=0-3"
check "two GPUs: launches without the map counted" [ "$(python3 -c 'import struct, sys; print(struct.unpack_from("<Q", open(sys.argv[1], "rb").read(), 5248 + 32)[0])' "$(slot_of "$pid")")" = 2 ]
touch "$work/twogpus.go"
wait "$pid"
check "two GPUs: one line on stderr about the GPU without a map" lines "$work/twogpus.err" 1
check "two GPUs: ... naming it and the command that writes its map" contains "$work/twogpus.err" \
    "libgpupart: no usable GPC map for $NOMAP (CUDA device 1): the masks this program sets do not apply to its kernels there; run \`gpupart gpcs --gpu $NOMAP --write\` once on this machine"

# ---- 1. A program not run by gpupart: it registers itself; next > stream > global, per thread ----------
start api "${api[@]}" "$host" pid global:0xfffffffffffffff0 newstream:0 newstream:1 launch:0 launch:null \
    stream:0:0xffffffffffffff0f launch:0 launch:1 launch:null \
    next:0xfffffffffffff0ff thread:launch:0 launch:1 launch:1 \
    thread:next:0xffffffffffff0fff+launch:null launch:null \
    next:0xfffffffffffff0ff launchex:0 launchex:0 ready:"$work/api.1" wait:"$work/api.go1" \
    global:0x1 launch:null global:0x8000000000000000 launch:null global128:0xffffffffffffffff launch:null \
    stream128:1:0xfffffffffffffffffffffff0ffffffff launch:1 next128:0xfffffffffffffffffffffffffffffffe launch:1 launch:1 \
    makemask:4:8 makemask128:60:72 destroy:1 newstream:2 launch:2 ready:"$work/api.2" wait:"$work/api.go2" \
    global:0xffffffffffffffff lasterror launch:null stream128:0:0xffffffffffffffffffffffffffffffff launch:0 \
    null:gpcs:0 null:gpcs128:0 null:tpcs:0 null:tpcscuda:0 null:makemask:1:2 makemask:8:4 makemask:0:65 \
    makemask128:0:129 gpcs:7 tpcscuda:9 tpcs:0 tpcscuda:0 lasterror
pid=$started
out=$work/api.out
check "api: reaches its first pause" await "$work/api.1" "$pid"
check "api: registered without gpupart run" has_slot "$pid"
check "api: the global mask applies" line_is "$out" 5 "launch 0 allowed=0-3"
check "api: the global mask on the default stream" line_is "$out" 6 "launch null allowed=0-3"
check "api: a stream mask is set" line_is "$out" 7 "stream 0 ok"
check "api: the stream mask beats the global mask" line_is "$out" 8 "launch 0 allowed=4-7"
check "api: another stream keeps the global mask" line_is "$out" 9 "launch 1 allowed=0-3"
check "api: the default stream keeps the global mask" line_is "$out" 10 "launch null allowed=0-3"
check "api: a next mask is set" line_is "$out" 11 "next ok"
check "api: another thread's launch does not take this thread's next mask" line_is "$out" 12 "launch 0 allowed=4-7"
check "api: the next mask beats global" line_is "$out" 13 "launch 1 allowed=8-11"
check "api: the next mask is used once" line_is "$out" 14 "launch 1 allowed=0-3"
check "api: a thread's own next mask" line_is "$out" 16 "launch null allowed=12-15"
check "api: ... is that thread's alone" line_is "$out" 17 "launch null allowed=0-3"
check "api: the next mask beats the stream mask (cuLaunchKernelEx)" line_is "$out" 19 "launchex 0 allowed=8-11"
check "api: cuLaunchKernelEx's stream is followed" line_is "$out" 20 "launchex 0 allowed=4-7"
"$gpupart" list --json > "$work/api.json"; rc=$?
check "api: gpupart list exits 0" [ "$rc" -eq 0 ]
check "api: listed like a shimmed process" contains "$work/api.json" "\"pid\": $pid,"
check "api: no operator mask" contains "$work/api.json" '"partitioned": false'
check "api: every launch counted" contains "$work/api.json" '"launches": 12,'
check "api: every launch masked" contains "$work/api.json" '"masked_launches": 12,'
app_block "$pid" > "$work/api.app1"
check "api: app block in use, numbered, with a global mask of 0-3 (64-127 disabled)" line_is "$work/api.app1" 1 \
    "flags=0xb streams=1 hidden=0 global=0xfffffffffffffffffffffffffffffff0"
check "api: app block counts 12 chosen launches, 3 from next masks, none outside" line_is "$work/api.app1" 2 \
    "app_launches=12 next_launches=3 outside_bound=0"
check "api: app block shows stream 0's mask and its 3 launches" line_is "$work/api.app1" 3 \
    "stream $(address_of "$out" 0) disable=0xffffffffffffffffffffffffffffff0f launches=3"
touch "$work/api.go1"
check "api: reaches its second pause" await "$work/api.2" "$pid"
check "api: a 64-bit mask disables TPCs 64-127, as libsmctrl's do" line_is "$out" 24 "launch null allowed=1-63"
check "api: ... with bit 63 set too" line_is "$out" 26 "launch null allowed=0-62"
check "api: a 128-bit global mask reaches TPCs 64-65" line_is "$out" 28 "launch null allowed=64-65"
check "api: a 128-bit stream mask" line_is "$out" 30 "launch 1 allowed=32-35"
check "api: a 128-bit next mask" line_is "$out" 32 "launch 1 allowed=0"
check "api: after it, the stream's" line_is "$out" 33 "launch 1 allowed=32-35"
check "api: make_mask allows 4-7" line_is "$out" 34 "makemask 0xffffffffffffff0f"
check "api: make_mask_ext allows 60-71" line_is "$out" 35 "makemask128 0xffffffffffffff000fffffffffffffff"
check "api: stream 1 destroyed" line_is "$out" 36 "destroyed 1"
check "api: a new stream at the destroyed one's address" [ "$(address_of "$out" 2)" = "$(address_of "$out" 1)" ]
check "api: ... does not inherit its mask" line_is "$out" 38 "launch 2 allowed=64-65"
app_block "$pid" > "$work/api.app2"
check "api: the destroyed stream's mask is gone from the app block" line_is "$work/api.app2" 1 \
    "flags=0xb streams=1 hidden=0 global=0xffffffffffffffff"
touch "$work/api.go2"
wait "$pid"; rc=$?
check "api: bad calls never abort: exits 0" [ "$rc" -eq 0 ]
ALL=0xffffffffffffffffffffffffffffffff
check "api: a mask with no TPC is refused" line_is "$out" 41 "global error libgpupart: libsmctrl_set_global_mask: mask $ALL disables every TPC: a kernel would never run; nothing changed"
check "api: gpupart_last_error says the same" line_is "$out" 42 "lasterror libgpupart: libsmctrl_set_global_mask: mask $ALL disables every TPC: a kernel would never run; nothing changed"
check "api: ... and nothing changed" line_is "$out" 43 "launch null allowed=64-65"
check "api: a stream mask with no TPC is refused" contains "$out" "stream 0 error libgpupart: libsmctrl_set_stream_mask_ext: mask $ALL disables every TPC"
check "api: ... and the stream keeps its mask" line_is "$out" 45 "launch 0 allowed=4-7"
check "api: get_gpc_info with NULL outputs" line_is "$out" 46 "gpcs 0 error=22 libgpupart: libsmctrl_get_gpc_info: an output pointer is NULL"
check "api: get_gpc_info_ext with NULL outputs" line_is "$out" 47 "gpcs128 0 error=22 libgpupart: libsmctrl_get_gpc_info_ext: an output pointer is NULL"
check "api: get_tpc_info with NULL" line_is "$out" 48 "tpcs 0 error=22 libgpupart: libsmctrl_get_tpc_info: an output pointer is NULL"
check "api: get_tpc_info_cuda with NULL" line_is "$out" 49 "tpcscuda 0 error=22 libgpupart: libsmctrl_get_tpc_info_cuda: num_tpcs is NULL"
check "api: make_mask with NULL" line_is "$out" 50 "makemask error=22 libgpupart: libsmctrl_make_mask: mask is NULL"
check "api: make_mask with low >= high" line_is "$out" 51 "makemask error=22 libgpupart: libsmctrl_make_mask: TPCs 8 to 4: need low < high_exclusive <= 64"
check "api: make_mask above 64" line_is "$out" 52 "makemask error=22 libgpupart: libsmctrl_make_mask: TPCs 0 to 65: need low < high_exclusive <= 64"
check "api: make_mask_ext above 128" line_is "$out" 53 "makemask128 error=22 libgpupart: libsmctrl_make_mask_ext: TPCs 0 to 129: need low < high_exclusive <= 128"
check "api: a device out of range" line_is "$out" 54 "gpcs 7 error=19 libgpupart: libsmctrl_get_gpc_info: CUDA device 7 does not exist: this process sees 1 (CUDA_VISIBLE_DEVICES applies)"
check "api: a device out of range (cuda)" line_is "$out" 55 "tpcscuda 9 error=19 libgpupart: libsmctrl_get_tpc_info_cuda: CUDA device 9 does not exist: this process sees 1 (CUDA_VISIBLE_DEVICES applies)"
check "api: TPCs from the GPC map" line_is "$out" 56 "tpcs 0 n=66"
check "api: TPCs from the driver's SM count" line_is "$out" 57 "tpcscuda 0 n=66"
check "api: a successful call leaves no error" line_is "$out" 58 "lasterror none"
check "api: every step ran" lines "$out" 58
check "api: the library said nothing on stderr" [ ! -s "$work/api.err" ]
check "api: normal exit removes the slot" no_slot "$pid"

# ---- 1b. More stream masks than the app block shows (64): all applied, the rest counted as hidden ------
start many "${api[@]}" "$host" newstream:0 stream:0:0xffffffffffffff0f launch:0 launch:0 \
    extra:70:0xfffffffffffff0ff launchextra:69 launchextra:62 ready:"$work/many.1" wait:"$work/many.go1" \
    destroy:0 launchextra:69 launchextra:62 whereextra:63 ready:"$work/many.2" wait:"$work/many.go2"
pid=$started
out=$work/many.out
check "many: reaches its first pause" await "$work/many.1" "$pid"
check "many: 70 more stream masks taken" line_is "$out" 5 "extra 70 ok"
check "many: a stream not shown in the slot still gets its mask" line_is "$out" 6 "launch extra 69 allowed=8-11"
app_block "$pid" > "$work/many.app1"
check "many: 64 shown, 7 counted as hidden" line_is "$work/many.app1" 1 \
    "flags=0x9 streams=64 hidden=7 global=0x0"
check "many: the first stream with its 2 launches" line_is "$work/many.app1" 3 \
    "stream $(address_of "$out" 0) disable=0xffffffffffffffffffffffffffffff0f launches=2"
last_shown=$(sed -n '66p' "$work/many.app1")
check "many: the 64th shown has its one launch" [ "${last_shown##* }" = "launches=1" ]
touch "$work/many.go1"
check "many: reaches its second pause" await "$work/many.2" "$pid"
check "many: hidden streams keep their masks" line_is "$out" 11 "launch extra 69 allowed=8-11"
app_block "$pid" > "$work/many.app2"
check "many: a hidden stream shown in the destroyed one's place" line_is "$work/many.app2" 1 \
    "flags=0x9 streams=64 hidden=6 global=0x0"
check "many: the last shown moved into the hole with its launches (2 now)" line_is "$work/many.app2" 3 \
    "${last_shown%=*}=2"
# The oldest hidden stream (extra 63, never launched) takes the freed place, whatever the addresses' order.
check "many: the oldest hidden stream is shown next, at 0 launches" line_is "$work/many.app2" 66 \
    "stream $(sed -n 's/^extra 63 at //p' "$out") disable=0xfffffffffffffffffffffffffffff0ff launches=0"
touch "$work/many.go2"
wait "$pid"; rc=$?
check "many: exits 0" [ "$rc" -eq 0 ]

# ---- 2. The operator's mask on top: `gpupart set` bounds what the program may choose ----------------
start bound "${api[@]}" "$host" pid global:0xffffffffffff0000 newstream:0 launch:null ready:"$work/bound.1" wait:"$work/bound.go1" \
    launch:null stream:0:0xffffffffff0fffff launch:0 global:0xfffffffffffff00f launch:null \
    next128:0xfffffffffffffffffffffffffffcffff launch:null next128:0xffffffffffffffffffffffffffffffef launch:null \
    global:0x0 launch:null launch:0 ready:"$work/bound.2" wait:"$work/bound.go2"
pid=$started
out=$work/bound.out
check "bound: reaches its first pause" await "$work/bound.1" "$pid"
check "bound: without an operator mask the program's applies alone" line_is "$out" 4 "launch null allowed=0-15"
"$gpupart" set "$pid" gpc1 --snapshot builtin:h200 > "$work/bound-set.out" 2> "$work/bound-set.err"; rc=$?
check "bound: gpupart set gpc1 exits 0" [ "$rc" -eq 0 ]
check "bound: set gpc1 (TPCs 1,9,17,25,32,39,46,53)" contains "$work/bound-set.out" "TPCs all -> 1,9,17,25,32,39,46,53 (8 TPCs, 16 SMs)"
touch "$work/bound.go1"
check "bound: reaches its second pause" await "$work/bound.2" "$pid"
check "bound: global 0-15 under gpc1 runs on both: 1,9" line_is "$out" 7 "launch null allowed=1,9"
check "bound: a stream mask outside the bound runs on the operator's mask" line_is "$out" 9 "launch 0 allowed=1,9,17,25,32,39,46,53"
check "bound: global 4-11 under gpc1: 9" line_is "$out" 11 "launch null allowed=9"
check "bound: next 16-17 under gpc1: 17" line_is "$out" 13 "launch null allowed=17"
check "bound: next on TPC 4, outside the bound: the operator's mask" line_is "$out" 15 "launch null allowed=1,9,17,25,32,39,46,53"
check "bound: global 0x0 (TPCs 0-63) under gpc1: gpc1" line_is "$out" 17 "launch null allowed=1,9,17,25,32,39,46,53"
check "bound: the stream's choice still outside: gpc1" line_is "$out" 18 "launch 0 allowed=1,9,17,25,32,39,46,53"
check "bound: no launch after the set left gpc1" python3 -c '
import sys
lines = open(sys.argv[1]).read().splitlines()[6:]
for line in lines:
    if " allowed=" not in line: continue
    bits = set()
    for part in line.split("allowed=")[1].split(","):
        a, _, b = part.partition("-")
        bits.update(range(int(a), int(b or a) + 1))
    if not bits <= {1, 9, 17, 25, 32, 39, 46, 53}: sys.exit(1)' "$out"
app_block "$pid" > "$work/bound.app"
check "bound: three launches fell back to the operator's mask" line_is "$work/bound.app" 2 \
    "app_launches=8 next_launches=2 outside_bound=3"
"$gpupart" list --json > "$work/bound.json"
check "bound: list shows the operator's bound" contains "$work/bound.json" '"tpcs": "1,9,17,25,32,39,46,53"'
touch "$work/bound.go2"
wait "$pid"; rc=$?
check "bound: exits 0" [ "$rc" -eq 0 ]

# ---- 3. Linked against libgpupart.so AND run with the shim preloaded: one slot, one set of masks -----
start both "$gpupart" run --tpcs 0-15 --snapshot builtin:h200 -- env LD_LIBRARY_PATH="$fake_dir" "$host" pid \
    global:0xffffffffff0000ff launch:null global128:0x3ffffffffffffffff launch:null ready:"$work/both.1" wait:"$work/both.go"
pid=$started
out=$work/both.out
check "both: reaches its pause" await "$work/both.1" "$pid"
check "both: the shim is preloaded" grep -qF -- "libgpupart-shim.so" "/proc/$pid/maps"
check "both: libgpupart.so is linked" grep -qF -- "libgpupart.so.1" "/proc/$pid/maps"
check "both: exactly one slot" [ "$(find "$registry" -name '*.slot' | wc -l)" -eq 1 ]
check "both: ... the process's" has_slot "$pid"
check "both: the program's global mask (8-23) inside gpupart run's (0-15): 8-15" line_is "$out" 3 "launch null allowed=8-15"
check "both: a mask of numbers past the GPU's TPCs (66-127) is refused" line_is "$out" 4 \
    "global error libgpupart: libsmctrl_set_global_mask_ext: mask 0x3ffffffffffffffff allows none of TPCs 0-65 of $G0_TEXT (CUDA device 0): a kernel would never run; nothing changed"
check "both: ... and changes nothing" line_is "$out" 5 "launch null allowed=8-15"
app_block "$pid" > "$work/both.app"
check "both: the serving copy publishes the app block" line_is "$work/both.app" 1 \
    "flags=0xb streams=0 hidden=0 global=0xffffffffffffffffffffffffff0000ff"
touch "$work/both.go"
wait "$pid"; rc=$?
check "both: exits 0" [ "$rc" -eq 0 ]
check "both: nothing from the libraries on stderr" bash -c '! grep -q "shim\|libgpupart" "$1"' _ "$work/both.err"
check "both: the slot is removed at exit" no_slot_files

# ---- 5. GPC maps: written by gpupart from a topology with a UUID, read by get_gpc_info -----------------
map=$registry/u$uid/$H200.gpcs
"$gpupart" gpcs --snapshot builtin:h200 --write > "$work/gpcs-builtin.out" 2> "$work/gpcs-builtin.err"; rc=$?
check "gpcs: a built-in recording's map is not written" [ "$rc" -eq 1 ]
check "gpcs: ... in one line saying why" lines "$work/gpcs-builtin.err" 1
check "gpcs: ... no UUID" contains "$work/gpcs-builtin.err" "has no UUID in this snapshot"
"$gpupart" gpcs --snapshot "$fixture" --write > "$work/gpcs.out" 2> "$work/gpcs.err"; rc=$?
check "gpcs --write: exits 0" [ "$rc" -eq 0 ]
check "gpcs: gpc1 with TPCs above 63 (this recording numbers GPCs physically)" contains "$work/gpcs.out" "[1] gpc1  TPCs 0,8,16,24,62-65                    bits:0xa4800000000000000000f"
check "gpcs: says where it wrote" contains "$work/gpcs.out" "wrote $map"
check "gpcs: the map is there, mode 0644" [ "$(stat -c %a "$map")" = 644 ]
"$gpupart" gpcs --snapshot "$fixture" --json > "$work/gpcs.json"
expected=$(python3 -c 'import json, sys; print(",".join(g["mask"] for g in json.load(open(sys.argv[1]))["gpcs"]))' "$work/gpcs.json")
"${api[@]}" FAKE_CUDA_GPUS=$H200 "$host" gpcs:0 gpcs128:0 tpcs:0 global128:0x3ffffffffffffffff \
    global:0x0 > "$work/maps.out" 2> "$work/maps.err"; rc=$?
check "maps: exits 0" [ "$rc" -eq 0 ]
check "maps: 64-bit GPC info refused above TPC 63" line_is "$work/maps.out" 1 "gpcs 0 error=34 libgpupart: libsmctrl_get_gpc_info: CUDA device 0 has 66 TPCs, more than 64-bit masks can name: use libsmctrl_get_gpc_info_ext"
check "maps: the 128-bit GPC info is gpupart's, in TPC numbers" line_is "$work/maps.out" 2 "gpcs128 0 n=8 $expected"
check "maps: its TPC count" line_is "$work/maps.out" 3 "tpcs 0 n=66"
check "maps: a mask of numbers past the map's TPCs is refused" line_is "$work/maps.out" 4 \
    "global error libgpupart: libsmctrl_set_global_mask_ext: mask 0x3ffffffffffffffff allows none of TPCs 0-65 of $H200 (CUDA device 0): a kernel would never run; nothing changed"
check "maps: a mask with real TPCs is taken" line_is "$work/maps.out" 5 "global ok"
rm -f "$map"
"$gpupart" topology --snapshot "$fixture" > /dev/null 2> "$work/topology.err"; rc=$?
check "topology: exits 0" [ "$rc" -eq 0 ]
check "topology: writes the map of a GPU with a UUID" present "$map"
check "topology: says nothing about it" [ ! -s "$work/topology.err" ]
"$gpupart" topology --snapshot builtin:h200 > /dev/null; rc=$?
check "topology of the built-in recording: exits 0" [ "$rc" -eq 0 ]
check "topology of the built-in recording: writes no map (the H200's and G0's remain)" [ "$(find "$registry" -name '*.gpcs' | wc -l)" -eq 2 ]
# A small GPU's map, written as the layout says: two GPCs of four TPCs, all below bit 64, numbered across
# the GPCs (TPC k is bit 0,4,1,5,2,6,3,7: as on the H200, consecutive numbers lie in different GPCs).
SMALL=GPU-11111111-2222-3333-4444-555555555555
python3 - "$registry/u$uid/$SMALL.gpcs" <<'PY'
import struct, sys
uuid = bytes.fromhex("11111111222233334444555555555555")
words = struct.unpack("<4I", uuid)  # gpupart_gpu_uuid: the 16 bytes in order, as four u32 words
head = struct.pack("<8sII4III Q4I32s32x", b"gpgpcs\0\0", 5, 768, *words, 2, 8, 0, 0xff, 0, 0, 0, b"test")
body = struct.pack("<4I", 0x0f, 0, 0, 0) + struct.pack("<4I", 0xf0, 0, 0, 0) + bytes(16 * 30)
numbering = bytes([0, 4, 1, 5, 2, 6, 3, 7]) + b"\xff" * 120
open(sys.argv[1], "wb").write(head + body + numbering)
PY
"${api[@]}" FAKE_CUDA_GPUS=$H200,$SMALL "$host" gpcs:1 tpcs:1 gpcs128:1 > "$work/small.out" 2> "$work/small.err"; rc=$?
check "small map: exits 0" [ "$rc" -eq 0 ]
check "small map: 64-bit GPC info, in numbers" line_is "$work/small.out" 1 "gpcs 1 n=2 0x55,0xaa"
check "small map: TPC count" line_is "$work/small.out" 2 "tpcs 1 n=8"
check "small map: 128-bit GPC info, in numbers" line_is "$work/small.out" 3 "gpcs128 1 n=2 0x55,0xaa"
if [ "$uid" -eq 0 ]; then  # chown needs root
    chown 12345 "$map"
    "${api[@]}" FAKE_CUDA_GPUS=$H200 "$host" gpcs128:0 > "$work/owner.out" 2>&1
    check "a map of another owner: refused, naming the command that writes it anew" contains "$work/owner.out" \
        "gpcs128 0 error=1 libgpupart: libsmctrl_get_gpc_info_ext: the GPC map $map: Operation not permitted: run \`gpupart gpcs --gpu $H200 --write\`"
    "$gpupart" gpcs --snapshot "$fixture" --write > /dev/null 2>&1; rc=$?
    check "a map of another owner: replaced by gpcs --write" [ "$rc" -eq 0 ] && [ "$(stat -c %u "$map")" -eq 0 ]
fi
rm -f "$map" && mkfifo "$map"
"${api[@]}" FAKE_CUDA_GPUS=$H200 timeout 10 "$host" gpcs128:0 > "$work/fifo.out" 2>&1; rc=$?
check "a FIFO for a map: refused, never blocked on" [ "$rc" -eq 0 ] && contains "$work/fifo.out" "gpcs128 0 error=5 libgpupart: libsmctrl_get_gpc_info_ext: the GPC map $map: Invalid argument"
"$gpupart" gpcs --snapshot "$fixture" --write > /dev/null 2> "$work/fifo-write.err"; rc=$?
check "a FIFO for a map: not replaced by gpcs --write" [ "$rc" -eq 1 ] && [ -p "$map" ]
check "a FIFO for a map: one line saying so" contains "$work/fifo-write.err" "is not a regular file: not replaced (remove it)"

checks_summary smctrl_end_to_end && rm -rf "$work"
[ "$failures" -eq 0 ]
