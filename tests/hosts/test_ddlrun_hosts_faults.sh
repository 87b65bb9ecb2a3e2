#!/usr/bin/env bash
# ddlrun --hosts (docs/cluster.md) when things go wrong, and side by side:
#  1. a host's link cut mid-run (its switch port down) under --timeout 5 ends every rank
#     in time, each naming the peer or stopped by ddlrun, and ddlrun names host1's link;
#     ddlrun exits non-zero and nothing of the job remains (no
#     namespaces, veths, qdiscs, cgroups, holder or worker processes, /dev/shm segments);
#  2. SIGTERM to ddlrun and a failing worker clean up too; --max-restarts keeps each
#     host's identity (name, address);
#  3. two jobs at once each get their link's rate; `ddlrun --cleanup` after a SIGKILLed
#     launcher removes everything of that job and leaves a live job alone;
#  4. root without CAP_NET_ADMIN/CAP_SYS_ADMIN (setpriv, capsh): exit 2 and what is missing;
#  5. an ordinary user (nobody): rootless, in a user namespace of the job; --cpu refused
#     (exit 2); a SIGKILLed rootless launcher leaves no process behind.
# Needs root; fails (never skips) without it.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/test_ddlrun_hosts_lib.sh"
now() { date +%s.%N; }
# wait_for FILE PATTERN SECONDS: until FILE has a line matching PATTERN.
wait_for() {
  local t
  for ((t = 0; t < $3 * 10; t++)); do
    grep -qE "$2" "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}
shm_before=$(ls /dev/shm)

# 1. A cut link.
out=$tmp/cut
# shellcheck disable=SC2046
"$DDLRUN" --hosts 2 --link 1gbit --cpu host1=0.9 --timeout 5 --all-ranks "$TRAIN_CIFAR" $(train_flags 2 100000) --sync ring \
  --log-every 1 >"$out" 2>&1 &
BG_PIDS+=($!)
pid=$!
wait_for "$out" '^\[rank 1/2\].*batch *3:' 60
job=$(job_of "$out")
check "cut: both hosts trained three steps (job $job)" "grep -qE '^\[rank 1/2\].*batch *3:' '$out'"
inside=$(for h in host0 host1; do ip netns pids "$job-$h" 2>/dev/null; done | tr '\n' ' ')
check "cut: host0 and host1 hold their processes (holders, inits, workers: $inside)" "[ \$(echo $inside | wc -w) -ge 6 ]"
ip -n "$job-sw" link set h1 down
cut=$(now)
wait "$pid"
code=$?
took=$(awk -v a="$(now)" -v b="$cut" 'BEGIN { printf "%.1f", a - b }')
check "cut: ddlrun exits non-zero ($code) ${took} s after the cut (limit 5 + 10 s)" \
  "[ $code != 0 ] && awk 'BEGIN { exit !($took <= 15) }'"
# names R PEER: rank R's own error names PEER. A rank whose timeout had not yet come when the
# other failed (it was computing, or entered its receive later) is stopped by ddlrun instead,
# and the verdict says so; at least one rank times out on its own.
names() { grep -qE "^\[rank $1/2\].*error: .*rank $2([^/0-9]|\$)" "$out"; }
stopped() { grep -qE "^  rank $1 \(host$1\): .*\(stopped by ddlrun\)" "$out"; }
check "cut: rank 0's error names rank 1, or ddlrun stopped it first" "names 0 1 || stopped 0"
check "cut: rank 1's error names rank 0, or ddlrun stopped it first" "names 1 0 || stopped 1"
check "cut: a rank's own error names its peer" "names 0 1 || names 1 0"
check "cut: ddlrun says host1's link is down" \
  "grep -qE '^ddlrun: rank [01] .*host1.s link is down \(its switch port h1 is down, not by ddlrun\)' '$out'"
check "cut: nothing of the job remains: $(leftovers "$job" | tr '\n' ' ')" "[ -z \"\$(leftovers '$job')\" ]"
check "cut: none of its processes lives on ($(alive $inside))" "[ -z \"\$(alive $inside)\" ]"
check "cut: no new /dev/shm segment on the machine" \
  "[ -z \"\$(comm -13 <(echo '$shm_before') <(ls /dev/shm) | grep ddl)\" ]"

# 2. SIGTERM, a failing worker, restarts.
out=$tmp/term
"$DDLRUN" --hosts 2 --link 100mbit sleep 100 >"$out" 2>&1 &
BG_PIDS+=($!)
pid=$!
wait_for "$out" 'host1 10' 30
job=$(job_of "$out")
sleep 0.5
kill -TERM "$pid"
wait "$pid"
code=$?
check "SIGTERM: ddlrun exits 143 ($code), nothing of job $job remains" "[ $code = 143 ] && [ -z \"\$(leftovers '$job')\" ]"
out=$tmp/restart
"$DDLRUN" --hosts 2 --link 100mbit --max-restarts 1 --all-ranks sh -c \
  'echo "attempt $DDL_RESTART_COUNT: $(hostname) $(ip -br -4 addr show eth0 | tr -s " " | cut -d" " -f3)";
   [ "$DDL_RESTART_COUNT" = 1 ] || [ "$RANK" = 0 ] || { sleep 1; exit 3; }' >"$out" 2>&1
code=$?
job=$(job_of "$out")
for r in 0 1; do
  check "--max-restarts: rank $r has the same host and address in both attempts" \
    "[ \$(grep -cE '^\[rank $r/2\] attempt [01]: host$r 10\.99\.0\.$((r + 1))/24' '$out') = 2 ]"
done
check "--max-restarts: exits 0 ($code), nothing of job $job remains" "[ $code = 0 ] && [ -z \"\$(leftovers '$job')\" ]"
out=$tmp/failed
"$DDLRUN" --hosts 2 --link 100mbit sh -c '[ "$RANK" = 0 ] && sleep 100; exit 4' >"$out" 2>&1
code=$?
job=$(job_of "$out")
check "a failing worker: ddlrun exits 4 ($code) naming rank 1 on host1, nothing of job $job remains" \
  "[ $code = 4 ] && grep -q 'rank 1 (host1, local rank 0' '$out' && [ -z \"\$(leftovers '$job')\" ]"

# 3. Two jobs at once, then a SIGKILLed launcher beside a live one.
for j in a b; do
  "$DDLRUN" --hosts 2 --link 100mbit "$DDL_BENCH" allreduce --numel 1000000 --iters 3 >"$tmp/two$j" 2>&1 &
  BG_PIDS+=($!)
  eval "pid_$j=$!"
done
# shellcheck disable=SC2154
wait "$pid_a"
code_a=$?
wait "$pid_b"
code_b=$?
for j in a b; do
  ms=$(sed -n 's/.*"ms":\([0-9.]*\).*/\1/p' "$tmp/two$j")
  check "two jobs at once: job $j ($(job_of "$tmp/two$j")) all-reduces 4 MB in ${ms:-?} ms (its own 100mbit link: 320 ms, at most 1.5x)" \
    "[ -n '$ms' ] && awk 'BEGIN { exit !($ms >= 320 && $ms <= 480) }'"
done
check "two jobs at once: both exit 0 ($code_a, $code_b), different job ids, nothing remains" \
  "[ $code_a = 0 ] && [ $code_b = 0 ] && [ '$(job_of "$tmp/twoa")' != '$(job_of "$tmp/twob")' ] &&
   [ -z \"\$(leftovers '$(job_of "$tmp/twoa")')\$(leftovers '$(job_of "$tmp/twob")')\" ]"
"$DDLRUN" --hosts 2 --link 100mbit --cpu host1=0.5 sleep 100 >"$tmp/killed" 2>&1 &
BG_PIDS+=($!)
killed=$!
"$DDLRUN" --hosts 2 --link 100mbit sleep 100 >"$tmp/live" 2>&1 &
BG_PIDS+=($!)
live=$!
wait_for "$tmp/killed" 'host1 10' 30 && wait_for "$tmp/live" 'host1 10' 30
kjob=$(job_of "$tmp/killed") ljob=$(job_of "$tmp/live")
sleep 0.5
inside=$(for h in host0 host1; do ip netns pids "$kjob-$h" 2>/dev/null; done | tr '\n' ' ')
kill -KILL "$killed"
wait "$killed" 2>/dev/null
check "SIGKILL: job $kjob's namespaces, state and cgroup are left behind" "[ \$(leftovers '$kjob' | wc -l) -ge 4 ]"
"$DDLRUN" --cleanup >"$tmp/cleanup" 2>&1
code=$?
check "--cleanup: exits 0 ($code) and removes all of job $kjob" "[ $code = 0 ] && [ -z \"\$(leftovers '$kjob')\" ]"
check "--cleanup: the killed job's processes are gone ($(alive $inside))" "[ -z \"\$(alive $inside)\" ]"
check "--cleanup: the live job $ljob is untouched and says so" \
  "[ \$(leftovers '$ljob' | wc -l) -ge 3 ] && grep -q 'job $ljob is live' '$tmp/cleanup' && kill -0 $live"
kill -INT "$live"
wait "$live"
code=$?
check "SIGINT: the live job exits 130 ($code), nothing of it remains" "[ $code = 130 ] && [ -z \"\$(leftovers '$ljob')\" ]"

# 4. Without the privilege.
setpriv --inh-caps=-all --bounding-set=-net_admin,-sys_admin "$DDLRUN" --hosts 2 --link 100mbit true \
  >"$tmp/nocap" 2>&1
code=$?
check "setpriv without CAP_NET_ADMIN, CAP_SYS_ADMIN: exit 2 ($code) naming what is missing and how to get it" \
  "[ $code = 2 ] && grep -q 'needs CAP_NET_ADMIN and CAP_SYS_ADMIN' '$tmp/nocap' && grep -q 'as root' '$tmp/nocap'"
capsh --drop=cap_net_admin,cap_sys_admin -- -c "'$DDLRUN' --hosts 2 --link 100mbit true" >"$tmp/nocap2" 2>&1
code=$?
check "capsh --drop=cap_net_admin,cap_sys_admin: exit 2 ($code)" \
  "[ $code = 2 ] && grep -q 'needs CAP_NET_ADMIN and CAP_SYS_ADMIN' '$tmp/nocap2'"
# 5. Rootless, as nobody (needs unprivileged user namespaces, as on this machine).
chmod 755 "$tmp" && chmod -R a+rX "$tmp/bin"
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$@"; }
as_nobody "$DDLRUN" --hosts 2 --link 100mbit "$DDL_BENCH" allreduce --numel 1000000 --iters 3 >"$tmp/rootless" 2>&1
code=$?
ms=$(sed -n 's/.*"ms":\([0-9.]*\).*/\1/p' "$tmp/rootless")
check "rootless: exits 0 ($code), says so, all-reduces 4 MB in ${ms:-?} ms (100mbit: 320 ms, at most 1.5x)" \
  "[ $code = 0 ] && grep -q 'user namespace of this job' '$tmp/rootless' && [ -n '$ms' ] &&
   awk 'BEGIN { exit !($ms >= 320 && $ms <= 480) }'"
as_nobody "$DDLRUN" --hosts 2 --link 100mbit --cpu host1=0.5 true >"$tmp/rootless_cpu" 2>&1
code=$?
check "rootless: --cpu is refused with exit 2 ($code)" "[ $code = 2 ] && grep -q 'cpu needs root' '$tmp/rootless_cpu'"
setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$DDLRUN" --hosts 2 --link 100mbit sleep 100 \
  >"$tmp/rootless_kill" 2>&1 &  # not as_nobody: $! must be ddlrun itself (setpriv execs it)
BG_PIDS+=($!)
pid=$!
wait_for "$tmp/rootless_kill" 'host1 10' 30
before=$(pgrep -u 65534 | wc -l)
kill -KILL "$pid"
wait "$pid" 2>/dev/null
sleep 1
left=$(pgrep -u 65534 | tr '\n' ' ')
check "rootless: a SIGKILLed launcher ($before processes before) leaves none running ($(alive $left))" \
  "[ $before -ge 5 ] && [ -z \"\$(alive $left)\" ]"

[ "$fail" = 0 ] || for f in cut killed live cleanup nocap; do echo "--- $f:"; grep -v 'batch' "$tmp/$f" | tail -n 8; done
exit $fail
