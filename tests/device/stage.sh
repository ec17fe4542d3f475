#!/usr/bin/env bash
# Builds everything the GPU machine needs (gpu-only preset plus the CUDA test programs) and copies it to
# .device-carry/ (ignored by git), for the `device` tool's carry. The GPU machine has no fmt: its
# shared library travels along. `stage.sh TARGET...` builds only those targets (gpupart, gpupart_shim,
# gpupart-dev-smid, ...) instead of the whole preset: the build machine's cores are shared.
set -euo pipefail
cd "$(dirname "$0")/../.."
cmake --preset device > /dev/null
if [ $# -gt 0 ]; then cmake --build --preset device -j2 --target "$@"; else cmake --build --preset device -j2; fi
rm -rf .device-carry && mkdir -p .device-carry
cp build/device/app/gpupart build/device/lib/libgpupart-shim.so build/device/device-bin/* .device-carry/
cp -L /usr/lib/x86_64-linux-gnu/libfmt.so.9 .device-carry/
strip .device-carry/gpupart  # debug info is not needed there, and the carry is limited to 64 MiB
# In a git worktree .git is a file: the exclude list lives in the common git directory.
exclude="$(git rev-parse --git-common-dir)/info/exclude"
mkdir -p "$(dirname "$exclude")" && { grep -qx "/.device-carry/" "$exclude" 2>/dev/null || echo "/.device-carry/" >> "$exclude"; }
du -sh .device-carry
