#!/usr/bin/env bash
# End-to-end checks of train_cifar (suite "apps"), on small synthetic data:
#  1. a bad flag value is refused with a message naming the flag;
#  2. same seed and world size -> identical loss curve, alone and under ddlrun;
#  3. a run killed mid-epoch and restarted by ddlrun --max-restarts resumes from its
#     snapshot, ends with the same weights as an uninterrupted run, and its --metrics
#     files go on after a resume marker;
#  4. --save then --load --eval-only reproduces the test accuracy, alone and under ddlrun.
set -uo pipefail
: "${TRAIN_CIFAR:?}" "${DDLRUN:?}"
command -v python3 >/dev/null || { echo "python3 is needed to read the metrics files"; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
common=(--dataset synthetic --model mlp --train-samples 192 --test-samples 64 --batch-size 16 --lr 0.05
        --threads 1 --loader-workers 1 --log-every 1 --no-progress --seed 5)
losses() { grep -o 'loss [0-9.]*, batch' "$1" | sort; }

# 1. Invalid flag values.
"$TRAIN_CIFAR" --batch-size 0 >"$dir/bad.txt" 2>&1
check "bad --batch-size is refused (exit 2)" "[ $? -eq 2 ]"
check "the message names --batch-size" "grep -q -- '--batch-size' '$dir/bad.txt'"
"$DDLRUN" --nproc 2 "$TRAIN_CIFAR" --sync bogus --dataset synthetic --train-samples 8 --test-samples 8 >"$dir/bad2.txt" 2>&1
check "an unknown --sync is refused under ddlrun" "[ $? -ne 0 ] && grep -q -- '--sync' '$dir/bad2.txt'"
"$TRAIN_CIFAR" --sync local-sgd:99999999999999999999999 --dataset synthetic >"$dir/bad3.txt" 2>&1
check "a local-sgd:K too large for int64 is refused (exit 2) naming --sync" "[ $? -eq 2 ] && grep -q -- '--sync' '$dir/bad3.txt'"

# 2. Determinism.
"$TRAIN_CIFAR" "${common[@]}" --epochs 2 >"$dir/a1.txt" 2>&1
"$TRAIN_CIFAR" "${common[@]}" --epochs 2 >"$dir/a2.txt" 2>&1
check "one process: identical loss curves" "[ -n \"\$(losses $dir/a1.txt)\" ] && diff <(losses $dir/a1.txt) <(losses $dir/a2.txt) >/dev/null"
"$DDLRUN" --nproc 2 --all-ranks "$TRAIN_CIFAR" "${common[@]}" --epochs 2 >"$dir/d1.txt" 2>&1
"$DDLRUN" --nproc 2 --all-ranks "$TRAIN_CIFAR" "${common[@]}" --epochs 2 >"$dir/d2.txt" 2>&1
# Both ranks print a header naming a 2-rank ddp group, and the table has two ranks that sent bytes.
two_rank_group() {
  [ "$(grep -cE '^\[rank [01]/2\] model .*world size 2, sync ddp' "$1")" -eq 2 ] &&
    grep -A4 '^\[rank 0/2\] Per-rank resources' "$1" | awk '$3 == "0" || $3 == "1" { n += ($6 + 0 > 0) } END { exit n != 2 }'
}
check "under ddlrun the ranks form one 2-rank group" "two_rank_group '$dir/d1.txt'"
check "two ranks (ddp): identical loss curves" "[ -n \"\$(losses $dir/d1.txt)\" ] && diff <(losses $dir/d1.txt) <(losses $dir/d2.txt) >/dev/null"

# 3. Crash at global step 11 (mid-epoch 2 of 6 steps each), restart, resume.
"$DDLRUN" --nproc 2 "$TRAIN_CIFAR" "${common[@]}" --epochs 3 --save "$dir/straight.safetensors" >"$dir/s.txt" 2>&1
"$DDLRUN" --nproc 2 --max-restarts 1 "$TRAIN_CIFAR" "${common[@]}" --epochs 3 --snapshot "$dir/snap.safetensors" \
  --snapshot-every-steps 4 --crash-at-step 11 --save "$dir/resumed.safetensors" --metrics "$dir/rm.jsonl" >"$dir/r.txt" 2>&1
check "the interrupted run was restarted and resumed" "grep -q 'resumed from' '$dir/r.txt'"
check "resumed weights equal uninterrupted weights" "cmp -s '$dir/straight.safetensors' '$dir/resumed.safetensors'"
# The last snapshot before the crash is the one after global step 8 (every 4 steps).
for r in 0 1; do
  check "rank $r's metrics: the restart appends after a resume marker at global step 8 (restart 1)" \
    "checks resumed '$dir/rm.rank$r.jsonl' --batches 6 --epochs 3 --from-step 8 --marker resume --restarts 1"
done

# 4. Save, load, evaluate.
acc=$(grep -o 'test accuracy [0-9.]*% on' "$dir/a1.txt" | tail -1)
"$TRAIN_CIFAR" "${common[@]}" --epochs 2 --save "$dir/m.safetensors" >/dev/null 2>&1
"$TRAIN_CIFAR" "${common[@]}" --load "$dir/m.safetensors" --eval-only >"$dir/e.txt" 2>&1
check "eval-only of saved weights gives the trained accuracy ($acc)" "[ -n '$acc' ] && grep -qF '$acc' '$dir/e.txt'"
"$DDLRUN" --nproc 2 "$TRAIN_CIFAR" "${common[@]}" --load "$dir/m.safetensors" --eval-only >"$dir/e2.txt" 2>&1
check "eval-only under ddlrun exits 0 with the same accuracy" "[ $? -eq 0 ] && [ -n '$acc' ] && grep -qF '$acc' '$dir/e2.txt'"
check "eval-only under ddlrun: one report, a table row per rank" \
  "[ \$(grep -c 'precision *recall' '$dir/e2.txt') -eq 1 ] && python3 '$here/check_outputs.py' ranks '$dir/e2.txt' --world 2 >/dev/null"

[ $fail -eq 0 ] || { for f in "$dir"/*.txt; do echo "== $f"; tail -5 "$f"; done; }
exit $fail
