#!/usr/bin/env bash
# End-to-end checks of train_cifar (suite "apps"), on small synthetic data:
#  1. a bad flag value is refused with a message naming the flag;
#  2. same seed and world size -> identical loss curve, alone and under ddlrun;
#  3. a run killed mid-epoch and restarted by ddlrun --max-restarts resumes from its
#     snapshot and ends with the same weights as an uninterrupted run;
#  4. --save then --load --eval-only reproduces the test accuracy.
set -uo pipefail
: "${TRAIN_CIFAR:?}" "${DDLRUN:?}"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }
common=(--dataset synthetic --model mlp --train-samples 192 --test-samples 64 --batch-size 16 --lr 0.05
        --threads 1 --loader-workers 1 --log-every 1 --no-progress --seed 5)
losses() { grep -o 'loss [0-9.]*, batch' "$1" | sort; }

# 1. Invalid flag values.
"$TRAIN_CIFAR" --batch-size 0 >"$dir/bad.txt" 2>&1
check "bad --batch-size is refused (exit 2)" "[ $? -eq 2 ]"
check "the message names --batch-size" "grep -q -- '--batch-size' '$dir/bad.txt'"
"$DDLRUN" --nproc 2 "$TRAIN_CIFAR" --sync bogus --dataset synthetic --train-samples 8 --test-samples 8 >"$dir/bad2.txt" 2>&1
check "an unknown --sync is refused under ddlrun" "[ $? -ne 0 ] && grep -q -- '--sync' '$dir/bad2.txt'"

# 2. Determinism.
"$TRAIN_CIFAR" "${common[@]}" --epochs 2 >"$dir/a1.txt" 2>&1
"$TRAIN_CIFAR" "${common[@]}" --epochs 2 >"$dir/a2.txt" 2>&1
check "one process: identical loss curves" "[ -n \"\$(losses $dir/a1.txt)\" ] && diff <(losses $dir/a1.txt) <(losses $dir/a2.txt) >/dev/null"
"$DDLRUN" --nproc 2 "$TRAIN_CIFAR" "${common[@]}" --epochs 2 >"$dir/d1.txt" 2>&1
"$DDLRUN" --nproc 2 "$TRAIN_CIFAR" "${common[@]}" --epochs 2 >"$dir/d2.txt" 2>&1
check "under ddlrun the ranks form one 2-rank group" "grep -q 'world size 2, sync ddp' '$dir/d1.txt' && grep -q 'all_reduce' '$dir/d1.txt' || grep -q 'pg sent' '$dir/d1.txt'"
check "two ranks (ddp): identical loss curves" "[ -n \"\$(losses $dir/d1.txt)\" ] && diff <(losses $dir/d1.txt) <(losses $dir/d2.txt) >/dev/null"

# 3. Crash at global step 11 (mid-epoch 2 of 6 steps each), restart, resume.
"$DDLRUN" --nproc 2 "$TRAIN_CIFAR" "${common[@]}" --epochs 3 --save "$dir/straight.safetensors" >"$dir/s.txt" 2>&1
"$DDLRUN" --nproc 2 --max-restarts 1 "$TRAIN_CIFAR" "${common[@]}" --epochs 3 --snapshot "$dir/snap.safetensors" \
  --snapshot-every-steps 4 --crash-at-step 11 --save "$dir/resumed.safetensors" >"$dir/r.txt" 2>&1
check "the interrupted run was restarted and resumed" "grep -q 'resumed from' '$dir/r.txt'"
check "resumed weights equal uninterrupted weights" "cmp -s '$dir/straight.safetensors' '$dir/resumed.safetensors'"

# 4. Save, load, evaluate.
acc=$(grep -o 'test accuracy [0-9.]* on' "$dir/a1.txt" | tail -1)
"$TRAIN_CIFAR" "${common[@]}" --epochs 2 --save "$dir/m.safetensors" >/dev/null 2>&1
"$TRAIN_CIFAR" "${common[@]}" --load "$dir/m.safetensors" --eval-only >"$dir/e.txt" 2>&1
check "eval-only of saved weights gives the trained accuracy" "grep -q \"$acc\" '$dir/e.txt'"

[ $fail -eq 0 ] || { for f in "$dir"/*.txt; do echo "== $f"; tail -5 "$f"; done; }
exit $fail
