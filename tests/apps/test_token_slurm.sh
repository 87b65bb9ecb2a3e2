#!/usr/bin/env bash
# Slurm tasks on "nodes without a shared home directory" (each rank its own HOME, so each
# makes its own ~/.ddl/secret), store beyond loopback, no DDL_JOB_TOKEN:
#  1. without MUNGE the derived tokens differ: every rank fails within 5 s saying so;
#  2. with munged (a private one: own key and socket, DDL_MUNGE_SOCKET) ranks authenticate
#     with MUNGE credentials and train (Note [MUNGE tokens] in dist/launch/munge_auth.cpp);
#  3. a task of another step presenting its credential to this step's store is refused, and
#     every rank fails within 5 s.
# Exit 77 without munged/munge/unmunge or a non-loopback IPv4 address.
set -uo pipefail
: "${TRAIN_CIFAR:?}" "${ALLREDUCE_RANK:?}"
for p in munged munge unmunge; do command -v $p >/dev/null || { echo "SKIP: $p is not installed"; exit 77; }; done
ip=$(hostname -I 2>/dev/null | tr ' ' '\n' | grep -v '^127\.' | grep -m1 '\.')
[ -n "$ip" ] || { echo "SKIP: no non-loopback IPv4 address"; exit 77; }
dir=$(mktemp -d /tmp/ddl_token_slurm.$$.XXXXXX)
chmod 700 "$dir"
pids=()
munged_pid=
cleanup() {
  local p
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
  [ -n "$munged_pid" ] && kill "$munged_pid" 2>/dev/null && wait "$munged_pid" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }
free_port() { /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("", 0)); print(s.getsockname()[1])'; }
now() { date +%s.%N; }
# tasks NAME STEP0 STEP1 CMD...: Slurm job 4242's tasks 0 and 1 (steps STEP0 and STEP1), each its own HOME.
tasks() {
  local name=$1 steps=("$2" "$3") port r started=()
  shift 3
  port=$(free_port)
  for r in 0 1; do
    mkdir -p "$dir/home$r.$name"
    env -u DDL_JOB_TOKEN -u DDL_JOB_TOKEN_FILE -u RANK -u WORLD_SIZE HOME="$dir/home$r.$name" SLURM_PROCID=$r \
      SLURM_NTASKS=2 SLURM_LOCALID=0 SLURM_TASKS_PER_NODE='1(x2)' SLURM_JOB_ID=4242 SLURM_STEP_ID="${steps[$r]}" \
      MASTER_ADDR="$ip" MASTER_PORT="$port" DDL_TIMEOUT=300 timeout -k 2 60 "$@" >"$dir/$name.$r" 2>&1 &
    started+=($!)
    pids+=($!)
  done
  for r in 0 1; do
    wait "${started[$r]}"
    echo $? >"$dir/$name.$r.rc"
  done
}
rc() { cat "$dir/$1.rc"; }

t0=$(now)
DDL_MUNGE_SOCKET=$dir/none.sock tasks nomunge 0 0 "$ALLREDUCE_RANK"
t1=$(now)
echo "  rank 0: $(grep -m1 -o 'store:.*' "$dir/nomunge.0" | cut -c1-250)"
check "without MUNGE, own homes: both ranks fail" "[ $(rc nomunge.0) -ne 0 ] && [ $(rc nomunge.1) -ne 0 ]"
check "... within 5 s ($(echo "$t1 - $t0" | bc) s), saying job token" \
  "[ \$(echo '$t1 - $t0 < 5' | bc) -eq 1 ] && grep -q 'job token' $dir/nomunge.0 && grep -q 'job token' $dir/nomunge.1"

dd if=/dev/urandom of="$dir/munge.key" bs=1024 count=1 2>/dev/null
chmod 400 "$dir/munge.key"
munged --force --foreground --key-file="$dir/munge.key" --socket="$dir/munge.sock" --pid-file="$dir/munged.pid" \
  --log-file="$dir/munged.log" --seed-file="$dir/munged.seed" >"$dir/munged.out" 2>&1 &
munged_pid=$!
for _ in $(seq 50); do [ -S "$dir/munge.sock" ] && break; sleep 0.1; done
if ! munge --socket="$dir/munge.sock" -n >/dev/null 2>&1; then
  cat "$dir/munged.out" "$dir/munged.log" 2>/dev/null | tail -3
  echo "SKIP parts 2 and 3: munged did not start"
  exit $fail
fi
export DDL_MUNGE_SOCKET=$dir/munge.sock
common=(--dataset synthetic --model mlp --train-samples 96 --test-samples 32 --batch-size 16 --lr 0.05 --threads 1
        --loader-workers 1 --no-progress --seed 5 --epochs 1)
tasks munge 0 0 "$TRAIN_CIFAR" "${common[@]}"
tail -2 "$dir/munge.0" | sed 's/^/  /'
check "with MUNGE, own homes: both ranks train" \
  "[ $(rc munge.0) -eq 0 ] && [ $(rc munge.1) -eq 0 ] && grep -q 'world size 2' $dir/munge.0"
check "no ~/.ddl/secret was needed" "! ls $dir/home*.munge/.ddl/secret >/dev/null 2>&1"

t0=$(now)
tasks steps 0 1 "$ALLREDUCE_RANK"
t1=$(now)
echo "  rank 0: $(grep -m1 -o 'store:.*' "$dir/steps.0" | cut -c1-300)"
check "a task of another step: both fail within 5 s ($(echo "$t1 - $t0" | bc) s)" \
  "[ $(rc steps.0) -ne 0 ] && [ $(rc steps.1) -ne 0 ] && [ \$(echo '$t1 - $t0 < 5' | bc) -eq 1 ]"
check "... rank 0 names the other step's credential" "grep -q 'another job step' $dir/steps.0"
exit $fail
