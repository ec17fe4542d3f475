#!/usr/bin/env bash
# Installs what gpupart needs to build and test on Debian 12, from Debian's own packages only: the packages
# listed in packaging/debian-build-deps.txt, or in the list files given (CI adds debian-ci-deps.txt).
# Safe to run again; uses sudo when not run as root.
#   packaging/setup-debian.sh [LIST...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -eq 0 ]; then set -- "$here/debian-build-deps.txt"; fi
for list in "$@"; do [ -f "$list" ] || { echo "setup-debian: no package list $list" >&2; exit 2; }; done
if [ "$(id -u)" -eq 0 ]; then sudo=(); else sudo=(sudo); fi
missing=()
while read -r package; do
    [ -n "$package" ] || continue
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done < <(cat "$@")
if [ "${#missing[@]}" -gt 0 ]; then
    echo "setup-debian: installing ${missing[*]}"
    "${sudo[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
