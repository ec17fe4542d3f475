#!/usr/bin/env bash
# gpupart gpus / engines / copy-engines / topology --sources as a user runs them: on the built-in
# recording (CI has no GPU), and on a constructed machine that has an NVIDIA GPU but no driver loaded
# (GPUPART_SYSFS_ROOT, GPUPART_DEV_ROOT), where the live view must say exactly which source is missing.
#   cli_topology_sources.sh PATH/TO/gpupart WORK_DIR
set -u
gpupart=$1
work=$2
# shellcheck source-path=SCRIPTDIR source=../lib/checks.sh
. "$(dirname "$0")/../lib/checks.sh"
private_registry "$work"

# -- the built-in recording: every command works and says it is the recording
"$gpupart" gpus > "$work/gpus.txt"; rc=$?
check "gpus exits 0" [ "$rc" -eq 0 ]
check "gpus names the recording" contains "$work/gpus.txt" "snapshot: builtin:h200 ("
check "gpus lists the H200" contains "$work/gpus.txt" "GPU 0  0000:00:06.0  NVIDIA H200"
check "gpus says no source was read live" contains "$work/gpus.txt" "sources: none read live (builtin:h200 is a recording)"
"$gpupart" gpus --json > "$work/gpus.json"; rc=$?
check "gpus --json exits 0" [ "$rc" -eq 0 ]
check "gpus --json not live" contains "$work/gpus.json" '"live": false'
check "gpus --json mask bits known" contains "$work/gpus.json" '"mask_bits_known": true'

"$gpupart" engines > "$work/engines.txt"; rc=$?
check "engines exits 0" [ "$rc" -eq 0 ]
check "engines: runlist 0" contains "$work/engines.txt" "runlist 0    GR0, COPY0 (GRCE), COPY1 (GRCE)"
check "engines: recorded source" contains "$work/engines.txt" "source: recorded: tests/fixtures/live-h200/live-h200.json (rmctrl: GPU_GET_ENGINES_V2)"
check "engines: the H200's own runlists" contains "$work/engines.txt" "runlist 10   COPY4"
check "engines: SW has no runlist" contains "$work/engines.txt" "runlist ?    SW: the driver gives this engine no runlist"
"$gpupart" engines --json > "$work/engines.json"; rc=$?
check "engines --json exits 0" [ "$rc" -eq 0 ]
check "engines --json has GR0" contains "$work/engines.json" '"name": "GR0"'
check "engines --json tsgs_in_use" contains "$work/engines.json" '"tsgs_in_use"'

"$gpupart" copy-engines > "$work/ce.txt"; rc=$?
check "copy-engines exits 0" [ "$rc" -eq 0 ]
check "copy-engines: LCE4 owns PCEs 0-11" contains "$work/ce.txt" "LCE4                PCEs 0-11"
check "copy-engines: GRCE sharing flagged" contains "$work/ce.txt" "! LCE0 and LCE2 share PCEs 12,14"
"$gpupart" copy-engines --json > "$work/ce.json"; rc=$?
check "copy-engines --json exits 0" [ "$rc" -eq 0 ]
check "copy-engines --json shared pair" contains "$work/ce.json" '"pces": "13,15"'

"$gpupart" topology --sources > "$work/sources.txt"; rc=$?
check "topology --sources exits 0" [ "$rc" -eq 0 ]
check "topology --sources: a recording" contains "$work/sources.txt" "none read live: this is a recording"
check "topology --sources: TPC origin" contains "$work/sources.txt" "from recorded: tests/fixtures/live-h200/live-h200.json (rmctrl: GR_GET_TPC_MASK"
check "topology --sources: every TPC confirmed by the %smid log" contains "$work/sources.txt" "SMs confirmed by tests/fixtures/h200/2026-11-22-maskbits.log (%smid per block) (66)"
"$gpupart" topology --sources --json > "$work/sources.json"; rc=$?
check "topology --sources --json exits 0" [ "$rc" -eq 0 ]
check "topology --sources --json facts" contains "$work/sources.json" '"fact": "TPC mask bits"'

cat > "$work/later.json" <<'JSON'
{"format": "gpupart-profile", "version": 2, "name": "later", "description": "",
 "rules": [ {"match": {"exe": "trainer"}, "tpcs": "gpc6"} ]}
JSON

# -- a machine with an NVIDIA GPU and no driver: the live view, with the missing source in one line
machine=$work/machine
mkdir -p "$machine/sys/bus/pci/devices/0000:00:06.0" "$machine/dev"
printf '0x10de\n' > "$machine/sys/bus/pci/devices/0000:00:06.0/vendor"
printf '0x2335\n' > "$machine/sys/bus/pci/devices/0000:00:06.0/device"
printf '0x030200\n' > "$machine/sys/bus/pci/devices/0000:00:06.0/class"
mkdir -p "$machine/proc"
export GPUPART_SYSFS_ROOT=$machine/sys GPUPART_DEV_ROOT=$machine/dev GPUPART_PROC_ROOT=$machine/proc
export GPUPART_NVML_LIBRARY=$machine/no-libnvidia-ml.so.1
"$gpupart" topology > "$work/live.txt" 2> "$work/live.err"; rc=$?
check "live topology exits 0" [ "$rc" -eq 0 ]
check "live topology is live" contains "$work/live.txt" "snapshot: live (1 NVIDIA GPU on this machine, read now (rmctrl absent, probe absent, nvml absent, "
check "live topology names the missing node" contains "$work/live.txt" "  rmctrl absent: $machine/dev/nvidiactl: No such file or directory (is the NVIDIA driver loaded?)"
check "live topology makes nothing up" contains "$work/live.txt" "TPC layout: not known for this GPU (no source gave one)"
check "live topology: nothing on stderr" [ ! -s "$work/live.err" ]
"$gpupart" gpus > "$work/live-gpus.txt"; rc=$?
check "live gpus exits 0" [ "$rc" -eq 0 ]
check "live gpus: the GPU from sysfs" contains "$work/live-gpus.txt" "GPU 0  0000:00:06.0  GPU 0"
check "live gpus: the source line" contains "$work/live-gpus.txt" "  rmctrl absent: $machine/dev/nvidiactl: No such file"
"$gpupart" gpus --json > "$work/live-gpus.json"; rc=$?
check "live gpus --json: state absent" contains "$work/live-gpus.json" '"state": "absent"'
check "live gpus: nvdebug says it is not loaded" contains "$work/live-gpus.txt" "  nvdebug absent: no $machine/proc/gpu0: the nvdebug module is not loaded"
check "live gpus: NVML absent in one line" matches "$work/live-gpus.txt" "^  nvml absent: "
"$gpupart" mask parse gpc0 > "$work/live-mask.out" 2> "$work/live-mask.err"; rc=$?
check "a mask on an unprobed live GPU is refused" [ "$rc" -eq 1 ]
check "the refusal is one line" lines "$work/live-mask.err" 1
check "the refusal says why" contains "$work/live-mask.err" "gpupart: GPU 0's launch-descriptor bits are not known (no source gave a TPC layout)"
"$gpupart" mask parse gpc0 --snapshot builtin:h200 > /dev/null; rc=$?
check "a named recording still works on a GPU machine" [ "$rc" -eq 0 ]
# Changing TPCs needs the mask bits; disarming profile rules (and undoing that) names no TPC and does not.
"$gpupart" profile apply "$work/later.json" --snapshot builtin:h200 > /dev/null; rc=$?
check "profile apply with a recording arms the rules" [ "$rc" -eq 0 ]
"$gpupart" undo --dry-run > "$work/live-undo.out" 2> "$work/live-undo.err"; rc=$?
check "undo of an apply that changed no process needs no mask bits" [ "$rc" -eq 0 ]
"$gpupart" profile disarm > "$work/live-disarm.out" 2> "$work/live-disarm.err"; rc=$?
check "disarm on an unprobed live GPU exits 0" [ "$rc" -eq 0 ]
check "disarm says what it disarmed" contains "$work/live-disarm.out" "rules for processes that start later: profile later (1 rule) -> no rules"
check "disarm removed the table" [ ! -e "$GPUPART_REGISTRY_DIR/u$(id -u)/rules" ]
"$gpupart" undo > "$work/live-undo2.out" 2> "$work/live-undo2.err"; rc=$?
check "undo of the disarm exits 0" [ "$rc" -eq 0 ]
check "undo of the disarm arms the rules again" [ -e "$GPUPART_REGISTRY_DIR/u$(id -u)/rules" ]
"$gpupart" set "$$" gpc0 > /dev/null 2> "$work/live-set.err"; rc=$?
check "set on an unprobed live GPU is refused" [ "$rc" -eq 1 ]
check "set says why" contains "$work/live-set.err" "launch-descriptor bits are not known"
"$gpupart" profile disarm > /dev/null
"$gpupart" export --json "$work/live.json" 2> /dev/null; rc=$?
check "export of the live snapshot" [ "$rc" -eq 0 ]
"$gpupart" topology --snapshot "$work/live.json" > /dev/null; rc=$?
check "the exported live snapshot loads" [ "$rc" -eq 0 ]

checks_summary "cli topology and sources"
