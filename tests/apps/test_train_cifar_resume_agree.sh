#!/usr/bin/env bash
# Resume agreement with node-local snapshots (suite "apps"): two ranks under ddlrun, each
# in its own folder node$RANK with --snapshot snap.st relative to it, as if each node had
# its own disk. The MLP on 96 synthetic samples, batch 16: 3 steps per epoch, 4 epochs.
#  1. rank 0 has a snapshot (global step 8), rank 1 none: rank 0 sends its own, both resume
#     at step 8 and end with the weights of an uninterrupted run and of a run that had the
#     snapshot on every rank; also as it happens under ddlrun --max-restarts;
#  2. rank 1 has an older snapshot (step 4): both resume from rank 0's (step 8);
#  3. rank 1 has a snapshot, rank 0 none: every rank stops at once with one message;
#  4. rank 1's snapshot was taken with another seed: every rank stops, naming rank 1.
set -uo pipefail
: "${TRAIN_CIFAR:?}" "${DDLRUN:?}"
command -v python3 >/dev/null || { echo "python3 is needed to read the metrics files"; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
tc_path=$(realpath "$TRAIN_CIFAR")
common=(--dataset synthetic --model mlp --train-samples 96 --test-samples 32 --batch-size 16 --threads 1
        --loader-workers 1 --log-every 100 --no-progress --epochs 4)
run2() { "$DDLRUN" --nproc 2 --all-ranks "$@"; }  # both ranks' lines are checked
# Each rank runs in node$RANK and leaves its exit status in node$RANK/rc. It ignores the
# SIGTERM ddlrun sends the others once one rank fails, so each rank must stop on its own.
cat >"$dir/node.sh" <<EOF
#!/bin/sh
trap '' TERM
cd "$dir/node\$RANK" && "$tc_path" "\$@"
rc=\$?; echo \$rc >rc; exit \$rc
EOF
chmod +x "$dir/node.sh"
# Empties both nodes, then copies snapshot files in: nodes SNAP0 SNAP1 ("-" for none).
nodes() {
  rm -rf "$dir/node0" "$dir/node1" && mkdir -p "$dir/node0" "$dir/node1"
  [ "$1" = - ] || cp "$dir/$1" "$dir/node0/snap.st"
  [ "$2" = - ] || cp "$dir/$2" "$dir/node1/snap.st"
}
# on_nodes ARGS: train_cifar on both nodes; $LAUNCH holds extra ddlrun flags.
on_nodes() { run2 ${LAUNCH:-} "$dir/node.sh" "${common[@]}" --snapshot snap.st --save final.st --metrics m.jsonl "$@"; }
rcs() { cat "$dir/node0/rc" "$dir/node1/rc" 2>/dev/null | tr '\n' ' '; }

# Reference runs, one shared snapshot path each: uninterrupted; killed after global step 9
# and 5 with a snapshot every 4 steps (s8, s4); the same with seed 6 (s6).
run2 "$TRAIN_CIFAR" "${common[@]}" --seed 5 --save "$dir/straight.st" >"$dir/straight.txt" 2>&1
check "the uninterrupted run" "[ $? -eq 0 ]"
for s in "s8 5 9" "s4 5 5" "s6 6 5"; do
  set -- $s
  run2 "$TRAIN_CIFAR" "${common[@]}" --seed "$2" --snapshot "$dir/$1" --snapshot-every-steps 4 --crash-at-step "$3" \
    >"$dir/$1.txt" 2>&1
  check "snapshot $1 (seed $2, killed at step $3)" "[ -s '$dir/$1' ]"
done
cp "$dir/s8" "$dir/shared.st"
run2 "$TRAIN_CIFAR" "${common[@]}" --seed 5 --snapshot "$dir/shared.st" --save "$dir/everywhere.st" \
  >"$dir/everywhere.txt" 2>&1
check "a snapshot every rank has: resumed at step 8, no snapshot sent" \
  "[ \$(grep -c 'resumed from .* at epoch 3, step 2' '$dir/everywhere.txt') = 2 ] && ! grep -q 'resume:' '$dir/everywhere.txt'"
check "  and it ends with the uninterrupted weights" "cmp -s '$dir/straight.st' '$dir/everywhere.st'"

# 1. Only rank 0 has the snapshot.
nodes s8 -
on_nodes --seed 5 >"$dir/c1.txt" 2>&1
check "1. rank 1 without a snapshot: the run succeeds on both ranks" "[ $? -eq 0 ] && [ \"\$(rcs)\" = '0 0 ' ]"
check "1. rank 0 says it sent its snapshot to rank 1" \
  "grep -q '^\[rank 0/2\] resume: rank 1 had no snapshot at snap.st; sent rank 0.s (epoch 3, step 2, global step 8) to it$' '$dir/c1.txt'"
check "1. both ranks resume at epoch 3, step 2" \
  "grep -q '^\[rank 0/2\] resumed from snap.st at epoch 3, step 2' '$dir/c1.txt' &&
   grep -q '^\[rank 1/2\] resumed from snap.st (received from rank 0) at epoch 3, step 2' '$dir/c1.txt'"
check "1. final weights equal the uninterrupted run's and the snapshot-everywhere run's" \
  "cmp -s '$dir/straight.st' '$dir/node0/final.st' && cmp -s '$dir/everywhere.st' '$dir/node0/final.st'"
check "1. rank 1 logged the resume at global step 8 and wrote no snapshot" \
  "grep -q '\"event\":\"resume\".*\"global_step\":8' '$dir/node1/m.rank1.jsonl' && [ ! -e '$dir/node1/snap.st' ]"
# The case that matters: killed after step 9, restarted by ddlrun; only rank 0's node has the file.
nodes - -
LAUNCH="--max-restarts 1" on_nodes --seed 5 --snapshot-every-steps 4 --crash-at-step 9 >"$dir/c1r.txt" 2>&1
check "1. ddlrun --max-restarts with node-local snapshots: the restart resumes both ranks at step 8" \
  "[ $? -eq 0 ] && grep -q 'resume: rank 1 had no snapshot at snap.st; sent rank 0.s (epoch 3, step 2, global step 8)' '$dir/c1r.txt'"
check "1.   and ends with the uninterrupted weights" "cmp -s '$dir/straight.st' '$dir/node0/final.st'"
for r in 0 1; do
  check "1.   rank $r's metrics go on after a resume marker at global step 8 (restart 1)" \
    "checks resumed '$dir/node$r/m.rank$r.jsonl' --batches 3 --epochs 4 --from-step 8 --marker resume --restarts 1"
done

# 2. Rank 1 has an older snapshot.
nodes s8 s4
on_nodes --seed 5 >"$dir/c2.txt" 2>&1
check "2. rank 1 with an older snapshot: the run succeeds on both ranks" "[ $? -eq 0 ] && [ \"\$(rcs)\" = '0 0 ' ]"
check "2. rank 0 names rank 1's position and sends its own" \
  "grep -q 'resume: rank 1 had another snapshot (epoch 2, step 1, global step 4) at snap.st; sent rank 0.s (epoch 3, step 2, global step 8) to it' '$dir/c2.txt'"
check "2. both resume from rank 0's and end with the uninterrupted weights" \
  "[ \$(grep -c 'resumed from .* at epoch 3, step 2' '$dir/c2.txt') = 2 ] && cmp -s '$dir/straight.st' '$dir/node0/final.st'"

# 3. Only rank 1 has a snapshot: rank 0 is authoritative, so every rank stops.
nodes - s8
start=$SECONDS
on_nodes --seed 5 >"$dir/c3.txt" 2>&1
code=$?
check "3. rank 0 without a snapshot: ddlrun fails, each rank exits 1 by itself, within 20 s" \
  "[ $code -ne 0 ] && [ \"\$(rcs)\" = '1 1 ' ] && [ $((SECONDS - start)) -le 20 ]"
check "3. both ranks print the same message, naming both ranks and the fix" \
  "[ \$(grep -c 'error: resume: rank 0 has no snapshot but rank 1 has one' '$dir/c3.txt') = 2 ] &&
   grep -q '^\[rank 0/2\]   rank 0: no snapshot at snap.st$' '$dir/c3.txt' &&
   grep -q '^\[rank 0/2\]   rank 1: snapshot at snap.st: epoch 3, step 2, global step 8' '$dir/c3.txt' &&
   grep -q 'copy the snapshot to rank 0.s node' '$dir/c3.txt'"
check "3. no rank was killed by a signal, and none trained" \
  "! grep -q 'killed by signal' '$dir/c3.txt' && ! grep -q 'batch  *0:' '$dir/c3.txt'"

# 4. Rank 1's snapshot has another seed: its load error reaches every rank.
nodes s8 s6
on_nodes --seed 5 >"$dir/c4.txt" 2>&1
code=$?
check "4. a snapshot of seed 6 on rank 1: each rank exits 1 by itself" "[ $code -ne 0 ] && [ \"\$(rcs)\" = '1 1 ' ]"
check "4. both ranks name rank 1 and its error" \
  "[ \$(grep -c 'error: resume: rank 1 could not use the snapshot' '$dir/c4.txt') = 2 ] &&
   [ \$(grep -c 'rank 1: could not use snap.st: .*taken with seed 6 .*this run has seed 5' '$dir/c4.txt') = 2 ]"
check "4. no rank was killed by a signal" "! grep -q 'killed by signal' '$dir/c4.txt'"

[ $fail -eq 0 ] || { for f in "$dir"/*.txt; do echo "== $f"; tail -8 "$f"; done; }
exit $fail
