#!/usr/bin/env bash
# train_cifar --sync-bn (docs/dist.md, "SyncBatchNorm"): under ddlrun --nproc 2 every BatchNorm of
# ResNet-18 (20, shortcut ones included: they sit in typed members) is converted and training
# completes; in one process the flag changes nothing. The numerics are in tests/dist/test_sync_batch_norm.
set -uo pipefail
: "${TRAIN_CIFAR:?}" "${DDLRUN:?}"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/apps/lib.sh
. "$here/lib.sh"
flags="--dataset synthetic --model resnet18 --threads 1 --epochs 1 --batch-size 8 --test-samples 16"
# shellcheck disable=SC2086
timeout 120 "$DDLRUN" --nproc 2 "$TRAIN_CIFAR" $flags --train-samples 32 --sync-bn >"$dir/two" 2>&1
code=$?
check "2 ranks --sync-bn: exits 0 ($code)" "[ $code = 0 ]"
check "2 ranks --sync-bn: rank 0 says the 20 BatchNorm layers use both ranks' statistics" \
  "grep -q 'sync-bn: 20 BatchNorm layers use the statistics of all 2 ranks' '$dir/two'"
check "2 ranks --sync-bn: the test loss is finite" "grep -qE '^(\[rank 0/2\] )?test loss [0-9]' '$dir/two'"
# shellcheck disable=SC2086
timeout 120 "$TRAIN_CIFAR" $flags --train-samples 16 --sync-bn >"$dir/one" 2>&1
code=$?
check "1 process --sync-bn: exits 0 ($code) and converts nothing" "[ $code = 0 ] && ! grep -q 'sync-bn:' '$dir/one'"
[ "$fail" = 0 ] || { tail -n 15 "$dir/two"; tail -n 5 "$dir/one"; }
exit "$fail"
