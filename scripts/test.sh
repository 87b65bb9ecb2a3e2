#!/usr/bin/env bash
# Builds (via setup.sh) and runs every test; ends with "N passed, N failed". Then the
# sanitizer builds (tests/sanitize/run.sh): build-asan (ASan + UBSan, and the fuzz targets,
# DDL_FUZZ_SECONDS each) and build-tsan (ThreadSanitizer on the threaded parts), whose
# tests count in the same line. DDL_SANITIZERS="" skips them ("asan tsan" by default; "asan" leaves build-tsan out).
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh || { echo "0 passed, 1 failed"; exit 1; }

# The sanitizer builds compile at nice 19 while the normal suite runs: its tests leave the
# CPUs idle much of the time (waiting on children, deadlines and shaped links), and the
# build takes only that idle time. Their own session, so an early exit stops the compilers too.
kinds=(${DDL_SANITIZERS-asan tsan})
export DDL_FUZZ_SECONDS=${DDL_FUZZ_SECONDS:-10}  # each fuzz target's run (tests/fuzz/run.sh)
builds=
if [ ${#kinds[@]} -gt 0 ]; then
  rm -f build/sanitizer-*.built
  setsid bash -c 'for kind; do nice -n 19 tests/sanitize/run.sh "$kind" --build-only && touch "build/sanitizer-$kind.built"
                  done' sanitizer-builds "${kinds[@]}" > build/sanitizer-builds.log 2>&1 &
  builds=$!
  trap 'kill -- -"$builds" 2> /dev/null' EXIT
fi

rm -f build/meson-logs/testlog.json
meson test -C build --print-errorlogs --num-processes 2 "$@"
status=$?

# One JSON object per test; SKIP (exit code 77) counts as neither.
passed=0 failed=0 skipped=0
count() {  # count LOG: adds its results; a missing log (the build failed) is one failure
  local log=$1
  if [ ! -s "$log" ]; then
    echo "test.sh: no results in $log" >&2
    failed=$((failed + 1))
    return
  fi
  passed=$((passed + $(grep -c '"result": "OK"' "$log")))
  failed=$((failed + $(grep -Ec '"result": "(FAIL|TIMEOUT|ERROR|UNEXPECTEDPASS)"' "$log")))
  skipped=$((skipped + $(grep -c '"result": "SKIP"' "$log")))
}
count build/meson-logs/testlog.json

# Each kind's tests start once its build is done, while the next kind still builds beside them.
# A failed background build is built again by run.sh, where its errors are printed.
for kind in "${kinds[@]}"; do
  while [ ! -e "build/sanitizer-$kind.built" ] && kill -0 "$builds" 2> /dev/null; do sleep 2; done
  echo "test.sh: sanitizer build $kind (tests/sanitize/run.sh)"
  rm -f "build-$kind/meson-logs/testlog.json"
  tests/sanitize/run.sh "$kind" || status=1
  count "build-$kind/meson-logs/testlog.json"
done

[ "$skipped" -gt 0 ] && echo "($skipped skipped: they need hardware this machine lacks)"
echo "$passed passed, $failed failed"
[ "$status" -eq 0 ] && [ "$failed" -eq 0 ]
