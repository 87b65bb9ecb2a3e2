#!/usr/bin/env bash
# sync_study end to end on tiny synthetic runs: every strategy runs, the CSV has one
# row per strategy with positive times, gradient-averaging strategies end with the
# same training loss, and study.md names the fastest strategy.
set -uo pipefail
: "${SYNC_STUDY:?}"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$SYNC_STUDY" --nproc 2 --out "$dir" --train-samples 128 --test-samples 64 --batch-size 16 >"$dir/out.txt" 2>&1 ||
  { cat "$dir/out.txt"; for f in "$dir"/*.log; do tail -5 "$f"; done; exit 1; }
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }
check "seven strategies in study.csv" "[ \$(tail -n +2 '$dir/study.csv' | wc -l) -eq 7 ]"
check "every time is positive" "tail -n +2 '$dir/study.csv' | awk -F, '\$2 <= 0 {bad=1} END {exit bad}'"
losses=$(grep -E '^(ddp|allreduce|gather-scatter|ring|param-server),' "$dir/study.csv" | cut -d, -f8 | awk '{printf "%.4f\n", $1}' | sort -u | wc -l)
check "exact strategies agree on the final training loss" "[ $losses -eq 1 ]"
check "study.md names the fastest" "grep -q 'was fastest' '$dir/study.md'"
[ $fail -eq 0 ] || cat "$dir/study.csv"
exit $fail
