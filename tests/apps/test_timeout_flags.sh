#!/usr/bin/env bash
# --timeout on ddlrun and train_cifar (suite "apps"):
#  1. ddlrun --timeout S hands DDL_TIMEOUT=S to every worker; a malformed DDL_TIMEOUT is named;
#  2. train_cifar --timeout 2 under ddlrun, with rank 1 started 60 s late: rank 0 gives up
#     after about 2 s, naming rank 1, and ddlrun ends the job within seconds, not minutes.
set -uo pipefail
: "${TRAIN_CIFAR:?}" "${DDLRUN:?}"
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

"$DDLRUN" --nproc 2 --all-ranks --timeout 7.5 sh -c 'echo "timeout=$DDL_TIMEOUT"' >"$dir/env.txt" 2>&1
check "ddlrun --timeout 7.5 reaches both workers" '[ "$(grep -c "timeout=7.5$" "$dir/env.txt")" = 2 ]'
DDL_TIMEOUT=soon "$DDLRUN" --nproc 2 "$TRAIN_CIFAR" --dataset synthetic --model mlp --train-samples 32 \
  --test-samples 16 --batch-size 8 --threads 1 --no-progress >"$dir/bad.txt" 2>&1
bad_status=$?
check "a malformed DDL_TIMEOUT fails, naming the variable" \
  '[ "$bad_status" -ne 0 ] && grep -q "DDL_TIMEOUT=.soon. is not a positive number of seconds" "$dir/bad.txt"'

start=$(date +%s.%N)
"$DDLRUN" --nproc 2 --all-ranks sh -c '[ "$RANK" = 1 ] && sleep 60; exec "$0" "$@"' "$TRAIN_CIFAR" --timeout 2 \
  --dataset synthetic --model mlp --train-samples 32 --test-samples 16 --batch-size 8 --threads 1 --no-progress \
  >"$dir/late.txt" 2>&1
status=$?
elapsed=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
sed 's/^/  | /' "$dir/late.txt" | head -20
check "the job fails" '[ "$status" -ne 0 ]'
check "rank 0 names the rank it waited for and its 2 s timeout" \
  'grep -q "\[rank 0/2\].*within 2000 ms: still waiting for rank 1" "$dir/late.txt"'
check "the job ended within 20 s (it took $elapsed s)" 'awk -v e="$elapsed" "BEGIN { exit !(e < 20) }"'
exit $fail
