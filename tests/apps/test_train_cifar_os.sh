#!/usr/bin/env bash
# The OS figures of train_cifar (Note [OS counters] in report/worker_metrics.h), suite apps:
# Two ranks under ddlrun --nproc 2 with --metrics: each rank's summary line carries
# the context switches, page faults, cgroup throttling (null outside a CPU quota) and
# the tensor allocator's bytes, with plausible values, and the per-rank table has
# their rows.
# The same on emulated hosts with a CPU quota (root): test_train_cifar_os_hosts.sh.
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

exit $fail
