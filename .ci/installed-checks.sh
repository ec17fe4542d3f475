#!/usr/bin/env bash
# Inside a brand-new Debian 12 root (.ci/run): installs the .debs from /share the way a user would, then runs
# the installed programs from their installed paths only (never the clone's build tree, which is not
# there): gpupart alone first, as on a compute node (no Qt, no display stack; the Slurm plugin where
# `gpupart slurm conf` says), then the others; the postinst's group and registry, the systemd units
# (systemd-analyze verify), topology, list, run under the fake CUDA driver, the man pages, bash completion,
# the shipped alert rules under promtool, a program built against libgpupart-dev, the GUI offscreen; last,
# a purge and what it leaves.
#   .ci/installed-checks.sh   (/share holds the four .debs, fake-driver/libcuda.so.1 and gpupart_shim_host
#                              from tests/shim, and Debian's promtool)
set -euo pipefail
shopt -s nullglob
tools=(/share/gpupart_*_amd64.deb)
gui=(/share/gpupart-gui_*_amd64.deb)
libs=(/share/libgpupart1_*_amd64.deb /share/libgpupart-dev_*_amd64.deb)
fail() { echo "installed-checks: $*" >&2; exit 1; }
[ ${#tools[@]} -eq 1 ] && [ ${#gui[@]} -eq 1 ] && [ ${#libs[@]} -eq 2 ] ||
    fail "expected gpupart, gpupart-gui, libgpupart1 and libgpupart-dev in /share, found ${tools[*]} ${gui[*]} ${libs[*]}"
installed() { dpkg-query -W -f '${db:Status-Abbrev} ${Package}\n' | awk '$1 == "ii" { print $2 }' | sort; }
apt_install() {
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" > /tmp/apt.log ||
        { cat /tmp/apt.log; fail "apt-get install $* failed"; }
}

echo "== apt-get install ${tools[*]##*/} alone, as on a compute or login node: what it pulls in, and no Qt or display stack"
apt-get update -qq
installed > /tmp/packages-before.txt
apt_install "${tools[@]}"
installed > /tmp/packages-gpupart.txt
pulled=$(comm -13 /tmp/packages-before.txt /tmp/packages-gpupart.txt)
echo "gpupart pulled $(wc -l <<< "$pulled") packages (itself included) into the fresh root"
display=$(grep -E '^(libqt6|qt6-|libx11-|libxcb|libgl1|libegl|mesa|libwayland|libdrm|libvulkan)' <<< "$pulled" || true)
[ -z "$display" ] || fail "gpupart pulls in Qt or display packages: $(tr '\n' ' ' <<< "$display")"

echo "== gpupart slurm conf names the SPANK plugin where the package put it"
plugin=$(gpupart slurm conf --snapshot builtin:h200 | sed -n 's/^required //p')
case $plugin in
    /usr/lib/*-linux-gnu/slurm-wlm/gpupart_spank.so) [ -f "$plugin" ] || fail "slurm conf names $plugin, which is not there" ;;
    *) fail "slurm conf names the plugin '$plugin', not where the package has it" ;;
esac
echo "required $plugin"
echo "== gpupart export --png without gpupart-gui: one line naming the package"
if gpupart export --png /tmp/plan.png --snapshot builtin:h200 2> /tmp/png.err; then fail "export --png worked without gpupart-gui"; fi
grep -q "package gpupart-gui" /tmp/png.err || fail "export --png without gpupart-gui said: $(cat /tmp/png.err)"

echo "== apt-get install ${gui[*]##*/}: the desktop app and what it pulls in besides gpupart"
apt_install "${gui[@]}"
installed > /tmp/packages-gui.txt
echo "gpupart-gui pulled $(comm -13 /tmp/packages-gpupart.txt /tmp/packages-gui.txt | wc -l) more packages (itself included)"
echo "== gpupart export --png with gpupart-gui: gpupart finds its gpupart-render"
gpupart export --png /tmp/plan.png --snapshot builtin:h200 || fail "export --png failed with gpupart-gui installed"
[ "$(head -c 8 /tmp/plan.png | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] || fail "export --png wrote no PNG"

echo "== apt-get install ${libs[*]##*/} (and man-db, to read its man pages; systemd, to verify its units; gcc, to build against libgpupart-dev)"
apt_install "${libs[@]}" man-db systemd gcc libc6-dev
cd /tmp  # from here on only installed files run (and the clone's .ci/gui-starts.sh); no build tree exists
[ "$(command -v gpupart)" = /usr/bin/gpupart ] || fail "gpupart is not /usr/bin/gpupart"

echo "== postinst: group gpupart and /run/gpupart"
getent group gpupart || fail "no group gpupart after install"
[ "$(stat -c '%a %U %G' /run/gpupart)" = "3777 root gpupart" ] || fail "/run/gpupart is $(stat -c '%a %U %G' /run/gpupart)"
# The Slurm plugin's job reservations: made by root before any user can make a directory of that name.
[ "$(stat -c '%a %U %G' /run/gpupart/jobs)" = "755 root root" ] || fail "/run/gpupart/jobs is $(stat -c '%a %U %G' /run/gpupart/jobs 2>&1)"

echo "== systemd-analyze verify: the installed units, the MPS template also as an instance an operator enables"
# No systemd runs in this root: verify reads the unit files, their commands and man pages by themselves.
units=/usr/lib/systemd/system
[ -f "$units/gpupart-probe.service" ] && [ -f "$units/gpupart-mps@.service" ] && [ -f "$units/gpupart-exporter.service" ] ||
    fail "the units are not in $units"
instance=/tmp/units/gpupart-mps@GPU-00000000-1111-2222-3333-444444444444.service
mkdir -p /tmp/units && cp "$units/gpupart-mps@.service" "$instance"
systemd-analyze verify "$units/gpupart-probe.service" "$units/gpupart-mps@.service" "$instance" "$units/gpupart-exporter.service"
getent passwd gpupart-exporter > /dev/null || fail "no user gpupart-exporter after install"
id -nG gpupart-exporter | grep -qw gpupart || fail "gpupart-exporter is not in group gpupart"
echo "== gpupart exporter --once, as the exporter's user (reads /run/gpupart, writes nothing)"
runuser -u gpupart-exporter -- gpupart exporter --once --snapshot builtin:h200 > /tmp/metrics.txt || fail "exporter --once failed"
grep -q '^gpupart_gpu_tpcs{' /tmp/metrics.txt || fail "the exporter printed no gpupart_gpu_tpcs"
echo "== gpupart-probe.service on a machine without a GPU: its condition fails, so systemd skips it (not failed)"
if SYSTEMD_UNIT_PATH=$units: systemd-analyze condition --unit=gpupart-probe.service; then
    fail "gpupart-probe.service would run without /dev/nvidiactl"
fi

echo "== gpupart topology"
# Into a file first: `| tee | head -5` fails under pipefail once the output outgrows one write (tee gets
# SIGPIPE when head has gone), as it did when the recorded H200 gained its sources.
gpupart topology > /tmp/topology.txt
head -5 /tmp/topology.txt
grep -q 'GPC' /tmp/topology.txt || fail "topology shows no GPC"

echo "== gpupart run --tpcs gpc1 under the fake CUDA driver (the installed shim, from /usr/lib/<multiarch>/gpupart)"
# The test double of libcuda from tests/shim, in the default registry (/run/gpupart, made by the postinst):
# the shim must register the process and write gpc1's mask.
gpupart run --tpcs gpc1 --snapshot builtin:h200 -- \
    /share/gpupart_shim_host load:/share/fake-driver/libcuda.so.1 launch:0x40 | tee /tmp/run.txt
grep -q 'callback=1' /tmp/run.txt || fail "the shim did not see the launch"
# The descriptor holds the TPCs a kernel may NOT use: its first word is the complement of the low 32 of gpc1's
# launch-descriptor bits (mask parse says them beside its TPC numbers).
bits=$(gpupart mask parse gpc1 --snapshot builtin:h200 --json | sed -n 's/^ *"descriptor_bits": *"bits:0x\([0-9a-f]*\)".*/\1/p')
[ -n "$bits" ] || fail "mask parse gave no descriptor bits for gpc1"
bits=00000000$bits
gpc1=${bits: -8}
expected=$(printf 'mask=0x%08x,' $(( ~0x$gpc1 & 0xffffffff )))
grep -q "$expected" /tmp/run.txt || fail "the launch does not carry gpc1's mask ($expected)"
echo "== gpupart run starts a program that never loads CUDA, with the installed shim preloaded"
preload=$(gpupart run --tpcs gpc1 --snapshot builtin:h200 -- sh -c 'echo "$LD_PRELOAD"')
case $preload in
    /usr/lib/*-linux-gnu/gpupart/libgpupart-shim.so) echo "preloaded $preload" ;;
    *) fail "gpupart run preloaded '$preload'" ;;
esac

echo "== gpupart list"
gpupart list

echo "== man gpupart, man gpupart-gui (groff warnings are errors)"
for page in gpupart gpupart-gui; do
    warnings=$(MANWIDTH=80 man --warnings "$page" 2>&1 > /tmp/man.txt)
    [ -z "$warnings" ] || fail "man $page: $warnings"
    grep -q "SYNOPSIS" /tmp/man.txt || fail "man $page shows no SYNOPSIS"
done
head -4 /tmp/man.txt

echo "== bash completion"
bash -c '. /usr/share/bash-completion/completions/gpupart && complete -p gpupart'

echo "== a program written against libsmctrl's names, built with the installed <gpupart/libsmctrl.h> and -lgpupart"
# tests/shim/libsmctrl_style.c from the clone, linked with the test double of libcuda: the installed
# libgpupart.so.1 must apply each kind of mask it sets ("relinked unchanged", docs/api.md).
gcc -Wall -Werror -I/usr/include/gpupart -o /tmp/libsmctrl_style /work/gpupart/tests/shim/libsmctrl_style.c -lgpupart \
    /share/fake-driver/libcuda.so.1 || fail "cannot build against libgpupart-dev"
# Into a variable first: `ldd | grep -q` fails under pipefail when grep stops reading before ldd is done.
libraries=$(ldd /tmp/libsmctrl_style)
grep -Eq "libgpupart.so.1 => (/usr)?/lib/x86_64-linux-gnu/libgpupart.so.1 " <<< "$libraries" ||  # merged /usr
    fail "the program does not use the installed libgpupart.so.1: $libraries"
# The library translates the program's TPC numbers through the GPU's map, which gpupart writes (here for the
# recorded H200 the test double plays, in a registry of the test's own).
export FAKE_CUDA_GPUS=GPU-258f535b-999d-058c-3642-767b7fb8d4f0
style_registry=$(mktemp -d)
GPUPART_REGISTRY_DIR=$style_registry gpupart gpcs --snapshot /work/gpupart/tests/fixtures/live-h200/live-h200.json --write ||
    fail "gpupart gpcs --write failed"
GPUPART_REGISTRY_DIR=$style_registry LD_LIBRARY_PATH=/share/fake-driver /tmp/libsmctrl_style > /tmp/style.txt ||
    { cat /tmp/style.txt; fail "libsmctrl_style failed"; }
unset FAKE_CUDA_GPUS
cat /tmp/style.txt
grep -qx "All tests passed!" /tmp/style.txt || fail "libsmctrl_style did not pass"

echo "== the shipped Prometheus configuration, alert rules and their test, Grafana dashboard (docs/metrics.md)"
shipped=/usr/share/doc/gpupart/docs
for file in prometheus/prometheus.yml prometheus/gpupart-alerts.yml prometheus/gpupart-alerts-optional.yml \
            prometheus/gpupart-alerts_test.yml grafana/gpupart-dashboard.json; do
    [ -s "$shipped/$file" ] || fail "$shipped/$file is not in the package"
done
/share/promtool check config "$shipped/prometheus/prometheus.yml"
/share/promtool check rules "$shipped/prometheus/gpupart-alerts.yml" "$shipped/prometheus/gpupart-alerts-optional.yml"
(cd "$shipped/prometheus" && /share/promtool test rules gpupart-alerts_test.yml)

echo "== gpupart-gui offscreen"
/work/gpupart/.ci/gui-starts.sh /usr/bin/gpupart-gui

echo "== apt-get purge: enabled units, the registry, the services' directories go; the group and user stay"
# No systemd runs in this root: `systemctl enable` still makes the links an operator's would (the prerm's
# stop needs a running systemd and is not tried here). The cache and log directories are what
# gpupart-probe.service and gpupart-mps@ make when they run (CacheDirectory=, LogsDirectory=).
systemctl enable gpupart-exporter.service "gpupart-mps@GPU-00000000-1111-2222-3333-444444444444.service"
[ -L /etc/systemd/system/multi-user.target.wants/gpupart-exporter.service ] || fail "systemctl enable made no link"
mkdir -p /var/cache/gpupart /var/log/gpupart/mps/GPU-00000000-1111-2222-3333-444444444444
DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq gpupart-gui libgpupart-dev libgpupart1 gpupart > /tmp/purge.log 2>&1 ||
    { cat /tmp/purge.log; fail "apt-get purge failed"; }
grep -i "warning\|error" /tmp/purge.log && fail "apt-get purge said the lines above"
left=$(dpkg-query -W -f '${db:Status-Abbrev} ${Package}\n' 'gpupart*' 'libgpupart*' 2> /dev/null | awk '$1 !~ /^[up]n/' || true)
[ -z "$left" ] || fail "still known to dpkg after purge: $left"
# Users' own files stay, as for every package (the GUI's settings in /root/.config/gpupart here), and so do
# man-db's formatted pages (/var/cache/man: its cache, which mandb prunes).
left=$(find / -xdev \( -path /proc -o -path /sys -o -path /dev -o -path /work -o -path /share -o -path /tmp \
                      -o -path /root -o -path /home -o -path /var/cache/man \) -prune -o -name '*gpupart*' -print)
echo "left after purge, by name: ${left:-nothing}"
[ -z "$left" ] || fail "purge left these behind"
getent group gpupart > /dev/null && getent passwd gpupart-exporter > /dev/null ||
    fail "purge removed the group gpupart or the user gpupart-exporter (README: Debian leaves them)"
echo "left after purge, as documented: group gpupart, user gpupart-exporter"
echo "installed-checks: all passed"
