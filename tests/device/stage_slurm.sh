#!/usr/bin/env bash
# Adds what tests/device/slurm_device.sh needs to .device-carry/ (after tests/device/stage.sh): the built
# gpupart_spank.so, and Debian 12's Slurm 22.05 and munge from this machine (apt-get install slurmctld slurmd
# slurm-client munge) as slurm.tar.xz, because the GPU machine has neither Slurm nor apt. Layout inside:
# bin/ (daemons and client commands), lib/ (their libraries), lib/slurm-wlm/ (libslurmfull and the plugins
# slurm.conf's PluginDir names there). Debian binaries run on the GPU machine's newer glibc.
set -euo pipefail
cd "$(dirname "$0")/../.."
cmake --build --preset device -j2 --target gpupart_spank
cp "$(find build/device -name gpupart_spank.so -print -quit)" .device-carry/
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/bin "$stage"/lib/slurm-wlm
for daemon in slurmctld slurmd slurmstepd; do cp -L /usr/sbin/$daemon-wlm "$stage/bin/$daemon"; done
cp -L /usr/sbin/munged "$stage"/bin/
for client in sbatch squeue scontrol scancel sinfo srun; do cp -L /usr/bin/$client "$stage"/bin/; done
# libslurmfull and every plugin (3 MB compressed): Slurm probes many plugin types at start.
cp -L /usr/lib/x86_64-linux-gnu/slurm-wlm/*.so "$stage"/lib/slurm-wlm/
for lib in libmunge.so.2 liblz4.so.1 libnuma.so.1 libhwloc.so.15 libpam.so.0 libpam_misc.so.0 libaudit.so.1 \
           libcap-ng.so.0 libgcrypt.so.20 libgpg-error.so.0 libbz2.so.1.0 libdbus-1.so.3 libsystemd.so.0 libzstd.so.1 \
           liblzma.so.5 libcap.so.2; do
    cp -L "/lib/x86_64-linux-gnu/$lib" "$stage"/lib/
done
tar -cJf .device-carry/slurm.tar.xz -C "$stage" .
du -sh .device-carry/slurm.tar.xz .device-carry
