#!/usr/bin/env bash
# Builds everything the GPU machine needs (gpu-only preset plus the CUDA test programs) and copies it to
# .device-carry/ (ignored by git), for the `device` tool's carry. The GPU machine has no fmt and no
# Google Benchmark: their shared libraries travel along, and so does ncursesw (`gpupart top`), so that
# gpupart starts there even if the machine's image lacks it (Ubuntu's and Debian's libncursesw.so.6 are
# the same ncurses 6.4 ABI), and so do prometheus-cpp and civetweb (`gpupart exporter`). `stage.sh TARGET...` builds only those targets (gpupart, gpupart-probe,
# gpupart_shim, gpupart-dev-smid, ...) instead of the whole preset: the build machine's cores are
# shared; a program not built is not copied.
set -euo pipefail
cd "$(dirname "$0")/../.."
cmake --preset device > /dev/null
if [ $# -gt 0 ]; then cmake --build --preset device -j2 --target "$@"; else cmake --build --preset device -j2; fi
rm -rf .device-carry && mkdir -p .device-carry
cp build/device/app/gpupart build/device/app/gpupart-probe build/device/lib/libgpupart-shim.so build/device/device-bin/* .device-carry/
# libgpupart.so.1 (the libsmctrl API and the SMLP) for the programs that link it; found through LD_LIBRARY_PATH.
if [ -f build/device/lib/libgpupart.so.1 ]; then cp -L build/device/lib/libgpupart.so.1 .device-carry/; fi
if [ -f build/device/tests/bench_probe ]; then cp build/device/tests/bench_probe .device-carry/; fi
cp -L /usr/lib/x86_64-linux-gnu/libfmt.so.9 /usr/lib/x86_64-linux-gnu/libbenchmark.so.1debian \
      /usr/lib/x86_64-linux-gnu/libncursesw.so.6 /usr/lib/x86_64-linux-gnu/libtinfo.so.6 \
      /usr/lib/x86_64-linux-gnu/libprometheus-cpp-core.so.1.0 /usr/lib/x86_64-linux-gnu/libprometheus-cpp-pull.so.1.0 \
      /usr/lib/x86_64-linux-gnu/libcivetweb.so.1 /usr/lib/x86_64-linux-gnu/libcivetweb-cpp.so.1 .device-carry/
for program in gpupart gpupart-probe bench_probe; do  # debug info is not needed there, and the carry is limited to 64 MiB
    if [ -f ".device-carry/$program" ]; then strip ".device-carry/$program"; fi
done
# In a git worktree .git is a file: the exclude list lives in the common git directory.
exclude="$(git rev-parse --git-common-dir)/info/exclude"
mkdir -p "$(dirname "$exclude")" && { grep -qx "/.device-carry/" "$exclude" 2>/dev/null || echo "/.device-carry/" >> "$exclude"; }
du -sh .device-carry
