#!/usr/bin/env bash
# scripts/time_to_accuracy.sh, briefly: its flags (a bad one is exit 2), the commands it
# runs (--dry-run), and that train_cifar accepts the recipe's flags: a 2-rank run on 1024
# Fashion-MNIST images with a 2% target stops after its first epoch (--stop-at-target) and
# prints its time to the target and the HTML report. Skipped without Debian's Fashion-MNIST.
set -uo pipefail
: "${TRAIN_CIFAR:?}" "${DDLRUN:?}"
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
script="$here/../../scripts/time_to_accuracy.sh"
[ -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ] || { echo "skip: no dataset-fashion-mnist"; exit 77; }

"$script" --bogus >"$dir/bad.txt" 2>&1
rc=$?
check "an unknown flag: exit 2 naming it (rc $rc)" '[ "$rc" = 2 ] && grep -q -- "--bogus" "$dir/bad.txt"'
"$script" --seed >"$dir/bad.txt" 2>&1
rc=$?
check "a flag without its value: exit 2 (rc $rc)" '[ "$rc" = 2 ] && grep -q -- "--seed needs a value" "$dir/bad.txt"'

"$script" --dry-run --epochs 7 --seed 3 --target 90 >"$dir/dry.txt" 2>&1
check "--dry-run: the ddl command with the recipe and the flags given" \
  'grep -q -- "--nproc 2 .*--model resnet9_small .*--epochs 7 --seed 3 --target-accuracy 90 --stop-at-target" "$dir/dry.txt"'
check "--dry-run: the PyTorch command with the same epochs, seed and target" \
  'grep -q -- "torch_fmnist_tta.py --epochs 7 --seed 3 --target 90" "$dir/dry.txt"'

timeout 120 "$script" --no-pytorch --epochs 3 --target 2 --train-samples 1024 --test-samples 64 --out "$dir/o" \
  >"$dir/run.txt" 2>&1
rc=$?
check "a short run: exit 0 (rc $rc: $(tail -c 300 "$dir/run.txt" | tr '\n' ' '))" '[ "$rc" = 0 ]'
check "it prints its time to the target" 'grep -Eq "^ddl: [0-9.]+ s to 2 % test accuracy" "$dir/run.txt"'
check "it stops after the first epoch at the target" \
  '[ "$(grep -c "\"event\":\"eval\"" "$dir/o/metrics.rank0.jsonl")" = 1 ]'
check "it writes the HTML report" '[ -s "$dir/o/report.html" ]'
exit $fail
