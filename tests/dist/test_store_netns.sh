#!/bin/bash
# Stores bound beyond loopback, on a real non-loopback address: a fresh network namespace
# with a veth pair (10.231.0.1 on one end) stands in for a cluster node. Checks that rank 0
# there refuses to serve without a job token; with one, two ranks all-reduce; a rank with
# the wrong token is refused within seconds; two Slurm steps of one job run at once (own
# ports, own tokens); and a rank of one step pointed at the other step's store is refused
# within seconds. Needs root; fails (never skips) when the namespace cannot be made.
set -u
run=${DDL_TEST_HELPERS:?set by meson}/ddl_helper_allreduce_rank
ns=ddl_store_$$
addr=10.231.0.1
tmp=$(mktemp -d)
pids=()
failures=0

cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  ip netns del "$ns" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ms_now() { echo $(($(date +%s%N) / 1000000)); }

command -v ip >/dev/null || { echo "skipped: ip (iproute2) is not installed"; exit 77; }
if ! ip netns add "$ns" 2>"$tmp/err"; then
  echo "FAIL: cannot create a network namespace ('ip netns add': $(cat "$tmp/err")); this test needs root" \
    "(CAP_SYS_ADMIN, CAP_NET_ADMIN) and iproute2"
  exit 1
fi
in_ns() { ip netns exec "$ns" "$@"; }
if ! { in_ns ip link set lo up && in_ns ip link add ddl0 type veth peer name ddl1 &&
  in_ns ip addr add "$addr/24" dev ddl0 && in_ns ip link set ddl0 up && in_ns ip link set ddl1 up; } 2>"$tmp/err"; then
  echo "FAIL: cannot add a veth pair in the namespace: $(cat "$tmp/err") (needs the 'veth' kernel module)"
  exit 1
fi

# A rank in the namespace with a clean environment (and a private HOME for ~/.ddl/secret).
rank() { in_ns env -i PATH="$PATH" HOME="$tmp" "$@" timeout 60 "$run"; }

echo "== rank 0 on $addr without a token"
rank RANK=0 WORLD_SIZE=1 MASTER_ADDR=$addr MASTER_PORT=29500 >"$tmp/notoken" 2>&1 && fail "rank 0 started without a token"
grep -q "refusing to serve on $addr:29500 without a job token" "$tmp/notoken" || fail "no refusal: $(cat "$tmp/notoken")"

echo "== two ranks sharing DDL_JOB_TOKEN"
for r in 0 1; do
  rank RANK=$r WORLD_SIZE=2 MASTER_ADDR=$addr MASTER_PORT=29501 DDL_JOB_TOKEN=good >"$tmp/good$r" 2>&1 &
  pids+=($!)
done
wait "${pids[-2]}" && wait "${pids[-1]}" || fail "the job with a shared token failed: $(cat "$tmp"/good*)"
grep -q "sum ok" "$tmp/good0" && grep -q "sum ok" "$tmp/good1" || fail "no sum: $(cat "$tmp"/good*)"

echo "== a rank with the wrong token"
rank RANK=0 WORLD_SIZE=2 MASTER_ADDR=$addr MASTER_PORT=29502 DDL_JOB_TOKEN=good >"$tmp/owner" 2>&1 &
pids+=($!)
owner=$!
sleep 0.5
t0=$(ms_now)
rank RANK=1 WORLD_SIZE=2 MASTER_ADDR=$addr MASTER_PORT=29502 DDL_JOB_TOKEN=bad >"$tmp/bad" 2>&1 && fail "the wrong token joined"
dt=$(($(ms_now) - t0))
echo "refused after $dt ms"
[ "$dt" -lt 5000 ] || fail "refusal took $dt ms"
grep -q "the store at $addr:29502 refused this rank's job token (from DDL_JOB_TOKEN)" "$tmp/bad" ||
  fail "no refusal message: $(cat "$tmp/bad")"
kill "$owner" 2>/dev/null

slurm() {  # slurm STEP PROCID [VAR=VALUE...]: one task of job 4242
  local step=$1 p=$2
  shift 2
  rank SLURM_JOB_ID=4242 SLURM_STEP_ID=$step SLURM_PROCID=$p SLURM_NTASKS=2 SLURM_LOCALID=$p \
    SLURM_TASKS_PER_NODE=2 SLURM_JOB_NODELIST=$addr SLURM_STEP_NODELIST=$addr "$@"
}

echo "== two Slurm steps of one job at once"
for s in 0 1; do
  for p in 0 1; do
    slurm $s $p >"$tmp/step$s.$p" 2>&1 &
    pids+=($!)
  done
done
for i in 1 2 3 4; do wait "${pids[-$i]}" || fail "a task of the two steps failed"; done
for f in "$tmp"/step*; do grep -q "sum ok" "$f" || fail "$(basename "$f"): $(cat "$f")"; done

echo "== a rank of step 1 pointed at step 0's store"
slurm 0 0 MASTER_PORT=29503 >"$tmp/stepA" 2>&1 &
pids+=($!)
owner=$!
sleep 0.5
t0=$(ms_now)
slurm 1 1 MASTER_PORT=29503 >"$tmp/stepB" 2>&1 && fail "step 1's rank joined step 0's store"
dt=$(($(ms_now) - t0))
echo "refused after $dt ms"
[ "$dt" -lt 5000 ] || fail "refusal took $dt ms"
grep -q "refused this rank's job token (from .*secret and the Slurm job 4242 step 1)" "$tmp/stepB" ||
  fail "no refusal message: $(cat "$tmp/stepB")"
kill "$owner" 2>/dev/null

if [ "$failures" -gt 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all checks passed"
