#!/usr/bin/env bash
# Elastic membership across separate launcher processes (ddlrun --nnodes MIN:MAX, docs/dist.md
# "Elastic jobs"), no root needed: three ddlruns on this machine play three nodes, their
# stores on 127.0.0.1, .2 and .3 (all loopback), train_cifar --sync allreduce under each. Node 0's
# ddlrun (the store's leader, rank 0) is SIGKILLed after 3 epochs: nodes 1 and 2 fail the
# store over to 127.0.0.2, go on at world size 2 from the snapshot and finish (exit 0).
# Then the usage errors of the elastic flags (exit 2, saying what to give).
set -uo pipefail
: "${DDLRUN:?}" "${TRAIN_CIFAR:?}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ddlrun_elastic_nodes.$$.XXXXXX")
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  wait 2>/dev/null
  [ -n "${KEEP:-}" ] || rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }
export DDL_JOB_TOKEN
DDL_JOB_TOKEN=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
port=$((20000 + $$ % 20000))
node() {  # node I: ddlrun of node I in the background, its output in $tmp/nodeI.log
  "$DDLRUN" --nnodes 2:3 --node-rank "$1" --nproc 1 --master-addr 127.0.0.1,127.0.0.2,127.0.0.3 \
    --master-port $port --max-restarts 3 --rdzv-last-call 1 --timeout 5 --grace 2 \
    "$TRAIN_CIFAR" --dataset synthetic --model mlp --threads 1 --batch-size 8 --train-samples 96 --test-samples 16 \
    --eval-every 100 --sync allreduce --epochs 12 --snapshot "$tmp/snap.safetensors" >"$tmp/node$1.log" 2>&1 &
  pids[$1]=$!
}
for i in 0 1 2; do node $i; done
for ((t = 0; t < 400; ++t)); do  # 40 s at most
  [ "$(grep -cE '^epoch [0-9]+: train loss' "$tmp/node0.log")" -ge 3 ] && break
  sleep 0.1
done
kill -9 "${pids[0]}"
wait "${pids[1]}"
c1=$?
wait "${pids[2]}"
c2=$?
check "nodes 1 and 2 finish after node 0's launcher was killed (exit $c1, $c2)" "[ $c1 = 0 ] && [ $c2 = 0 ]"
check "the store failed over to 127.0.0.2" \
  "grep -q 'the store failed over from 127.0.0.1 to 127.0.0.2' '$tmp/node1.log'"
check "a round of nodes 1,2 at world size 2, node 1 holding rank 0" \
  "grep -qE 'round [0-9]+: nodes 1,2, world size 2, this node.s ranks from 0, store 127.0.0.2' '$tmp/node1.log'"
# Node 0 is killed once it has printed epoch 3's line: the snapshot after epoch 2 exists by
# then, and whether epoch 3's was written before the kill is a race (resuming at epoch 3 or 4).
check "it resumed from the snapshot at the smaller size" \
  "grep -q 'elastic resume: world size 3 -> 2' '$tmp/node1.log' && grep -qE '^resumed from .* at epoch [3-9]' '$tmp/node1.log'"
check "node 1, now rank 0, trained the last epoch" "grep -qE '^epoch 12: train loss' '$tmp/node1.log'"
[ $fail = 0 ] || { echo "--- node 1"; grep -E '^ddlrun|resumed|elastic' "$tmp/node1.log" | tail -n 20; }

# Usage errors.
usage() {  # usage NAME EXPECTED-TEXT ARGS...
  local name=$1 want=$2
  shift 2
  "$DDLRUN" "$@" true >"$tmp/$name" 2>&1
  local code=$?
  check "usage: $name (exit $code)" "[ $code = 2 ] && grep -q -- '$want' '$tmp/$name'"
}
usage min_above_max 'MIN is above MAX' --nnodes 3:2 --nproc 1 --master-addr 127.0.0.1 --master-port 1
usage not_a_number 'expected N or MIN:MAX' --nnodes 2:x --nproc 1
usage no_addresses 'needs --master-addr A0,A1' --nnodes 1:2 --nproc 1
usage rank_outside 'outside \[0, 2)' --nnodes 1:2 --nproc 1 --node-rank 2 --master-addr 127.0.0.1 --master-port 1
usage power_without_hosts 'act on emulated hosts' --nnodes 1:2 --nproc 1 --power-off host0=1
usage power_not_elastic 'drill elastic jobs' --nproc 1 --power-on host0=1
usage log_dir 'takes neither --log-dir' --nnodes 1:2 --nproc 1 --log-dir "$tmp/logs"
DDL_JOB_TOKEN='' usage no_token 'needs DDL_JOB_TOKEN' --nnodes 1:2 --nproc 1 --master-addr 127.0.0.1 --master-port 1
exit $fail
