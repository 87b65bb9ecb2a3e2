#!/usr/bin/env bash
# The job token under launchers other than ddlrun (docs/dist.md, "Launchers and the job
# token"), with real processes and only the variables such a launcher sets:
#  1. two ranks with different DDL_JOB_TOKENs: every rank fails within 5 s saying the token
#     is the problem, rank 0 naming the refused rank and its host;
#  2. a PyTorchJob-style environment (MASTER_ADDR a non-loopback address, WORLD_SIZE, RANK)
#     without a token: every rank fails within 5 s naming DDL_JOB_TOKEN;
#  3. the same with the token in DDL_JOB_TOKEN_FILE (a mounted Kubernetes Secret) trains;
#  4. DDL_JOB_TOKEN=insecure-none (a trusted pod network) runs, rank 0 warning.
set -uo pipefail
: "${TRAIN_CIFAR:?}" "${ALLREDUCE_RANK:?}"
dir=$(mktemp -d /tmp/ddl_token_launchers.$$.XXXXXX)
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }
free_port() { /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("", 0)); print(s.getsockname()[1])'; }
now() { date +%s.%N; }
# ranks NAME N ENV... -- CMD...: N ranks of CMD with RANK/WORLD_SIZE and ENV (no other launcher
# variables, no token unless ENV gives one), in the background; waits; records each status.
ranks() {
  local name=$1 n=$2
  shift 2
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  local r started=()
  for ((r = 0; r < n; r++)); do
    env -u DDL_JOB_TOKEN -u DDL_JOB_TOKEN_FILE -u SLURM_PROCID -u OMPI_COMM_WORLD_RANK RANK=$r WORLD_SIZE=$n \
      DDL_TIMEOUT=300 "${envs[@]//@R@/$r}" timeout -k 2 60 "$@" >"$dir/$name.$r" 2>&1 &
    started+=($!)
    pids+=($!)
  done
  for ((r = 0; r < n; r++)); do
    wait "${started[$r]}"
    echo $? >"$dir/$name.$r.rc"
  done
}

# 1. Different tokens on loopback (the store checks a token whenever it has one).
port=$(free_port)
t0=$(now)
ranks wrong 2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port DDL_JOB_TOKEN=token-of-@R@ -- "$ALLREDUCE_RANK"
t1=$(now)
echo "  rank 0: $(grep -m1 -o 'store:.*' "$dir/wrong.0" | cut -c1-400)"
echo "  rank 1: $(grep -m1 -o 'store:.*' "$dir/wrong.1" | cut -c1-200)"
check "different tokens: every rank failed" "[ \$(cat $dir/wrong.0.rc) -ne 0 ] && [ \$(cat $dir/wrong.1.rc) -ne 0 ]"
check "different tokens: every rank ended within 5 s ($(echo "$t1 - $t0" | bc) s)" "[ \$(echo '$t1 - $t0 < 5' | bc) -eq 1 ]"
check "different tokens: both say the job token is the problem" \
  "grep -q 'job token' $dir/wrong.0 && grep -q 'job token' $dir/wrong.1"
check "rank 0 names the refused rank and its host" "grep -q \"rank 1 on host $(hostname)\" $dir/wrong.0"

ip=$(hostname -I 2>/dev/null | tr ' ' '\n' | grep -v '^127\.' | grep -m1 '\.')
if [ -z "$ip" ]; then
  echo "SKIP parts 2 and 3: this machine has no non-loopback IPv4 address"
  
# 4. The explicit opt-in for a trusted pod network: trains, and rank 0 says what it means.
port=$(free_port)
ranks insecure 2 MASTER_ADDR=$ip MASTER_PORT=$port DDL_JOB_TOKEN=insecure-none -- "$ALLREDUCE_RANK"
check "DDL_JOB_TOKEN=insecure-none: both ranks all-reduce" "grep -q 'sum ok' $dir/insecure.0 && grep -q 'sum ok' $dir/insecure.1"
check "... and rank 0 warns that any process may join" "grep -q 'lets in any process' $dir/insecure.0"
exit $fail
fi
# 2. A PyTorchJob's variables only: no token, a store beyond loopback.
port=$(free_port)
t0=$(now)
ranks none 2 MASTER_ADDR=$ip MASTER_PORT=$port -- "$ALLREDUCE_RANK"
t1=$(now)
echo "  rank 1: $(grep -m1 -o 'store:.*' "$dir/none.1" | cut -c1-300)"
check "no token beyond loopback: every rank failed" "[ \$(cat $dir/none.0.rc) -ne 0 ] && [ \$(cat $dir/none.1.rc) -ne 0 ]"
check "no token beyond loopback: every rank ended within 5 s ($(echo "$t1 - $t0" | bc) s)" \
  "[ \$(echo '$t1 - $t0 < 5' | bc) -eq 1 ]"
check "no token: both name DDL_JOB_TOKEN" "grep -q DDL_JOB_TOKEN $dir/none.0 && grep -q DDL_JOB_TOKEN $dir/none.1"

# 3. The token from a mounted Secret (Kubernetes mounts it read-only; defaultMode 0400).
mkdir -m 700 "$dir/secret"
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$dir/secret/token"
chmod 400 "$dir/secret/token"
port=$(free_port)
common=(--dataset synthetic --model mlp --train-samples 96 --test-samples 32 --batch-size 16 --lr 0.05 --threads 1
        --loader-workers 1 --no-progress --seed 5 --epochs 1)
ranks secret 2 MASTER_ADDR=$ip MASTER_PORT=$port DDL_JOB_TOKEN_FILE=$dir/secret/token -- "$TRAIN_CIFAR" "${common[@]}"
tail -3 "$dir/secret.0" | sed 's/^/  /'
check "PyTorchJob-style ranks with DDL_JOB_TOKEN_FILE train" \
  "[ \$(cat $dir/secret.0.rc) -eq 0 ] && [ \$(cat $dir/secret.1.rc) -eq 0 ] && grep -q 'world size 2' $dir/secret.0"

# 4. The explicit opt-in for a trusted pod network: trains, and rank 0 says what it means.
port=$(free_port)
ranks insecure 2 MASTER_ADDR=$ip MASTER_PORT=$port DDL_JOB_TOKEN=insecure-none -- "$ALLREDUCE_RANK"
check "DDL_JOB_TOKEN=insecure-none: both ranks all-reduce" "grep -q 'sum ok' $dir/insecure.0 && grep -q 'sum ok' $dir/insecure.1"
check "... and rank 0 warns that any process may join" "grep -q 'lets in any process' $dir/insecure.0"
exit $fail
