#!/usr/bin/env bash
# Runs one libFuzzer target for DDL_FUZZ_SECONDS (default 30) from its seed corpus, writing
# new inputs to a scratch folder (the repo's corpus is never touched) and any crashing
# input to $DDL_FUZZ_ARTIFACTS (default: the current folder). Exit status: libFuzzer's.
# The mutation seed is fixed (DDL_FUZZ_SEED, default 1) so a CI run repeats the last one's
# search and stays green until the code changes; fuzz longer offline with another seed.
set -uo pipefail
exe=$1 seeds=$2
name=$(basename "$exe")
work=$(mktemp -d "${TMPDIR:-/tmp}/$name-XXXXXX")
trap 'rm -rf "$work"' EXIT
artifacts=${DDL_FUZZ_ARTIFACTS:-$PWD}
mkdir -p "$artifacts"
# halt_on_error: a UBSan report must fail the run, not scroll past.
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
"$exe" -seed="${DDL_FUZZ_SEED:-1}" -max_total_time="${DDL_FUZZ_SECONDS:-30}" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
  -artifact_prefix="$artifacts/$name-" "$work" "$seeds"
