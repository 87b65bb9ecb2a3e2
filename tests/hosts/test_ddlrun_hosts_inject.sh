#!/usr/bin/env bash
# Failure injection by flag (docs/cluster.md, "Failure injection"), each on real processes:
#  1. train_cifar --crash-at-step S --crash-rank 1: the job ends, ddlrun naming rank 1, its
#     host and its exit status 3;
#  2. --hang-at-step S --hang-rank 1 (the rank SIGSTOPs itself), with --hosts and without:
#     ddlrun names the stopped rank (and host), rank 0's error names rank 1 and its host's
#     address, every rank ends within --timeout plus 30 s (the hosts' set-up and the
#     start-up count too) and none lives on;
#  3. ddlrun --link-flap: a flap shorter than the timeout, in the middle of training (batch
#     lines before the link goes down and after it comes up), is logged (down, up) and the
#     job still finishes; one longer than the timeout fails, ddlrun naming the host whose
#     link is down;
#  4. ddlrun --memory host1=64M: a rank allocating 512 MiB is OOM-killed and ddlrun says so,
#     naming the rank and host1;
#  5. usage errors of the new flags. Nothing of any job remains afterwards.
# Needs root (namespaces, cgroups): skipped (77) without it; part 4 is skipped without a
# memory cgroup controller.
set -uo pipefail
[ "$(id -u)" = 0 ] || { echo "skipped: not root (ddlrun --hosts needs CAP_NET_ADMIN, CAP_SYS_ADMIN)"; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/hosts/test_ddlrun_hosts_lib.sh
. "$here/test_ddlrun_hosts_lib.sh"
now() { date +%s.%N; }
since() { awk -v a="$(now)" -v b="$1" 'BEGIN { printf "%.1f", a - b }'; }
# run NAME ARGS...: ddlrun ARGS, output in $tmp/NAME; sets code, took, job.
run() {
  local name=$1 start
  shift
  start=$(now)
  "$DDLRUN" "$@" >"$tmp/$name" 2>&1
  code=$?
  took=$(since "$start")
  job=$(job_of "$tmp/$name")
  [ -z "$job" ] || JOBS+=("$job")
}
has() { grep -qE -- "$2" "$tmp/$1"; }
flags() { train_flags 2 "$1"; }

# 1. A crash.
# shellcheck disable=SC2046
run crash --hosts 2 --link 1gbit --timeout 20 "$TRAIN_CIFAR" $(flags 40) --crash-at-step 3 --crash-rank 1
check "crash: exit status 3 ($code)" "[ $code = 3 ]"
check "crash: ddlrun names rank 1, host1 and status 3" \
  "has crash '^ddlrun: rank 1 \(host1, local rank 0, pid [0-9]+\) exited with status 3; stopping'"
check "crash: rank 1 says where it crashed" "has crash 'fault injection: rank 1 exits with status 3 at step 3'"
check "crash: nothing of job $job remains" "[ -z \"\$(leftovers '$job')\" ]"

# 2. A hang: SIGSTOP, on emulated hosts and on one machine.
# shellcheck disable=SC2046
run hang --hosts 2 --link 1gbit --timeout 4 "$TRAIN_CIFAR" $(flags 40) --hang-at-step 3 --hang-rank 1
check "hang: exits non-zero ($code) within the timeout 4 s + 30 s (${took} s)" \
  "[ $code != 0 ] && awk 'BEGIN { exit !($took <= 34) }'"
check "hang: ddlrun names the stopped rank and its host" \
  "has hang '^ddlrun: rank 1 \(host1, local rank 0, pid [0-9]+\) was stopped by SIGSTOP'"
check "hang: rank 0's error names rank 1 and its host's address" \
  "has hang '^train_cifar: error: \[rank 0/2\].*last heard from rank 1 \(host 10\.99\.0\.2\)'"
check "hang: nothing of job $job remains" "[ -z \"\$(leftovers '$job')\" ]"
# shellcheck disable=SC2046
run hang1 --nproc 2 --timeout 4 "$TRAIN_CIFAR" $(flags 40) --hang-at-step 2 --hang-rank 1
check "hang (one machine): exits non-zero ($code) within 4 s + 30 s (${took} s)" \
  "[ $code != 0 ] && awk 'BEGIN { exit !($took <= 34) }'"
check "hang (one machine): ddlrun names rank 1" "has hang1 '^ddlrun: rank 1 \(local rank 1, pid [0-9]+\) was stopped by SIGSTOP'"
check "hang (one machine): the stopped rank is gone too (SIGCONT after SIGTERM)" \
  "! pgrep -f -- '$TRAIN_CIFAR .*--hang-rank 1' >/dev/null"

# 3. Link flaps: one the job rides out, one past the timeout.
# At 4 s, after batch 0 (start-up takes ~1.5 s), and 400 steps so that training goes on after it.
# shellcheck disable=SC2046
run flap --hosts 2 --link 1gbit --timeout 15 --link-flap host1=4,1.5 "$TRAIN_CIFAR" $(flags 400)
check "flap 1.5 s < timeout 15 s: the job finishes (exit $code)" "[ $code = 0 ]"
check "flap: ddlrun logged host1's link down and up" \
  "has flap '^ddlrun: --link-flap: host1.s link down at' && has flap '^ddlrun: --link-flap: host1.s link up at'"
check "flap: the link went down during training and came up before it ended (batch lines before and after)" \
  "awk '/link-flap: host1.s link down/ { d = 1 } /link-flap: host1.s link up/ { u = d } / batch +[0-9]+:/ { if (!d) b = 1; else if (u) a = 1 } END { exit !(b && a) }' '$tmp/flap'"
check "flap: ranks trained after the flap ended (last step 399)" "has flap 'batch +399:'"
# shellcheck disable=SC2046
run flaplong --hosts 2 --link 1gbit --timeout 3 --link-flap host1=1.5,60 "$TRAIN_CIFAR" $(flags 400)
check "flap 60 s > timeout 3 s: fails (exit $code) well before the flap ends: within 3 s + 30 s (${took} s)" \
  "[ $code != 0 ] && awk 'BEGIN { exit !($took <= 33) }'"
check "flap: ddlrun's failure line names host1's link" \
  "has flaplong '^ddlrun: rank [01] \(host[01], .*host1.s link is down \(--link-flap host1=1.5,60\)'"
check "flap: nothing of job $job remains" "[ -z \"\$(leftovers '$job')\" ]"

# 4. A memory limit.
if grep -qE '^[^ ]+ [^ ]+ cgroup2? [^ ]*memory' /proc/self/mounts ||
  grep -qw memory /sys/fs/cgroup/cgroup.controllers /sys/fs/cgroup/unified/cgroup.controllers 2>/dev/null; then
  run oom --hosts 2 --link 1gbit --memory host1=64M sh -c \
    'if [ "$RANK" = 1 ]; then exec /usr/bin/python3 -c "x = b\"x\" * (512 << 20)"; fi; sleep 20'
  check "memory: exit 137 ($code), rank 1 killed by SIGKILL on host1" \
    "[ $code = 137 ] && has oom '^ddlrun: rank 1 \(host1, local rank 0, pid [0-9]+\) was killed by signal 9'"
  check "memory: ddlrun says the OOM killer did it, naming host1 and the limit" \
    "has oom 'OOM killer ended [0-9]+ process\(es\) on host1, over its --memory limit of 67108864 bytes'"
  check "memory: the limit is in the start-up lines" "has oom '^ddlrun:   host1 .*memory 67108864 bytes via cgroup'"
  check "memory: nothing of job $job remains" "[ -z \"\$(leftovers '$job')\" ]"
else
  echo "skip memory: no memory cgroup controller is mounted"
fi

# 5. Usage errors.
for bad in "--memory host1=1" "--memory host2=64M" "--memory 64M" "--link-flap host1=x" "--link-flap host1=1,0" \
  "--link-flap host3=1"; do
  # shellcheck disable=SC2086
  run usage --hosts 2 --link 1gbit $bad true
  check "usage: $bad is refused (exit $code)" "[ $code = 2 ] && has usage '^ddlrun: '"
done
run usage --nproc 2 --memory host1=64M true
check "usage: --memory without --hosts is refused (exit $code)" "[ $code = 2 ]"
# shellcheck disable=SC2046
run usage --nproc 2 "$TRAIN_CIFAR" $(flags 4) --crash-at-step 1 --crash-rank 2
check "usage: --crash-rank 2 of 2 ranks is refused by train_cifar" "[ $code != 0 ] && has usage 'must name a rank'"

[ "$fail" = 0 ] || for f in crash hang hang1 flap flaplong oom usage; do
  echo "--- $f:"
  grep -v 'batch' "$tmp/$f" 2>/dev/null | tail -n 8
done
exit "$fail"
