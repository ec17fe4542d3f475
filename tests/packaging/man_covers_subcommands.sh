#!/usr/bin/env bash
# gpupart.1 is written by hand: every subcommand that `gpupart --help` lists must have its own section
# (.SS) there, so a new command cannot be shipped undocumented. The page's syntax is checked by lintian
# and `man --warnings` in CI (.ci/run).
#   man_covers_subcommands.sh GPUPART MANPAGE
set -euo pipefail
gpupart=${1:?usage: man_covers_subcommands.sh GPUPART MANPAGE}
page=${2:?usage: man_covers_subcommands.sh GPUPART MANPAGE}
subcommands=$("$gpupart" --help | awk 'tolower($0) ~ /^subcommands:/ { listing = 1; next }
                                       listing && /^  [a-z]/ { print $1 }
                                       listing && /^$/ { listing = 0 }')
[ -n "$subcommands" ] || { echo "no subcommands found in '$gpupart --help'" >&2; exit 1; }
missing=()
for name in $subcommands; do
    # In roff a hyphen is written \- ; a section starts: .SS "NAME ... or .SS "NAME"
    escaped=${name//-/\\\\-}
    grep -Eq "^\.SS \"$escaped( |\")" "$page" || missing+=("$name")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "$page has no section for: ${missing[*]}" >&2
    exit 1
fi
echo "$page documents all $(echo "$subcommands" | wc -w) subcommands"
