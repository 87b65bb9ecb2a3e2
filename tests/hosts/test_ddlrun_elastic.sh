#!/usr/bin/env bash
# An elastic job on emulated hosts (ddlrun --hosts 3 --nnodes 2:3; docs/dist.md "Elastic
# jobs", docs/cluster.md "Elastic drills"): train_cifar --sync ddp on 3 hosts loses host0 (the
# store's host and rank 0) to --power-off, goes on at world size 2 from the last snapshot,
# then host0 is powered on again and admitted at the next restart point, and the job ends at
# world size 3. Checks: the job finishes (exit 0); the store failed over; a round ran at world
# size 2 and a later one at 3, each resuming from a snapshot; and the final weights equal,
# byte for byte, those of a run that made the same membership changes by hand: ddlrun
# --hosts W from the snapshot, one run per round that made progress (DDL_ELASTIC=1 lets a
# snapshot of another world size be resumed). Also: a strategy other than ddp/allreduce
# refuses to resume at another world size, naming itself. Root; skipped (77) without it.
set -uo pipefail
[ "$(id -u)" = 0 ] || { echo "skipped: not root (ddlrun --hosts needs CAP_NET_ADMIN, CAP_SYS_ADMIN)"; exit 77; }
command -v ip >/dev/null || { echo "skipped: ip (iproute2) is not installed"; exit 77; }
: "${DDLRUN:?}" "${TRAIN_CIFAR:?}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ddlrun_elastic.$$.XXXXXX")
export DDLRUN_STATE_DIR=$tmp/state  # this test's job records only: --cleanup below touches no other job
mkdir -p "$DDLRUN_STATE_DIR"
cleanup() {
  "$DDLRUN" --cleanup >/dev/null 2>&1
  [ -n "${KEEP:-}" ] || rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }

EPOCHS=12
# An MLP on synthetic data, 96 samples: 4 steps an epoch at world size 3, 6 at 2.
flags=(--dataset synthetic --model mlp --threads 1 --batch-size 8 --train-samples 96 --test-samples 16
  --timeout 5 --eval-every 100)

# wait_for PATTERN COUNT: until the job's log has COUNT lines matching PATTERN (at most 40 s).
wait_for() {
  local i
  for ((i = 0; i < 400; ++i)); do
    [ "$(grep -cE -- "$1" "$tmp/elastic.log")" -ge "$2" ] && return 0
    kill -0 "$job" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

# 1. The elastic job, driven by its progress through --power-control: host0 loses power
# after 3 epochs at world size 3, and starts again after 2 epochs at world size 2. With
# --max-restarts 1: the loss is the one failure, the admission a restart that is not counted.
: >"$tmp/control"
"$DDLRUN" --hosts 3 --link 10gbit --nnodes 2:3 --max-restarts 1 --rdzv-last-call 1 --timeout 5 --grace 2 \
  --power-control "$tmp/control" \
  "$TRAIN_CIFAR" "${flags[@]}" --sync ddp --epochs $EPOCHS --snapshot "$tmp/snap.safetensors" --save "$tmp/elastic.safetensors" \
  >"$tmp/elastic.log" 2>&1 &
job=$!
epochs='^epoch [0-9]+: train loss'  # rank 0's line at each epoch's end
wait_for "$epochs" 3 && echo "off host0" >>"$tmp/control"
if wait_for 'elastic resume: world size 3 -> 2' 1; then
  wait_for "$epochs" $(($(grep -cE -- "$epochs" "$tmp/elastic.log") + 2)) && echo "on host0" >>"$tmp/control"
fi
wait "$job"
code=$?
check "elastic job finishes (exit $code)" "[ $code = 0 ]"
check "host0 lost power, then started again" \
  "grep -q 'power-off: host0 loses power' '$tmp/elastic.log' && grep -q 'power-on: host0 starts' '$tmp/elastic.log'"
check "the store failed over from host0's to host1's" \
  "grep -q 'the store failed over from 10.99.0.1 to 10.99.0.2' '$tmp/elastic.log' &&
   grep -qE 'round [0-9]+: nodes 1,2, world size 2, .*store 10.99.0.2' '$tmp/elastic.log'"

# The rounds, in order: "ROUND WORLD RESUME_EPOCH" (resume epoch 0: started afresh); a
# round's line comes from its agents, its resume line from its rank 0 ("at epoch E" is 1-based).
awk '
  /elastic: node [0-9]+ .*: round [0-9]+: nodes/ {
    match($0, /round [0-9]+/); r = substr($0, RSTART + 6, RLENGTH - 6) + 0
    match($0, /world size [0-9]+/); w = substr($0, RSTART + 11, RLENGTH - 11) + 0
    if (!(r in world)) { order[n++] = r; world[r] = w; resume[r] = -1 }
    cur = r
  }
  /^resumed from .* at epoch [0-9]+, step 0/ {
    match($0, /at epoch [0-9]+/); resume[cur] = substr($0, RSTART + 9, RLENGTH - 9) - 1
  }
  END { for (i = 0; i < n; ++i) print order[i], world[order[i]], resume[order[i]] }
' "$tmp/elastic.log" >"$tmp/rounds"
echo "rounds (round world resumed-at-epoch):"; sed 's/^/  /' "$tmp/rounds"
check "a round ran at world size 2 after one at 3, and a later one at 3 again" \
  "awk '{ s = s \$2 } END { exit !(s ~ /3.*2.*3\$/) }' '$tmp/rounds'"
check "the rounds at world size 2 and the last round resumed from a snapshot" \
  "awk '\$2 == 2 && \$3 < 0 { bad = 1 } END { exit bad || \$3 < 0 }' '$tmp/rounds'"
check "the world-size change was announced" "grep -q 'elastic resume: world size 3 -> 2' '$tmp/elastic.log'"

# 2. The same membership changes by hand: round k trained from its resume epoch to the next
# round's (none when equal: it wrote no snapshot), the last one to the end.
mapfile -t rounds <"$tmp/rounds"
ok=1
for i in "${!rounds[@]}"; do
  read -r _ w from <<<"${rounds[$i]}"
  [ "$from" -lt 0 ] && from=0
  if [ "$i" -lt $((${#rounds[@]} - 1)) ]; then
    read -r _ _ to <<<"${rounds[$((i + 1))]}"
    extra=()
  else
    to=$EPOCHS
    extra=(--save "$tmp/byhand.safetensors")
  fi
  [ "$to" -gt "$from" ] || continue
  DDL_ELASTIC=1 "$DDLRUN" --hosts "$w" --link 10gbit --timeout 5 "$TRAIN_CIFAR" "${flags[@]}" --sync ddp --epochs "$to" \
    --snapshot "$tmp/byhand_snap.safetensors" "${extra[@]}" >"$tmp/byhand$i.log" 2>&1 ||
    { ok=0; echo "by hand, world size $w, epochs $from..$to failed:"; tail -n 5 "$tmp/byhand$i.log"; }
done
check "the runs by hand finished" "[ $ok = 1 ]"
check "final weights: elastic == by hand, byte for byte" "cmp -s '$tmp/elastic.safetensors' '$tmp/byhand.safetensors'"

# 3. Another strategy refuses a snapshot of another world size, naming itself.
last=$(awk 'END { print $2 }' "$tmp/rounds")
DDL_ELASTIC=1 "$DDLRUN" --hosts $((last == 2 ? 3 : 2)) --link 10gbit --timeout 5 "$TRAIN_CIFAR" "${flags[@]}" --sync param-server \
  --epochs 1 --snapshot "$tmp/snap.safetensors" >"$tmp/refuse.log" 2>&1
code=$?
check "param-server refuses to resume at another world size (exit $code)" \
  "[ $code != 0 ] && grep -q -- '--sync param-server cannot change world size' '$tmp/refuse.log'"
[ $fail = 0 ] || { echo "--- elastic job's output (tail)"; tail -n 60 "$tmp/elastic.log"; }
exit $fail
