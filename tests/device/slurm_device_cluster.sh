# shellcheck shell=bash disable=SC2034,SC2154  # sets node and cluster_dir for, and reads bin, out, gp, here of, the sourcing script
# Debian 12's Slurm on the GPU machine (slurm.tar.xz from stage_slurm.sh), sourced by slurm_device.sh and
# slurm_two_gpus.sh after device_env.sh: unpacks it, starts munged, slurmctld and slurmd on localhost
# (tests/slurm/slurm_cluster.sh, as in CI) with gres/tpc from `gpupart slurm conf` for every GPU of the
# machine and the built gpupart_spank.so, and stops them, MPS and the registry on exit (OUT_DIR/cluster
# keeps the configuration and logs). Sets node and cluster_dir.
root=/tmp/gpupart-slurm-root
rm -rf "$root" && mkdir -p "$root" && tar -xJf "$bin/slurm.tar.xz" -C "$root"
export PATH="$root/bin:$PATH" LD_LIBRARY_PATH="$root/lib:$root/lib/slurm-wlm:$LD_LIBRARY_PATH"
export SLURM_PLUGIN_DIR=$root/lib/slurm-wlm SLURMSTEPD_PATH=$root/bin/slurmstepd
# The GPU machine is a container without systemd's D-Bus: slurmd makes its cgroup scope itself.
export SLURM_CGROUP_CONF=$'CgroupPlugin=cgroup/v2\nIgnoreSystemd=yes'
grep cgroup /proc/mounts > "$out/cgroup-mounts.txt"
mkdir -p /sys/fs/cgroup/system.slice 2> "$out/cgroup-mkdir.txt" || { echo "cannot make /sys/fs/cgroup/system.slice:"; cat "$out/cgroup-mkdir.txt" "$out/cgroup-mounts.txt"; }
export CUDA_MPS_PIPE_DIRECTORY=/tmp/gpupart-slurm-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/gpupart-slurm-log
mkdir -m 1777 -p "$GPUPART_REGISTRY_DIR"
# shellcheck source-path=SCRIPTDIR source=../slurm/slurm_cluster.sh
. "$here/../slurm/slurm_cluster.sh"
# Under /tmp: munged wants every directory above its socket searchable by all (OUT_DIR may be under /root).
cluster_dir=/tmp/gpupart-slurm-cluster
keep_logs() { mkdir -p "$out/cluster" && cp -r "$cluster_dir/etc" "$cluster_dir/log" "$out/cluster/" 2> /dev/null; }
trap 'keep_logs; cluster_stop; "$gp" mps stop > /dev/null 2>&1; rm -rf "$GPUPART_REGISTRY_DIR" "$cluster_dir"' EXIT
for gpu in $(nvidia-smi --query-gpu=index --format=csv,noheader); do  # every GPU, as gpupart-probe.service does
    "$gp" probe --gpu "$gpu" >> "$out/probe.txt" 2>&1 || { echo "probe of GPU $gpu failed"; cat "$out/probe.txt"; exit 1; }
done
node=gpu-node
"$gp" slurm conf --node "$node" --plugin "$bin/gpupart_spank.so" > "$out/conf.txt" 2>&1 || { cat "$out/conf.txt"; exit 1; }
gres_conf=$(grep '^NodeName=.* Name=tpc ' "$out/conf.txt" | sed 's/  #.*//')
node_gres=$(sed -n 's/^NodeName=.* Gres=\([^ ]*\).*/\1/p' "$out/conf.txt")
cluster_start "$cluster_dir" "$node" "$gres_conf" "$node_gres" \
    "required $bin/gpupart_spank.so gpupart=$gp registry=$GPUPART_REGISTRY_DIR shim=$bin/libgpupart-shim.so"
scontrol show node "$node" > "$out/node.txt"
