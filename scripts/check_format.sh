#!/usr/bin/env bash
# Checks that every C++ and CUDA source in the repository is formatted as the root
# .clang-format says (Debian 12's clang-format 14; scripts/setup.sh installs it). Lists the
# files that differ; fix them with: git ls-files '*.cpp' '*.h' '*.cu' '*.cuh' | xargs clang-format -i
set -uo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "clang-format is not installed: skipped"; exit 77; }
command -v git >/dev/null && git rev-parse --git-dir >/dev/null 2>&1 || { echo "not a git checkout: skipped"; exit 77; }
mapfile -t files < <(git ls-files '*.cpp' '*.h' '*.cu' '*.cuh' | grep -v '^subprojects/')
bad=()
for f in "${files[@]}"; do
  clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
echo "${#files[@]} files checked, ${#bad[@]} not formatted"
[ ${#bad[@]} -eq 0 ] || { printf '  %s\n' "${bad[@]}"; exit 1; }
