#!/usr/bin/env bash
# Builds everything the GPU machine needs (gpu-only preset plus the CUDA test programs) and copies it to
# .device-carry/ (ignored by git), for the `device` tool's carry. The GPU machine has no fmt: its
# shared library travels along, and so does ncursesw (`gpupart top`), so that gpupart starts there even
# if the machine's image lacks it (Ubuntu's and Debian's libncursesw.so.6 are the same ncurses 6.4 ABI).
set -euo pipefail
cd "$(dirname "$0")/../.."
cmake --preset device > /dev/null
cmake --build --preset device -j2
rm -rf .device-carry && mkdir -p .device-carry
cp build/device/app/gpupart build/device/lib/libgpupart-shim.so build/device/device-bin/* .device-carry/
cp -L /usr/lib/x86_64-linux-gnu/libfmt.so.9 /usr/lib/x86_64-linux-gnu/libncursesw.so.6 /usr/lib/x86_64-linux-gnu/libtinfo.so.6 .device-carry/
strip .device-carry/gpupart  # debug info is not needed there, and the carry is limited to 64 MiB
# In a git worktree .git is a file: the exclude list lives in the common git directory.
exclude="$(git rev-parse --git-common-dir)/info/exclude"
mkdir -p "$(dirname "$exclude")" && { grep -qx "/.device-carry/" "$exclude" 2>/dev/null || echo "/.device-carry/" >> "$exclude"; }
du -sh .device-carry
