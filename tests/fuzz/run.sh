#!/usr/bin/env bash
# Runs one libFuzzer target for DDL_FUZZ_SECONDS (default 30) from its seed corpus, writing
# new inputs to a scratch folder (the repo's corpus is never touched) and any crashing
# input to $DDL_FUZZ_ARTIFACTS (default: the current folder). Exit status: libFuzzer's, with
# a finding as 1: libFuzzer's own default for it, 77, is what meson reports as skipped.
# The mutation seed is fixed (DDL_FUZZ_SEED, default 1) so a CI run repeats the last one's
# search and stays green until the code changes; fuzz longer offline with another seed.
#
# Every run owns one folder, /dev/shm/ddl-fuzz-<target>-XXXXXX (or under $TMPDIR without
# /dev/shm), holding the new corpus and the target's input files (DDL_FUZZ_TMPDIR, see
# fuzz_util.h). It is removed on every exit, a crash or a signal included; a run never
# touches another run's folder, so targets fuzzed in parallel do not disturb each other.
set -uo pipefail
exe=$1 seeds=$2
name=$(basename "$exe")
base=${TMPDIR:-/tmp}
[ -d /dev/shm ] && [ -w /dev/shm ] && base=/dev/shm
run_dir=$(mktemp -d "$base/ddl-fuzz-$name-XXXXXX") || exit 1
child=
cleanup() {
  [ -n "$child" ] && kill -TERM "$child" 2>/dev/null && wait "$child" 2>/dev/null
  rm -rf "$run_dir"
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
trap 'exit 129' HUP
mkdir "$run_dir/corpus" "$run_dir/inputs"
export DDL_FUZZ_TMPDIR=$run_dir/inputs
artifacts=${DDL_FUZZ_ARTIFACTS:-$PWD}
mkdir -p "$artifacts"
# fuzz_store_wire's store server runs threads beside the input, and LeakSanitizer's check
# after an input, made while they run, can miss pointers they hold (google/sanitizers#757):
# in a 2-hour run it reported the live poll vectors of the acceptor thread, which a replay
# does not. Its leaks are checked once, at exit, after the harness has stopped the server.
extra=()
[ "$name" = fuzz_store_wire ] && extra=(-detect_leaks=0)
# halt_on_error: a UBSan report must fail the run, not scroll past.
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
# In the background and waited for, so a signal to this script runs its traps at once.
"$exe" -seed="${DDL_FUZZ_SEED:-1}" -max_total_time="${DDL_FUZZ_SECONDS:-30}" -timeout=20 -rss_limit_mb=2048 -error_exitcode=1 \
  -print_final_stats=1 -artifact_prefix="$artifacts/$name-" "${extra[@]}" "$run_dir/corpus" "$seeds" &
child=$!
wait "$child"
status=$?
child=
exit "$status"
