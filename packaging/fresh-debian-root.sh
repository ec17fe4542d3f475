#!/usr/bin/env bash
# Runs COMMAND in a brand-new Debian 12 root file system (mmdebstrap --variant=apt: nothing but apt and what
# it needs), on a clean clone of REPO's HEAD at /work/gpupart, as root, as a user's fresh machine would:
# what is not committed, or not installed by the project's own scripts, is not there.
#   packaging/fresh-debian-root.sh [--share DIR] REPO COMMAND
#   e.g. packaging/fresh-debian-root.sh . 'packaging/setup-debian.sh && cmake --preset default'
# --share DIR: DIR appears as /share inside the root, read-write (to take a .deb out or bring one in).
# Needs root, mmdebstrap and the Debian archive. The base root is cached as a tarball in
# $GPUPART_FRESH_ROOT_CACHE (default /var/cache/gpupart/fresh-root; about 200 MB, rebuilt when deleted).
# Every run unpacks a new copy and removes it afterwards, also on failure or Ctrl-C. The root gets its own
# /proc, /sys, a minimal /dev and a private /dev/shm: nothing is shared with the host's mounts but its cgroup
# hierarchy (a booted Debian has one; slurmd needs it).
# Exits with COMMAND's status.
set -euo pipefail

usage() { echo "usage: fresh-debian-root.sh [--share DIR] REPO COMMAND" >&2; exit 2; }
share=""
if [ "${1:-}" = "--share" ]; then
    share=$(cd "${2:?--share needs a directory}" && pwd)
    shift 2
fi
[ $# -eq 2 ] || usage
repo=$(cd "$1" && pwd)
command=$2
[ "$(id -u)" -eq 0 ] || { echo "fresh-debian-root: needs root (chroot, mounts)" >&2; exit 2; }

cache_dir=${GPUPART_FRESH_ROOT_CACHE:-/var/cache/gpupart/fresh-root}
cache=$cache_dir/bookworm-apt.tar
if [ ! -f "$cache" ]; then
    command -v mmdebstrap > /dev/null || { echo "fresh-debian-root: apt-get install mmdebstrap first" >&2; exit 2; }
    mkdir -p "$cache_dir"
    # Written under another name and renamed, so an interrupted run never leaves a half tarball as the cache.
    mmdebstrap --quiet --variant=apt --format=tar bookworm "$cache.part" http://deb.debian.org/debian
    mv "$cache.part" "$cache"
fi

root=$(mktemp -d /var/tmp/gpupart-fresh-root.XXXXXX)
mounts=()  # mount points inside the root, in the order mounted; unmounted in reverse
cleanup() {
    local i
    for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount "${mounts[i]}" 2> /dev/null || umount -l "${mounts[i]}" || true; done
    # --one-file-system: should an unmount have failed, never follow it into the host's files.
    rm -rf --one-file-system "$root"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mount_in() {  # mount_in TARGET MOUNT-ARGUMENTS...
    local target=$root/$1
    shift
    [ -e "$target" ] || mkdir -p "$target"  # a device node to bind onto is a file, already made
    mount "$@" "$target"
    mounts+=("$target")
}

tar -xf "$cache" -C "$root"
cp /etc/resolv.conf "$root/etc/resolv.conf"
git clone --quiet --no-hardlinks "$repo" "$root/work/gpupart"

mount_in proc -t proc proc
mount_in sys -t sysfs -o ro sysfs
# The cgroup hierarchy, as on a booted Debian 12 (systemd mounts it): slurmd (tests/slurm) will not start
# without one. The host's, recursively; unmounted lazily with its submounts.
if mountpoint -q /sys/fs/cgroup; then mount_in sys/fs/cgroup --rbind /sys/fs/cgroup; fi
mount_in dev -t tmpfs -o mode=0755,nosuid tmpfs
for node in null zero full random urandom tty; do
    touch "$root/dev/$node"
    mount_in "dev/$node" --bind "/dev/$node"
done
mount_in dev/pts -t devpts -o newinstance,ptmxmode=0666,mode=0620 devpts
ln -s pts/ptmx "$root/dev/ptmx"
ln -s /proc/self/fd "$root/dev/fd"
ln -s /proc/self/fd/0 "$root/dev/stdin"; ln -s /proc/self/fd/1 "$root/dev/stdout"; ln -s /proc/self/fd/2 "$root/dev/stderr"
mount_in dev/shm -t tmpfs -o mode=1777,nosuid,nodev tmpfs
if [ -n "$share" ]; then mount_in share --bind "$share"; fi

chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    /bin/bash -c 'cd /work/gpupart && eval "$1"' fresh-root "$command"
