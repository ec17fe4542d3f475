#!/usr/bin/env bash
# check_tree.sh must fail on what it forbids: a throwaway git checkout with one clean tree, then the same tree
# with two product files sharing a name, with a generated file, and with a product or test file over 400 lines.
#   check_tree_fails.sh PATH/TO/check_tree.sh WORK_DIR
set -u
check_tree=$1
work=$2
# shellcheck source-path=SCRIPTDIR source=../lib/checks.sh
. "$(dirname "$0")/../lib/checks.sh"  # check, contains, checks_summary
command -v git > /dev/null || { echo "skipped: no git"; exit 77; }
rm -rf "$work" && mkdir -p "$work/tree/tests/repo" "$work/tree/backend/model" "$work/tree/app/cli"
cd "$work/tree" || exit 1
git init -q . && git config user.email t@example.invalid && git config user.name test
: > tests/repo/long_files_allowed.txt
echo "int a;" > backend/model/gpu.cpp
echo "int b;" > app/cli/command_run.cpp
git add -A && git commit -qm clean
bash "$check_tree" . > "$work/clean.txt" 2>&1
check "a clean tree passes" [ $? -eq 0 ]

echo "int c;" > app/cli/gpu.cpp && git add app/cli/gpu.cpp
bash "$check_tree" . > "$work/same-name.txt" 2>&1
check "two product files sharing a name fail it" [ $? -eq 1 ]
check "the failure names both" contains "$work/same-name.txt" "backend/model/gpu.cpp and a file in app/cli share the name gpu"
git rm -q --cached app/cli/gpu.cpp && rm app/cli/gpu.cpp

touch backend/model/cache.pyc && git add -f backend/model/cache.pyc
bash "$check_tree" . > "$work/generated.txt" 2>&1
check "a committed generated file fails it" [ $? -eq 1 ]
git rm -q --cached backend/model/cache.pyc && rm backend/model/cache.pyc

seq 1 401 | sed 's/^/int v/; s/$/;/' > backend/model/big.cpp && git add backend/model/big.cpp
bash "$check_tree" . > "$work/long.txt" 2>&1
check "a product file over 400 lines fails it" [ $? -eq 1 ]
check "the failure says split it" contains "$work/long.txt" "backend/model/big.cpp has 401 lines, more than 400"
git rm -q --cached backend/model/big.cpp && rm backend/model/big.cpp

mkdir -p tests/unit && seq 1 401 | sed 's/^/int t/; s/$/;/' > tests/unit/test_big.cpp && git add tests/unit/test_big.cpp
bash "$check_tree" . > "$work/long-test.txt" 2>&1
check "a test file over 400 lines fails it too" [ $? -eq 1 ]
check "that failure names the test file" contains "$work/long-test.txt" "tests/unit/test_big.cpp has 401 lines, more than 400"

checks_summary "check_tree.sh fails on what it forbids"
