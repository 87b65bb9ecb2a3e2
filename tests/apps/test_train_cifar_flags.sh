#!/usr/bin/env bash
# End-to-end checks of train_cifar's flags (suite "apps"), on tiny synthetic runs of the
# MLP (96 samples, batch 16: 6 steps per epoch alone):
#  1. --help names every training flag (the list below: model, data, schedule, sync, snapshots);
#  2. --eval-every N evaluates every N epochs and after the last;
#  3. --schedule constant|cosine|step and --warmup-epochs: the lr of each step's metrics line
#     is the schedule's closed form at that step;
#  4. --target-accuracy: the convergence time is that of the first evaluation reaching it;
#  5. --load then training starts from the loaded weights, alone and under ddlrun;
#  6. --snapshot-every N (epochs): a run killed mid-epoch resumes from the last epoch snapshot
#     and ends with the same weights as an uninterrupted run;
#  7. a snapshot of another seed, world size, batch size, momentum or weight decay is
#     refused, naming both values; nonsense metadata is refused naming file and key;
#  8. only rank 0 writes the snapshot and the --save file.
set -uo pipefail
: "${TRAIN_CIFAR:?}" "${DDLRUN:?}"
command -v python3 >/dev/null || { echo "python3 is needed to read the metrics files"; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
base=(--dataset synthetic --model mlp --train-samples 96 --test-samples 32 --batch-size 16
      --threads 1 --loader-workers 1 --log-every 100 --no-progress)
common=("${base[@]}" --seed 5)
tc() { "$TRAIN_CIFAR" "${common[@]}" "$@"; }
# A safetensors file's metadata value: 8-byte little-endian header length, then JSON.
meta() {
  python3 -c 'import json, struct, sys
f = open(sys.argv[1], "rb"); n = struct.unpack("<Q", f.read(8))[0]
print(json.loads(f.read(n))["__metadata__"][sys.argv[2]])' "$1" "$2"
}
test_line() { grep -o 'test loss [0-9.]*, test accuracy [0-9.]*% on [0-9]* images' "$1"; }
# Rank 0's "converged s" in the step-times table, without the "[rank 0/1] " prefix; fails
# when there is no such row.
converged() {
  grep -A3 'Per-rank step times' "$1" | sed -E 's/^\[rank [0-9]+\/[0-9]+\] ?//' |
    awk '$1 == "0" { print $(NF - 1); found = 1 } END { exit !found }'
}
# The summary's convergence_s as that table prints it (%.1f), or n/a when null.
convergence() {
  python3 -c 'import json, sys
c = [e for e in map(json.loads, open(sys.argv[1])) if e["event"] == "summary"][-1]["convergence_s"]
print("n/a" if c is None else "%.1f" % c)' "$1"
}

# 1. --help.
"$TRAIN_CIFAR" --help >"$dir/help.txt" 2>&1
check "--help exits 0" "[ $? -eq 0 ]"
missing=""
for f in --model --dataset --data --epochs --batch-size --lr --momentum --weight-decay --schedule --warmup-epochs \
  --augment --seed --threads --device --backend --sync --log-every --eval-every --snapshot --snapshot-every \
  --load --save --eval-only --metrics --train-samples --test-samples --target-accuracy; do
  grep -qE -- "^ *$f( |,|$)" "$dir/help.txt" || missing+=" $f"
done
check "--help explains every training flag (missing:$missing)" "[ -z '$missing' ]"
missing=""
for w in ddp allreduce gather-scatter ring param-server stepwise local-sgd:K cifar10 fashion-mnist mnist folder \
  synthetic cosine step; do
  grep -q -- "$w" "$dir/help.txt" || missing+=" $w"
done
check "--help names every strategy, dataset and schedule (missing:$missing)" "[ -z '$missing' ]"

# 2. --eval-every 2 over 5 epochs: after epochs 2, 4 and 5 (the last), 0-based 1, 3, 4.
tc --epochs 5 --eval-every 2 --metrics "$dir/ev.jsonl" >"$dir/ev.txt" 2>&1
check "--eval-every 2: test results after epochs 2, 4 and 5 only" \
  "[ \"\$(grep -oE 'epoch [0-9]+: test loss' '$dir/ev.txt' | grep -oE '[0-9]+' | tr '\n' ' ')\" = '2 4 5 ' ]"
check "--eval-every 2: eval lines in the metrics after the same epochs" \
  "checks metrics '$dir/ev.jsonl' --batches 6 --epochs 5 --evals 1,3,4 >'$dir/ev.check'; grep -q '^  ok   eval lines' '$dir/ev.check'"

# 3. Schedules: 3 epochs of 6 steps; the checker computes training.cpp's formula per step.
for s in "constant 0" "cosine 0" "cosine 0.5" "step 0" "step 1"; do
  set -- $s
  tc --epochs 3 --lr 0.1 --schedule "$1" --warmup-epochs "$2" --metrics "$dir/lr.jsonl" >"$dir/lr.txt" 2>&1
  check "--schedule $1 --warmup-epochs $2: the logged lr follows the schedule" \
    "checks lr '$dir/lr.jsonl' --lr 0.1 --batches 6 --epochs 3 --schedule $1 --warmup-epochs $2"
done
# The printed step lines (first and last of each epoch) agree with the metrics lines.
check "the printed step lines show the loss and lr of their metrics lines" "checks steplog '$dir/lr.txt' '$dir/lr.jsonl'"

# 4. --target-accuracy: evaluate every epoch; the first evaluation at or above the target
#    sets the convergence time (the summary's convergence_s, the table's "converged s").
tc --epochs 4 --lr 0.01 --target-accuracy 90 --metrics "$dir/ta.jsonl" >"$dir/ta.txt" 2>&1
check "--target-accuracy 90: convergence_s is the time of the first evaluation reaching 90%" "python3 -c '
import json, sys
ev = [json.loads(l) for l in open(\"$dir/ta.jsonl\")]
evals = [e for e in ev if e[\"event\"] == \"eval\"]
c = [e for e in ev if e[\"event\"] == \"summary\"][0][\"convergence_s\"]
hit = [i for i, e in enumerate(evals) if e[\"test_accuracy_pct\"] >= 90]
print(\"  accuracies\", [e[\"test_accuracy_pct\"] for e in evals], \"convergence_s\", c)
ok = hit and c is not None and 0 < c <= evals[hit[0]][\"time_s\"] + 1e-3 and (hit[0] == 0 or c > evals[hit[0] - 1][\"time_s\"])
sys.exit(0 if ok else 1)'"
check "--target-accuracy: the table's 'converged s' ($(converged "$dir/ta.txt")) is convergence_s to 0.1 s" \
  "c=\$(converged '$dir/ta.txt') && [ \"\$c\" != n/a ] && [ \"\$c\" = \"\$(convergence '$dir/ta.jsonl')\" ]"
tc --epochs 1 --lr 1e-6 --target-accuracy 100 --metrics "$dir/tn.jsonl" >"$dir/tn.txt" 2>&1
check "an unreached target: convergence_s is null and the table says n/a" \
  "grep -q '\"convergence_s\":null' '$dir/tn.jsonl' && [ \"\$(converged '$dir/tn.txt')\" = n/a ]"

# 5. --load, then train. With lr 1e-12 training leaves the loaded weights (to printed
#    precision), so the run ends where --eval-only of the file does; under ddlrun too.
tc --epochs 1 --save "$dir/m1.safetensors" >"$dir/m1.txt" 2>&1
tc --load "$dir/m1.safetensors" --eval-only >"$dir/m1e.txt" 2>&1
want=$(test_line "$dir/m1e.txt")
tc --load "$dir/m1.safetensors" --epochs 1 --lr 1e-12 --momentum 0 --weight-decay 0 >"$dir/l1.txt" 2>&1
check "--load then training starts from the loaded weights ($want)" "[ -n '$want' ] && [ \"\$(test_line '$dir/l1.txt')\" = '$want' ]"
"$DDLRUN" --nproc 2 "$TRAIN_CIFAR" "${common[@]}" --load "$dir/m1.safetensors" --epochs 1 --lr 1e-12 --momentum 0 \
  --weight-decay 0 >"$dir/l2.txt" 2>&1
check "--load under ddlrun: both ranks start from the loaded weights" "[ \"\$(test_line '$dir/l2.txt')\" = '$want' ]"
first_loss() { grep -oE 'epoch 1 batch +0: loss [0-9.]+' "$1" | grep -oE '[0-9.]+$' | head -1; }
tc --load "$dir/m1.safetensors" --epochs 1 --save "$dir/m2.safetensors" >"$dir/l3.txt" 2>&1
check "--load then training at the usual lr: first loss below a fresh start's, and the weights move" \
  "python3 -c 'import sys; sys.exit(not float(\"$(first_loss "$dir/l3.txt")\") < float(\"$(first_loss "$dir/m1.txt")\"))' &&
   ! cmp -s '$dir/m1.safetensors' '$dir/m2.safetensors'"

# 6. Epoch snapshots: 3 epochs of 6 steps. Killed at global step 9 (epoch 2) with
#    --snapshot-every 1, the snapshot holds epoch 1; with --snapshot-every 2 there is none
#    yet; killed at step 15 (epoch 3) it holds epoch 2. Each restart ends like run "straight".
tc --epochs 3 --save "$dir/straight.safetensors" >/dev/null 2>&1
snap_run() {
  tc --epochs 3 --snapshot "$dir/$1.snap" --snapshot-every "$2" --crash-at-step "$3" --save "$dir/$1.safetensors" "${@:4}"
}
snap_run e1 1 9 --metrics "$dir/e1.jsonl" >"$dir/e1a.txt" 2>&1
check "--crash-at-step 9 kills the run (exit 3)" "[ $? -eq 3 ]"
check "--snapshot-every 1: the snapshot left holds epoch 1 done" "[ \"\$(meta '$dir/e1.snap' epoch)\" = 1 ]"
snap_run e1 1 9 --metrics "$dir/e1.jsonl" >"$dir/e1b.txt" 2>&1
check "--snapshot-every 1: the restart resumes at epoch 2, step 0" "grep -q 'resumed from .* at epoch 2, step 0' '$dir/e1b.txt'"
check "--snapshot-every 1: resumed weights equal uninterrupted weights" "cmp -s '$dir/straight.safetensors' '$dir/e1.safetensors'"
check "--snapshot-every 1: the resumed run's metrics follow the first run's, from global step 6" \
  "checks resumed '$dir/e1.jsonl' --batches 6 --epochs 3 --from-step 6 --marker resume --restarts 0"
snap_run e2 2 9 >/dev/null 2>&1
check "--snapshot-every 2: killed in epoch 2, no snapshot yet" "[ ! -e '$dir/e2.snap' ]"
snap_run e3 2 15 >/dev/null 2>&1
check "--snapshot-every 2: killed in epoch 3, the snapshot holds epoch 2 done" "[ \"\$(meta '$dir/e3.snap' epoch)\" = 2 ]"
snap_run e3 2 15 >"$dir/e3b.txt" 2>&1
check "--snapshot-every 2: the restart resumes at epoch 3 and ends with the uninterrupted weights" \
  "grep -q 'resumed from .* at epoch 3, step 0' '$dir/e3b.txt' && cmp -s '$dir/straight.safetensors' '$dir/e3.safetensors'"
check "the finished run leaves a snapshot of its end (epoch 3, global step 18)" \
  "[ \"\$(meta '$dir/e3.snap' epoch)\" = 3 ] && [ \"\$(meta '$dir/e3.snap' global_step)\" = 18 ]"

# 7. A snapshot of seed 5, world size 1 (e1.snap) is refused by seed 6 and by two ranks.
"$TRAIN_CIFAR" "${base[@]}" --seed 6 --epochs 3 --snapshot "$dir/e1.snap" >"$dir/seed.txt" 2>&1
check "a snapshot of another seed is refused (exit 1)" "[ $? -eq 1 ]"
check "the message names both seeds" "grep -q 'taken with seed 5 .*this run has seed 6' '$dir/seed.txt'"
"$DDLRUN" --nproc 2 "$TRAIN_CIFAR" "${common[@]}" --epochs 3 --snapshot "$dir/e1.snap" >"$dir/world.txt" 2>&1
check "a snapshot of another world size is refused under ddlrun" "[ $? -ne 0 ]"
check "the message names both world sizes" "grep -q 'world size 1;.*world size 2' '$dir/world.txt'"
"$TRAIN_CIFAR" "${common[@]}" --epochs 3 --momentum 0.5 --snapshot "$dir/e1.snap" >"$dir/momentum.txt" 2>&1
check "a snapshot of another momentum is refused, naming both and the flag" \
  "[ $? -eq 1 ] && grep -q 'taken with momentum 0.9 but this run has --momentum 0.5: pass --momentum 0.9' '$dir/momentum.txt'"
"$TRAIN_CIFAR" "${common[@]}" --epochs 3 --weight-decay 0.01 --snapshot "$dir/e1.snap" >"$dir/wd.txt" 2>&1
check "a snapshot of another weight decay is refused" \
  "[ $? -eq 1 ] && grep -q 'but this run has --weight-decay 0.01' '$dir/wd.txt'"
"$TRAIN_CIFAR" "${base[@]/#16/8}" --seed 5 --epochs 3 --snapshot "$dir/e1.snap" >"$dir/batch.txt" 2>&1  # base with batch 8
check "a snapshot of another batch size is refused (its step count would skip other samples)" \
  "[ $? -eq 1 ] && grep -q 'taken with --batch-size 16 but this run has --batch-size 8' '$dir/batch.txt'"
# Nonsense metadata: each field is validated, naming the file and the key.
set_meta() {
  python3 -c 'import json, struct, sys
src, dst, key, value = sys.argv[1:5]
b = open(src, "rb").read(); n = struct.unpack("<Q", b[:8])[0]
h = json.loads(b[8:8 + n]); h["__metadata__"][key] = value
t = json.dumps(h).encode(); t += b" " * ((8 - len(t) % 8) % 8)
open(dst, "wb").write(struct.pack("<Q", len(t)) + t + b[8 + n:])' "$@"
}
for bad in "epoch|-3|is -3, outside" "global_step|0xyz|is \"0xyz\", not an integer" \
           "optimizer.group.0.momentum|nan|is \"nan\", not a finite number"; do
  IFS='|' read -r key value said <<<"$bad"
  set_meta "$dir/e1.snap" "$dir/bad.snap" "$key" "$value"
  tc --epochs 3 --snapshot "$dir/bad.snap" >"$dir/bad.txt" 2>&1
  code=$?
  expect="bad.snap: metadata '$key' $said"
  check "snapshot metadata $key=$value is refused naming file and key ($code)" \
    "[ $code -eq 1 ] && grep -qF -- \"\$expect\" '$dir/bad.txt'"
done

# 7b. Evaluating a snapshot: --eval-only --snapshot S and --load S score S's model (the
#     same as its run's --save file), not a fresh one; a missing S is an error.
tc --eval-only --load "$dir/e1.safetensors" >"$dir/eval_saved.txt" 2>&1
tc --eval-only --snapshot "$dir/e1.snap" >"$dir/eval_snap.txt" 2>&1
tc --eval-only --load "$dir/e1.snap" >"$dir/eval_load_snap.txt" 2>&1
tc --eval-only >"$dir/eval_fresh.txt" 2>&1
check "--eval-only --snapshot and --load of a snapshot score the snapshot's model ($(test_line "$dir/eval_snap.txt"))" \
  "[ -n \"\$(test_line '$dir/eval_saved.txt')\" ] &&
   [ \"\$(test_line '$dir/eval_snap.txt')\" = \"\$(test_line '$dir/eval_saved.txt')\" ] &&
   [ \"\$(test_line '$dir/eval_load_snap.txt')\" = \"\$(test_line '$dir/eval_saved.txt')\" ] &&
   [ \"\$(test_line '$dir/eval_fresh.txt')\" != \"\$(test_line '$dir/eval_saved.txt')\" ]"
tc --eval-only --snapshot "$dir/none.snap" >"$dir/eval_none.txt" 2>&1
check "--eval-only --snapshot of a missing file is an error" \
  "[ $? -eq 1 ] && grep -q 'no such snapshot file to evaluate' '$dir/eval_none.txt'"
# Non-finite weights: refused naming the tensor, loaded with --allow-nonfinite.
python3 -c 'import struct, sys
b = bytearray(open(sys.argv[1], "rb").read()); n = struct.unpack("<Q", b[:8])[0]
b[8 + n:8 + n + 4] = struct.pack("<f", float("nan")); open(sys.argv[2], "wb").write(b)' \
  "$dir/e1.safetensors" "$dir/nan.safetensors"
tc --eval-only --load "$dir/nan.safetensors" >"$dir/nan.txt" 2>&1
check "--load of weights holding a NaN is refused naming the tensor" \
  "[ $? -eq 1 ] && grep -q \"tensor '.*' holds 1 NaN\" '$dir/nan.txt'"
tc --eval-only --load "$dir/nan.safetensors" --allow-nonfinite >"$dir/nan_ok.txt" 2>&1
check "--allow-nonfinite loads them anyway" "[ $? -eq 0 ]"

# 8. Each rank runs in its own directory with relative paths, so a file written by
#    rank 1 would land in rank1/.
mkdir -p "$dir/rank0" "$dir/rank1"
cat >"$dir/in_rank_dir.sh" <<EOF
#!/bin/sh
cd "$dir/rank\$RANK" && exec "$(realpath "$TRAIN_CIFAR")" "\$@"
EOF
chmod +x "$dir/in_rank_dir.sh"
"$DDLRUN" --nproc 2 "$dir/in_rank_dir.sh" "${common[@]}" --epochs 2 --snapshot snap.safetensors --snapshot-every-steps 2 \
  --save final.safetensors --metrics m.jsonl >"$dir/r0.txt" 2>&1
check "rank 0 wrote the snapshot and the final weights, and nothing else besides its metrics" \
  "[ \"\$(ls '$dir/rank0' | tr '\n' ' ')\" = 'final.safetensors m.rank0.jsonl snap.safetensors ' ]"
check "rank 1 wrote only its metrics" "[ \"\$(ls '$dir/rank1' | tr '\n' ' ')\" = 'm.rank1.jsonl ' ]"

[ $fail -eq 0 ] || { for f in "$dir"/*.txt; do echo "== $f"; tail -5 "$f"; done; }
exit $fail
