#!/usr/bin/env bash
# The OS figures of train_cifar (Note [OS counters] in report/worker_metrics.h), suite apps:
#  1. two ranks under ddlrun --nproc 2 with --metrics: each rank's summary line carries
#     the context switches, page faults, cgroup throttling (null outside a CPU quota) and
#     the tensor allocator's bytes, with plausible values, and the per-rank table has
#     their rows;
#  2. as root, on two emulated hosts with host0 held to 0.2 CPU (ddlrun --hosts --cpu):
#     rank 0's cgroup was throttled, rank 1's has no quota (null).
set -uo pipefail
: "${TRAIN_CIFAR:?}" "${DDLRUN:?}"
command -v python3 >/dev/null || { echo "python3 is needed to read the metrics files"; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
common=(--dataset synthetic --model mlp --train-samples 256 --test-samples 32 --batch-size 16 --epochs 1
        --threads 1 --no-progress --seed 3)
# summary value: summary FILE KEY
summary() {
  python3 -c 'import json, sys
s = [json.loads(l) for l in open(sys.argv[1]) if "\"summary\"" in l][-1]
print(json.dumps(s[sys.argv[2]]))' "$@" 2>/dev/null
}

"$DDLRUN" --nproc 2 "$TRAIN_CIFAR" "${common[@]}" --metrics "$dir/m.jsonl" >"$dir/two.txt" 2>&1
check "two ranks: exit 0" "[ $? -eq 0 ]"
for r in 0 1; do
  m=$dir/m.rank$r.jsonl
  vol=$(summary "$m" voluntary_ctxt_switches) invol=$(summary "$m" involuntary_ctxt_switches)
  minflt=$(summary "$m" minor_faults) majflt=$(summary "$m" major_faults)
  alloc=$(summary "$m" tensor_allocated_bytes) rsvd=$(summary "$m" tensor_reserved_bytes)
  peak=$(summary "$m" tensor_peak_allocated_bytes)
  thr=$(summary "$m" cgroup_throttled_periods) thr_s=$(summary "$m" cgroup_throttled_s)
  check "rank $r: voluntary switches > 0 ($vol; ranks wait for each other)" "[ '$vol' -gt 0 ] 2>/dev/null"
  check "rank $r: involuntary switches >= 0 ($invol)" "[ '$invol' -ge 0 ] 2>/dev/null"
  check "rank $r: minor faults > 0 ($minflt), major faults >= 0 ($majflt)" \
    "[ '$minflt' -gt 0 ] && [ '$majflt' -ge 0 ] 2>/dev/null"
  check "rank $r: tensor allocator peak >= allocated > 0, reserved >= allocated ($peak, $alloc, $rsvd)" \
    "[ '$alloc' -gt 0 ] && [ '$peak' -ge '$alloc' ] && [ '$rsvd' -ge '$alloc' ] 2>/dev/null"
  check "rank $r: throttling is both null or both numbers ($thr, $thr_s)" \
    "{ [ '$thr' = null ] && [ '$thr_s' = null ]; } || { [ '$thr' -ge 0 ] && [ '$thr_s' != null ]; } 2>/dev/null"
done
check "the per-rank table has the OS figures, a row per rank" \
  "grep -A5 '^Per-rank OS figures' '$dir/two.txt' | grep -qE '^1 +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ ' &&
   grep -q 'vol ctx sw  invol ctx sw  minor faults  major faults  throttled n  throttled ms  tensor alloc MB' '$dir/two.txt'"

if [ "$(id -u)" != 0 ]; then
  echo "skip emulated hosts with a CPU quota: not root"
else
  # Batches large enough that computing takes more than 0.2 CPU between the all-reduces.
  timeout -s TERM 240 "$DDLRUN" --hosts 2 --link 1gbit --cpu host0=0.2 "$TRAIN_CIFAR" --dataset synthetic \
    --model mlp --train-samples 2048 --test-samples 32 --batch-size 128 --epochs 1 --threads 1 --no-progress --seed 3 \
    --metrics "$dir/h.jsonl" >"$dir/hosts.txt" 2>&1
  code=$?
  if ! grep -q 'host0 .*cpu 0.2 CPU via cgroup' "$dir/hosts.txt"; then
    echo "skip emulated hosts with a CPU quota: ddlrun --hosts --cpu could not set up here"
    head -n 5 "$dir/hosts.txt"
  else
    check "hosts: exit 0 ($code)" "[ $code = 0 ]"
    thr=$(summary "$dir/h.rank0.jsonl" cgroup_throttled_periods) thr_s=$(summary "$dir/h.rank0.jsonl" cgroup_throttled_s)
    check "hosts: rank 0 at 0.2 CPU was throttled ($thr periods, $thr_s s)" \
      "[ '$thr' -gt 0 ] 2>/dev/null && python3 -c 'import sys; sys.exit(not float(sys.argv[1]) > 0)' '$thr_s'"
    check "hosts: rank 1 has no quota: throttling null" \
      "[ \"\$(summary '$dir/h.rank1.jsonl' cgroup_throttled_periods)\" = null ]"
    check "hosts: the table shows rank 0's throttled time in ms" \
      "grep -A4 '^Per-rank OS figures' '$dir/hosts.txt' | grep -qE '^0 +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[1-9][0-9]* +[0-9.]+ '"
  fi
fi
exit $fail
