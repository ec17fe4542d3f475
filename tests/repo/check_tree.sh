#!/usr/bin/env bash
# Rules of the source tree that a reviewer would otherwise have to remember, checked on the tracked files:
#   - nothing generated is committed (Python byte code, objects, libraries, editor and patch leftovers);
#   - no source file (backend/, app/, widgets/, tests/, packaging/: C, C++, CUDA, Python, shell, CMake) is
#     longer than 400 lines: small files with one job;
#   - no two product source files in different folders share a name (the extension aside): a name says
#     which file is meant, in an include, a stack trace or a review.
# Files that were over the limit before this check existed are named in long_files_allowed.txt with the
# length they had; each may only shrink, and must leave the list once it is split (this check says so),
# so the list can only get shorter. Any other file over the limit fails the check.
#   check_tree.sh SOURCE_DIR
set -u
source_dir=$1
cd "$source_dir" || exit 1
if ! git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
    echo "skipped: $source_dir is not a git checkout (the rules are about tracked files)"
    exit 77
fi
limit=400
allowed_list=tests/repo/long_files_allowed.txt
failures=0
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

generated=$(git ls-files | grep -E '(^|/)__pycache__/|\.(pyc|pyo|o|obj|a|so|gcda|gcno|orig|rej|swp)$|\.so\.[0-9.]+$|~$|(^|/)CMakeCache\.txt$' || true)
for path in $generated; do fail "$path is generated: remove it from git (git rm --cached) and let the build make it"; done

declare -A allowed=()
while read -r path length _; do
    case $path in ''|'#'*) continue ;; esac
    allowed[$path]=$length
done < "$allowed_list"

while read -r path; do
    [ -f "$path" ] || continue
    lines=$(wc -l < "$path")
    if [ -n "${allowed[$path]:-}" ]; then
        if [ "$lines" -gt "${allowed[$path]}" ]; then
            fail "$path has $lines lines, more than the $limit allowed and more than the ${allowed[$path]} it had: split it by concern"
        elif [ "$lines" -le "$limit" ]; then
            fail "$path has $lines lines now, within the limit: remove it from $allowed_list"
        fi
    elif [ "$lines" -gt "$limit" ]; then
        fail "$path has $lines lines, more than $limit: split it by concern"
    fi
done < <(git ls-files backend app widgets tests packaging CMakeLists.txt | grep -E '(\.(c|h|cpp|hpp|cu|cuh|in|py|sh|cmake)|CMakeLists\.txt)$')

declare -A folder_of=()
while read -r path; do
    name=$(basename "$path"); name=${name%.*}
    folder=$(dirname "$path")
    if [ -n "${folder_of[$name]:-}" ] && [ "${folder_of[$name]}" != "$folder" ]; then
        fail "$path and a file in ${folder_of[$name]} share the name $name: name each for its own job"
    fi
    folder_of[$name]=$folder
done < <(git ls-files backend app widgets | grep -E '\.(c|h|cpp|hpp|cu|cuh)$')

for path in "${!allowed[@]}"; do
    git ls-files --error-unmatch "$path" > /dev/null 2>&1 || fail "$path is in $allowed_list but not in the tree: remove it from the list"
done

if [ "$failures" -gt 0 ]; then
    echo "source tree: $failures problems"
    exit 1
fi
echo "source tree: no generated files, no source file over $limit lines (${#allowed[@]} older ones listed), no two sharing a name"
