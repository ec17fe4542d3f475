#!/usr/bin/env bash
# `gpupart probe` and `gpupart source ...` as a user runs them on a machine with no NVIDIA GPU (CI):
# one line per source that is not there, and the nvdebug/MMIO readers on the synthesized H100 files.
#   cli_sources_end_to_end.sh PATH/TO/gpupart FIXTURES_DIR WORK_DIR
set -u
gpupart=$1
fixtures=$2
work=$3
rm -rf "$work" && mkdir -p "$work"
export XDG_CACHE_HOME=$work/cache CUDA_MPS_PIPE_DIRECTORY=$work/no-mps
# Under the asan preset the shim that `gpupart probe` preloads carries the sanitizer runtime.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
# shellcheck source-path=SCRIPTDIR source=../lib/checks.sh
. "$(dirname "$0")/../lib/checks.sh"
# What this checks is gpupart on a machine with no NVIDIA software at all. Any part of a driver (its device
# nodes, libcuda or NVML where the loader finds them, the nvdebug module, an NVIDIA PCI device) changes
# every answer below: such a machine cannot run this test, and says so with 77 (skipped), never 0.
untestable() {
    if [ -e /dev/nvidiactl ]; then echo "/dev/nvidiactl exists"; return 0; fi
    if [ -e /proc/gpu0 ]; then echo "/proc/gpu0 exists (nvdebug)"; return 0; fi
    if /sbin/ldconfig -p 2> /dev/null | grep -qE '(libcuda|libnvidia-ml)\.so\.1 '; then
        echo "libcuda or NVML is installed"; return 0
    fi
    if grep -qx 0x10de /sys/bus/pci/devices/*/vendor 2> /dev/null; then echo "an NVIDIA PCI device is present"; return 0; fi
    return 1
}
if why=$(untestable); then echo "skipped: $why (the device tests cover such machines)"; exit 77; fi

"$gpupart" probe > "$work/probe.out" 2> "$work/probe.err"; rc=$?
check "probe without a driver exits 1" [ "$rc" -eq 1 ]
check "probe says no libcuda in one line" lines "$work/probe.err" 1
check "probe: the line" contains "$work/probe.err" "gpupart: probe: no libcuda: libcuda.so.1: cannot open shared object file"
check "probe cached nothing" [ ! -d "$work/cache/gpupart" ]

"$gpupart" source nvml > "$work/nvml.txt"; rc=$?
check "source nvml exits 0" [ "$rc" -eq 0 ]
check "nvml absent line" contains "$work/nvml.txt" "nvml absent: no NVML: libnvidia-ml.so.1: cannot open shared object file"
check "mps line" contains "$work/nvml.txt" "mps: not running (no control socket $work/no-mps/control)"
"$gpupart" source nvml --json > "$work/nvml.json"
check "nvml --json state" contains "$work/nvml.json" '"state": "absent"'
"$gpupart" source udev > "$work/udev.txt"
check "udev absent line" matches "$work/udev.txt" "^udev absent: no NVIDIA GPU \(vendor 0x10de, display class\) among [0-9]+ PCI devices$"
"$gpupart" source nvdebug > "$work/nvdebug.txt"
check "nvdebug absent line" contains "$work/nvdebug.txt" "nvdebug absent: no /proc/gpu0: the nvdebug module is not loaded"
"$gpupart" source mmio > "$work/mmio.txt"
check "mmio without a GPU" contains "$work/mmio.txt" "mmio absent: no NVIDIA GPU 0 on this machine (0 found); give --mmio-image FILE"

"$gpupart" source nvdebug --nvdebug-root "$fixtures/nvdebug-h100" > "$work/nvdebug-h100.txt"; rc=$?
check "nvdebug root exits 0" [ "$rc" -eq 0 ]
check "nvdebug root ok" contains "$work/nvdebug-h100.txt" "nvdebug ok: read $fixtures/nvdebug-h100/gpu0"
check "nvdebug floorplan" contains "$work/nvdebug-h100.txt" "  physical gpc 1: TPCs 0x1fd"
check "nvdebug SM order" contains "$work/nvdebug-h100.txt" "SM order (CWD): 66 TPCs"
check "nvdebug copy topology" contains "$work/nvdebug-h100.txt" "  LCE04 -> PCE11"
check "nvdebug runlist" contains "$work/nvdebug-h100.txt" "    TSG 1: channels 1 2 3"
"$gpupart" source nvdebug --nvdebug-root "$fixtures/nvdebug-h100" --json > "$work/nvdebug-h100.json"
check "nvdebug --json pce map" contains "$work/nvdebug-h100.json" '"pce_map": "0xffff"'

"$gpupart" source mmio --mmio-image "$fixtures/mmio-h100/h100-bar0.regs" > "$work/mmio-h100.txt"; rc=$?
check "mmio image exits 0" [ "$rc" -eq 0 ]
check "mmio image ok" contains "$work/mmio-h100.txt" "mmio ok: register image $fixtures/mmio-h100/h100-bar0.regs: Hopper (architecture 0x18)"
check "mmio GRCE sharing" contains "$work/mmio-h100.txt" "  LCE0 PCEs 0x5000 (GRCE sharing LCE2)"
check "mmio runlist and channels" contains "$work/mmio-h100.txt" "  runlist 0 (RAM 0xc00000): channels in use 1 2 3"
check "mmio runlist 10" contains "$work/mmio-h100.txt" "  runlist 10 (RAM 0xc00c00): channels in use none"

printf '0x0 0x18000000\n0x22430 eight\n' > "$work/bad.regs"
"$gpupart" source mmio --mmio-image "$work/bad.regs" > "$work/bad.out" 2> "$work/bad.err"; rc=$?
check "malformed image exits 1" [ "$rc" -eq 1 ]
check "malformed image: one line" lines "$work/bad.err" 1
check "malformed image: where" contains "$work/bad.err" "gpupart: $work/bad.regs line 2: expected '0xOFFSET 0xVALUE'"
"$gpupart" source mmio --mmio-image "$work/none.regs" > /dev/null 2> "$work/none.err"; rc=$?
check "missing image exits 1 with one line" [ "$rc" -eq 1 -a "$(wc -l < "$work/none.err")" -eq 1 ]
"$gpupart" source nvml --mmio-image "$work/bad.regs" > /dev/null 2> "$work/wrong.err"; rc=$?
check "--mmio-image only with mmio" [ "$rc" -eq 1 ]
check "--mmio-image message" contains "$work/wrong.err" "gpupart: --mmio-image goes with \`gpupart source mmio\`"

checks_summary "cli sources"
