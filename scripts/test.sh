#!/usr/bin/env bash
# Builds (via setup.sh) and runs every test; ends with "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh || { echo "0 passed, 1 failed"; exit 1; }

meson test -C build --print-errorlogs --num-processes 2 "$@"
status=$?

log=build/meson-logs/testlog.json
if [ ! -s "$log" ]; then
  echo "0 passed, 1 failed"
  exit 1
fi
# One JSON object per test; SKIP (exit code 77) counts as neither.
passed=$(grep -c '"result": "OK"' "$log" || true)
failed=$(grep -Ec '"result": "(FAIL|TIMEOUT|ERROR|UNEXPECTEDPASS)"' "$log" || true)
skipped=$(grep -c '"result": "SKIP"' "$log" || true)
[ "$skipped" -gt 0 ] && echo "($skipped skipped: they need hardware this machine lacks)"
echo "$passed passed, $failed failed"
[ "$status" -eq 0 ] && [ "$failed" -eq 0 ]
