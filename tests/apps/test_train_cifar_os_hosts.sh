#!/usr/bin/env bash
# The OS figures of train_cifar on two emulated hosts with host0 held to 0.2 CPU (ddlrun
# --hosts --cpu; Note [OS counters] in report/worker_metrics.h): rank 0's cgroup was
# throttled, rank 1's has no quota (null), and the per-rank table shows rank 0's throttled
# time. Skipped (77) when not root or when ddlrun cannot set up a CPU quota here.
set -uo pipefail
: "${TRAIN_CIFAR:?}" "${DDLRUN:?}"
command -v python3 >/dev/null || { echo "skipped: python3 is needed to read the metrics files"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "skipped: not root (ddlrun --hosts --cpu needs namespaces and cgroups)"; exit 77; }
command -v ip >/dev/null || { echo "skipped: ip (iproute2) is not installed"; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/apps/lib.sh
. "$here/lib.sh"
# summary value: summary FILE KEY
summary() {
  python3 -c 'import json, sys
s = [json.loads(l) for l in open(sys.argv[1]) if "\"summary\"" in l][-1]
print(json.dumps(s[sys.argv[2]]))' "$@" 2>/dev/null
}

# Batches large enough that computing takes more than 0.2 CPU between the all-reduces.
timeout -s TERM 240 "$DDLRUN" --hosts 2 --link 1gbit --cpu host0=0.2 "$TRAIN_CIFAR" --dataset synthetic \
  --model mlp --train-samples 2048 --test-samples 32 --batch-size 128 --epochs 1 --threads 1 --no-progress --seed 3 \
  --metrics "$dir/h.jsonl" >"$dir/hosts.txt" 2>&1
code=$?
if ! grep -q 'host0 .*cpu 0.2 CPU via cgroup' "$dir/hosts.txt"; then
  echo "skipped: ddlrun --hosts --cpu could not set up a CPU quota here:"
  head -n 5 "$dir/hosts.txt"
  exit 77
fi
check "hosts: exit 0 ($code)" "[ $code = 0 ]"
thr=$(summary "$dir/h.rank0.jsonl" cgroup_throttled_periods) thr_s=$(summary "$dir/h.rank0.jsonl" cgroup_throttled_s)
check "hosts: rank 0 at 0.2 CPU was throttled ($thr periods, $thr_s s)" \
  "[ '$thr' -gt 0 ] 2>/dev/null && python3 -c 'import sys; sys.exit(not float(sys.argv[1]) > 0)' '$thr_s'"
check "hosts: rank 1 has no quota: throttling null" \
  "[ \"\$(summary '$dir/h.rank1.jsonl' cgroup_throttled_periods)\" = null ]"
check "hosts: the table shows rank 0's throttled time in ms" \
  "grep -A4 '^Per-rank OS figures' '$dir/hosts.txt' | grep -qE '^0 +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[1-9][0-9]* +[0-9.]+ '"
exit $fail
