# shellcheck shell=bash
# A private one-node Slurm cluster on localhost for tests/slurm: real munged, slurmctld and slurmd (Debian's
# Slurm 22.05), with their own key, configuration, ports, state and spool directories under $cluster, no
# cgroups (proctrack/linuxproc, task/none), select/cons_tres and GresTypes=tpc, and gpupart's SPANK plugin
# in its plugstack. Every daemon runs in the foreground as a child of the test and is stopped by its PID.
# Sourced after tests/lib/checks.sh:
#   cluster_start DIR NODE GRES_CONF_LINES NODE_GRES PLUGSTACK_LINE   starts it (exits 1 with a reason if it cannot)
#   cluster_stop                                                      cancels every job, stops the daemons
# It needs root (slurmd starts jobs as their users) and the Debian packages munge, slurmctld, slurmd and
# slurm-client (packaging/debian-build-deps.txt). Without them it fails, saying so: it never skips.
cluster_pids=()

cluster_fail() {  # cluster_fail MESSAGE: a cluster that cannot run is a failed test, with the reason and the logs
    echo "slurm cluster: $1" >&2
    local log
    for log in "$cluster"/log/*.log "$cluster"/munge/log/*.log; do
        [ -s "$log" ] && { echo "---- $log (last lines)" >&2; tail -n 15 "$log" >&2; }
    done
    exit 1
}

# Two TCP ports nobody listens on (slurmctld, slurmd), from the kernel's free ones.
free_ports() {
    python3 -c '
import socket
sockets = [socket.socket() for _ in range(2)]
for s in sockets: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in sockets))'
}

await_condition() {  # await_condition SECONDS COMMAND...: true once COMMAND succeeds within SECONDS
    local deadline=$((SECONDS + $1))
    shift
    until "$@" > /dev/null 2>&1; do
        [ "$SECONDS" -lt "$deadline" ] || return 1
        sleep 0.2
    done
}

cluster_start() {  # cluster_start DIR NODE GRES_CONF_LINES NODE_GRES PLUGSTACK_LINE
    cluster=$1
    local node=$2 gres_conf=$3 node_gres=$4 plugstack=$5 program
    [ "$(id -u)" -eq 0 ] || cluster_fail "must run as root: slurmd starts jobs as their users (CI runs as root)"
    for program in munged slurmctld slurmd sbatch squeue scontrol scancel sinfo srun; do
        command -v "$program" > /dev/null ||
            cluster_fail "$program is not installed: apt-get install munge slurmctld slurmd slurm-client (packaging/debian-build-deps.txt)"
    done
    rm -rf "$cluster"
    # A Unix socket's path holds at most 107 bytes (munged's, slurmd's step sockets in its spool): from a
    # deep checkout the cluster lives in a short directory of its own, which DIR then links to.
    if [ "${#cluster}" -gt 40 ]; then
        cluster_short=$(mktemp -d /tmp/gpupart-slurm.XXXXXX) || cluster_fail "cannot make a directory in /tmp"
        ln -s "$cluster_short" "$cluster" || cluster_fail "cannot link $cluster to $cluster_short"
        cluster=$cluster_short
    fi
    mkdir -p "$cluster"/{etc,state,spool,log,run} "$cluster"/munge/{etc,log,lib,run}
    # munged refuses a key or log others may read, and a socket directory others cannot enter.
    chmod 0755 "$cluster" "$cluster"/munge "$cluster"/munge/run
    chmod 0700 "$cluster"/munge/{etc,log,lib}
    dd if=/dev/urandom of="$cluster"/munge/etc/munge.key bs=1024 count=1 status=none
    chmod 0400 "$cluster"/munge/etc/munge.key
    munged --foreground --key-file="$cluster"/munge/etc/munge.key --socket="$cluster"/munge/run/munge.socket \
        --pid-file="$cluster"/munge/run/munged.pid --log-file="$cluster"/munge/log/munged.log \
        --seed-file="$cluster"/munge/lib/munged.seed > "$cluster"/log/munged.out 2>&1 &
    cluster_pids+=($!)
    await_condition 10 test -S "$cluster"/munge/run/munge.socket ||
        cluster_fail "munged did not start: $(cat "$cluster"/log/munged.out)"

    local host ctld_port slurmd_port
    read -r ctld_port slurmd_port <<< "$(free_ports)"
    host=$(hostname -s)  # slurmctld runs only where SlurmctldHost names this host
    cat > "$cluster"/etc/slurm.conf <<EOF
ClusterName=gpupart-ctest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$cluster/munge/run/munge.socket
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$cluster/state
SlurmdSpoolDir=$cluster/spool
SlurmctldPidFile=$cluster/run/slurmctld.pid
SlurmdPidFile=$cluster/run/slurmd.pid
SlurmctldLogFile=$cluster/log/slurmctld.log
SlurmdLogFile=$cluster/log/slurmd.log
SlurmdDebug=verbose
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
SchedulerParameters=bf_interval=1
GresTypes=tpc
PlugStackConfig=$cluster/etc/plugstack.conf
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
KillWait=3
MinJobAge=600
NodeName=$node NodeAddr=127.0.0.1 NodeHostname=$host CPUs=8 Gres=$node_gres State=UNKNOWN
PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
    # Slurm unpacked somewhere else than Debian puts it (tests/device/slurm_device.sh on the GPU machine)
    if [ -n "${SLURM_PLUGIN_DIR:-}" ]; then echo "PluginDir=$SLURM_PLUGIN_DIR" >> "$cluster"/etc/slurm.conf; fi
    # and a cgroup.conf where slurmd's cgroup/v2 plugin cannot reach systemd over D-Bus (a container)
    if [ -n "${SLURM_CGROUP_CONF:-}" ]; then printf '%s\n' "$SLURM_CGROUP_CONF" > "$cluster"/etc/cgroup.conf; fi
    printf '%s\n' "$gres_conf" > "$cluster"/etc/gres.conf
    printf '%s\n' "$plugstack" > "$cluster"/etc/plugstack.conf
    export SLURM_CONF=$cluster/etc/slurm.conf
    slurmctld -D -i -f "$SLURM_CONF" > "$cluster"/log/slurmctld.out 2>&1 &
    cluster_pids+=($!)
    await_condition 20 scontrol ping || cluster_fail "slurmctld does not answer on port $ctld_port"
    local stepd=()
    if [ -n "${SLURMSTEPD_PATH:-}" ]; then stepd=(-d "$SLURMSTEPD_PATH"); fi
    slurmd -D -f "$SLURM_CONF" -N "$node" "${stepd[@]}" > "$cluster"/log/slurmd.out 2>&1 &
    cluster_pids+=($!)
    node_idle() { [ "$(sinfo -h -n "$node" -o %T)" = idle ]; }
    await_condition 30 node_idle || cluster_fail "node $node did not come up idle: $(sinfo -h -N -o '%N %T %E' 2>&1)"
}

process_ended() {  # process_ended PID: gone, or a zombie waiting for this shell's `wait`
    local stat
    read -r stat 2> /dev/null < "/proc/$1/stat" || return 0
    stat=${stat##*) }
    [ "${stat%% *}" = Z ]
}

# The slurmstepd processes of this cluster (they leave slurmd: double fork), known by the SLURM_CONF they
# inherited from the slurmd this script started.
cluster_stepds() {
    local dir pid
    for dir in /proc/[0-9]*; do
        pid=${dir#/proc/}
        # (2> first: a process that ended meanwhile makes the < fail, quietly)
        [[ "$(tr '\0' ' ' 2> /dev/null < "$dir/cmdline")" == slurmstepd* ]] || continue
        tr '\0' '\n' 2> /dev/null < "$dir/environ" | grep -qxF "SLURM_CONF=$SLURM_CONF" && echo "$pid"
    done
}

cluster_stop() {
    [ -n "${SLURM_CONF:-}" ] || { cluster_remove_short; return 0; }
    scancel --full --user root > /dev/null 2>&1
    no_jobs() { [ -z "$(squeue -h -o %i 2> /dev/null)" ] && [ -z "$(cluster_stepds)" ]; }
    await_condition 20 no_jobs || echo "slurm cluster: jobs still there after 20 s: $(squeue -h 2>&1)" >&2
    local i pid
    for pid in $(cluster_stepds); do kill -KILL "$pid" 2> /dev/null; done
    for ((i = ${#cluster_pids[@]} - 1; i >= 0; i--)); do  # slurmd, slurmctld, then munged
        pid=${cluster_pids[i]}
        kill -TERM "$pid" 2> /dev/null
        await_condition 10 process_ended "$pid" || kill -KILL "$pid" 2> /dev/null
        wait "$pid" 2> /dev/null
    done
    cluster_pids=()
    cluster_remove_short
}

# The short directory goes with the cluster; DIR's link to it stays, dangling, until the next start.
cluster_remove_short() {
    if [ -n "${cluster_short:-}" ]; then rm -rf "$cluster_short"; cluster_short=; fi
}
