#!/usr/bin/env bash
# Inside a brand-new Debian 12 root (.ci/run): the README's test command, then checks that its build made
# the app of the first command and that the app starts, then the .debs from that same build, into /share.
set -euo pipefail
start=$(date +%s)
# One command a line: under `set -e` a failure inside an `a && b && c` list does not stop the script.
echo "== README test command (packaging/setup-debian.sh && cmake --preset default && cmake --build --preset default && ctest --preset default)"
packaging/setup-debian.sh
cmake --preset default
cmake --build --preset default
ctest --preset default

echo "== README app command: its build made build/default/app/gpupart-gui, and it starts offscreen"
[ -x build/default/app/gpupart-gui ] || { echo "fresh-root-build: no build/default/app/gpupart-gui" >&2; exit 1; }
.ci/gui-starts.sh build/default/app/gpupart-gui

echo "== .deb (cpack) from the same build"
(cd build/default && cpack -G DEB)
cp build/default/gpupart_*_amd64.deb build/default/gpupart-gui_*_amd64.deb build/default/libgpupart1_*_amd64.deb \
   build/default/libgpupart-dev_*_amd64.deb build/default/gpupart-dbgsym_*_amd64.ddeb \
   build/default/gpupart-gui-dbgsym_*_amd64.ddeb build/default/libgpupart1-dbgsym_*_amd64.ddeb /share/
mkdir -p /share/fake-driver
cp build/default/tests/shim/fake-driver/libcuda.so.1 /share/fake-driver/
cp build/default/tests/shim/gpupart_shim_host /share/
echo "== fresh root took $(( $(date +%s) - start )) s"
