#!/usr/bin/env bash
# DDP's communication hooks and Join over real processes (ddlrun --nproc): each scenario of
# tests/dist/helpers/hooks_worker.cpp checks DDP against a reference it computes itself:
# the default hook bit for bit against DDP's arithmetic before hooks; fp16/bf16 within their
# rounding bound and at half the bytes (the traffic counters), through shared memory and
# over TCP; PowerSGD at ranks 1 and 2 against a one-process reference (gradients, error
# feedback, warm-started Q) and against PyTorch's own hook (golden values); the user's top-k hook (apps/examples/topk_hook/) against its
# definition; Join with 3 ranks holding 3, 5 and 8 batches (BatchNorm included) against the one-process per-step
# averages, with both divisors. Then the
# example program trains with the top-k hook and its loss falls, and train_cifar runs with
# --comm-hook and, on 3 ranks holding 33, 33 and 32 examples (3, 3 and 2 batches), --uneven.
set -uo pipefail
: "${DDLRUN:?}" "${HOOKS_WORKER:?}" "${TOPK_HOOK:?}" "${TRAIN_CIFAR:?}"
here=$(cd "$(dirname "$0")/../apps" && pwd)
. "$here/lib.sh"
run() {  # run NPROC SCENARIO: every rank exits 0, rank 0 (which ddlrun shows) says "SCENARIO ok"
  "$DDLRUN" --nproc "$1" --timeout 20 "$HOOKS_WORKER" "$2" >"$dir/$2.txt" 2>&1
  local rc=$?
  [ $rc -eq 0 ] && grep -q "$2 ok$" "$dir/$2.txt" || { sed 's/^/    /' "$dir/$2.txt" | tail -20; return 1; }
}
check "default hook: DDP, allreduce_hook and g/W summed agree bit for bit" "run 2 default"
check "default hook, 3 ranks: DDP equals g·(1/3) in one flat all-reduce bit for bit" "run 3 default3"
check "a hook's result of the wrong size is named in an error; a fresh one is copied in" "run 2 hook-result"
check "fp16_compress_hook: within its rounding bound, half the bytes" "run 2 fp16"
check "bf16_compress_hook: within its rounding bound, half the bytes" "run 2 bf16"
check "fp16_compress_hook over TCP (Gloo's ring sums float16; DDL_SHM=0)" "DDL_SHM=0 run 2 fp16"
check "PowerSGD rank 1 matches the reference (gradients, error, warm-started Q)" "run 2 powersgd1"
check "PowerSGD rank 2 matches the reference" "run 3 powersgd2"
check "the user's top-k hook matches its definition" "run 2 topk"
check "powersgd_hook matches PyTorch 1.13's powerSGD_hook (tests/golden/powersgd_hook.py)" "run 1 powersgd-torch"
check "Join, 3/5/8 batches, divide_by_initial_world_size: the reference's weights" "run 3 join"
check "Join, 3/5/8 batches, divide by the ranks with data: the reference's weights" "run 3 join-active"
check "Join with throw_on_early_termination: every rank throws at step 3, collectives still in step" \
  "run 3 join-throw"
"$DDLRUN" --nproc 2 --timeout 20 "$TOPK_HOOK" --ratio 0.1 --steps 60 >"$dir/example.txt" 2>&1
check "the top-k example runs under ddlrun" "[ $? -eq 0 ]"
first=$(grep -oE '^.*step 1 loss [0-9.]+' "$dir/example.txt" | grep -oE '[0-9.]+$')
last=$(grep -oE '^.*step 60 loss [0-9.]+' "$dir/example.txt" | grep -oE '[0-9.]+$')
check "the top-k example's loss falls ($first -> $last)" \
  "[ -n '$first' ] && [ -n '$last' ] && awk 'BEGIN { exit !($last < 0.5 * $first) }'"
tc=(--dataset synthetic --model mlp --train-samples 98 --test-samples 16 --batch-size 16 --threads 1
    --loader-workers 1 --log-every 100 --no-progress)
"$DDLRUN" --nproc 2 --timeout 20 "$TRAIN_CIFAR" "${tc[@]}" --comm-hook powersgd:2 --epochs 4 >"$dir/tc_hook.txt" 2>&1
check "train_cifar --comm-hook powersgd:2 trains (16 steps, PowerSGD from step 11)" "[ $? -eq 0 ] || { tail -5 '$dir/tc_hook.txt'; false; }"
"$DDLRUN" --nproc 3 --timeout 20 "$TRAIN_CIFAR" "${tc[@]}" --uneven --epochs 2 >"$dir/tc_uneven.txt" 2>&1
check "train_cifar --uneven: 3 ranks with 3, 3 and 2 batches finish both epochs" \
  "[ $? -eq 0 ] && grep -q 'epoch 2: test loss' '$dir/tc_uneven.txt' || { tail -5 '$dir/tc_uneven.txt'; false; }"
"$TRAIN_CIFAR" "${tc[@]}" --comm-hook powersgd:0 >"$dir/tc_bad.txt" 2>&1
check "train_cifar refuses --comm-hook powersgd:0 (exit 2)" "[ $? -eq 2 ]"
exit $fail
