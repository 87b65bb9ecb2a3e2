#!/usr/bin/env bash
# ddlrun --syscalls (docs/dist.md, "Counting system calls"): a 2-rank train_cifar run with
# the all-reduce over TCP (DDL_SHM=0) prints one table whose rows futex, recvfrom, writev,
# sendto and write have counts above 0 for each rank, and a total; --log-dir keeps each
# rank's strace summary; a failing job still prints the table, counting the rank ddlrun
# stopped, which ends instead of outliving the job; a SIGKILLed ddlrun leaves no rank
# running (strace, killed, detaches its tracee); a failed --hosts set-up leaves no
# temporary folder; without strace on PATH the
# flag is refused (exit 2). Skipped (77) when strace is not installed.
set -uo pipefail
: "${DDLRUN:?}" "${TRAIN_CIFAR:?}"
command -v strace >/dev/null || { echo "skipped: strace is not installed"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ddlrun_syscalls.XXXXXX")
token="sleep 100.$$"  # a process of this test's own, unique by the pid
token2="sleep 101.$$"
trap 'rm -rf "$tmp"; pkill -fx "$token"; pkill -fx "$token2"' EXIT
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }
flags=(--dataset synthetic --model mlp --threads 1 --epochs 1 --batch-size 32 --train-samples 640 --test-samples 64)
# count FILE SYSCALL RANK_COLUMN: the number in that row and column of the table (commas dropped).
count() { awk -v s="$2" -v c="$3" 'f && $1 == s { gsub(",", "", $c); print $c; exit } /^ddlrun: system calls per rank/ { f = 1 }' "$1"; }

DDL_SHM=0 "$DDLRUN" --nproc 2 --syscalls --syscalls-top 40 --log-dir "$tmp/logs" "$TRAIN_CIFAR" "${flags[@]}" >"$tmp/run" 2>&1
code=$?
check "a 2-rank run with --syscalls exits 0 ($code)" "[ $code = 0 ]"
check "the table's header names both ranks" "grep -qE '^syscall +rank 0 +rank 1 +all ranks$' '$tmp/run'"
for s in futex recvfrom writev sendto write total; do
  for col in 2 3; do
    n=$(count "$tmp/run" "$s" "$col")
    check "$s: rank $((col - 2)) made ${n:-no} calls (> 0)" "[ -n '$n' ] && [ '$n' -gt 0 ]"
  done
done
check "--log-dir keeps each rank's strace summary" \
  "grep -q 'total' '$tmp/logs/rank0.strace' && grep -q 'total' '$tmp/logs/rank1.strace'"

# Rank 0 fails; rank 1, stopped by ddlrun's SIGTERM, must die of it (strace alone would
# detach it and leave it running) and still be counted.
"$DDLRUN" --nproc 2 --syscalls --syscalls-top 3 --grace 20 sh -c \
  "[ \$RANK = 0 ] && { sleep 1; exit 3; }; exec $token" >"$tmp/failed" 2>&1
code=$?
check "a failing job exits 3 ($code) and still prints the table (3 rows, others, total)" \
  "[ $code = 3 ] && grep -q '^ddlrun: system calls per rank' '$tmp/failed' && grep -qE '^\(.* others\)' '$tmp/failed'"
n=$(count "$tmp/failed" total 3)
check "the rank ddlrun stopped is counted too (total ${n:-none} > 0)" "[ -n '$n' ] && [ '$n' -gt 0 ]"
check "and it did not outlive the job (SIGTERM reached the program, not only strace)" "! pgrep -fx '$token' >/dev/null"
# ddlrun killed with SIGKILL (no clean-up): each worker, strace, dies of its PR_SET_PDEATHSIG;
# the traced program must die with strace rather than be detached and run on.
# (--log-dir: a killed ddlrun cannot remove a temporary folder of its own.)
"$DDLRUN" --nproc 2 --syscalls --log-dir "$tmp" sh -c "exec $token2" >"$tmp/killed" 2>&1 &
ddlrun_pid=$!
for _ in $(seq 100); do [ "$(pgrep -fxc "$token2")" = 2 ] && break; sleep 0.1; done
started=$(pgrep -fxc "$token2")
kill -KILL "$ddlrun_pid"
wait "$ddlrun_pid" 2>/dev/null
for _ in $(seq 50); do pgrep -fx "$token2" >/dev/null || break; sleep 0.1; done
left=$(pgrep -fxc "$token2")
check "a SIGKILLed ddlrun --syscalls leaves no rank running (started $started, left $left)" \
  "[ '$started' = 2 ] && [ '$left' = 0 ]"
# A --hosts set-up that fails (here: no --link) still removes the summaries' temporary
# folder; strace shows its name.
strace -f -e trace=mkdir -o "$tmp/mkdir" "$DDLRUN" --hosts 2 --syscalls true >"$tmp/nolink" 2>&1
code=$?
made=$(sed -n 's/.*mkdir("\(\/tmp\/ddlrun-syscalls\.[^"]*\)".*= 0$/\1/p' "$tmp/mkdir" | head -n 1)
check "a failed --hosts set-up (exit $code) leaves no ${made:-(none made?)}" \
  "[ $code = 2 ] && [ -n '$made' ] && [ ! -e '$made' ]"
PATH=/nonexistent "$DDLRUN" --nproc 2 --syscalls /bin/true >"$tmp/nostrace" 2>&1
code=$?
check "without strace on PATH: exit 2 ($code) saying so" "[ $code = 2 ] && grep -q 'needs strace' '$tmp/nostrace'"
[ "$fail" = 0 ] || cat "$tmp/run" "$tmp/failed" | grep -v batch | tail -n 40
exit $fail
