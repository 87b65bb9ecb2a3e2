#!/usr/bin/env bash
# Checks that every C++ and CUDA source in the repository is formatted as the root
# .clang-format says (Debian 12's clang-format 14; scripts/setup.sh installs it). Lists the
# files that differ; fix them with: git ls-files '*.cpp' '*.h' '*.cu' '*.cuh' | xargs clang-format -i
set -uo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "clang-format is not installed: skipped"; exit 77; }
command -v git >/dev/null && git rev-parse --git-dir >/dev/null 2>&1 || { echo "not a git checkout: skipped"; exit 77; }
mapfile -t files < <(git ls-files '*.cpp' '*.h' '*.cu' '*.cuh' | grep -v '^subprojects/')
# One clang-format for all the files (xargs splits only past the argument limit): one process
# per file spent most of its time starting up (11 s per 100 files against 0.5 s).
out=$(printf '%s\0' "${files[@]}" | xargs -0 clang-format --dry-run -Werror 2>&1 >/dev/null)
rc=$?
mapfile -t bad < <(sed -n 's/:[0-9]*:[0-9]*: error: code should be clang-formatted.*//p' <<<"$out" | sort -u)
echo "${#files[@]} files checked, ${#bad[@]} not formatted"
[ ${#bad[@]} -eq 0 ] || { printf '  %s\n' "${bad[@]}"; exit 1; }
[ $rc -eq 0 ] || { echo "clang-format failed:"; head -20 <<<"$out"; exit 1; }
