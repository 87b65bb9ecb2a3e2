#!/usr/bin/env bash
# Stragglers named while they happen (report/straggler.h, docs/report.md "Live stragglers"),
# on emulated hosts (ddlrun --hosts, docs/cluster.md):
#  1. host2 held to 0.1 CPU: the live output names rank 2 on host2 as slowest, in the step
#     line and in the metrics' "pace" lines (written every 10 steps while the run goes on),
#     and says its time goes to compute while the others' goes to waiting for it;
#  2. host1 on a link a fifth of its peers': its link is flagged as the busy one.
# Needs root (namespaces, cgroups): skipped (77) without it.
set -uo pipefail
[ "$(id -u)" = 0 ] || { echo "skipped: not root (ddlrun --hosts needs CAP_NET_ADMIN, CAP_SYS_ADMIN)"; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
DDL_BENCH=${DDL_BENCH:-$TRAIN_CIFAR}  # the shared set-up copies a benchmark this test does not run
# shellcheck source=tests/hosts/test_ddlrun_hosts_lib.sh
. "$here/test_ddlrun_hosts_lib.sh"
py=/usr/bin/python3
# run NAME ARGS...: ddlrun ARGS, output in $tmp/NAME; sets code, job.
run() {
  local name=$1
  shift
  "$DDLRUN" "$@" >"$tmp/$name" 2>&1
  code=$?
  job=$(job_of "$tmp/$name")
  [ -z "$job" ] || JOBS+=("$job")
}
# pace FILE EXPR: EXPR (Python) over the last "pace" line of a metrics file, as `j`.
pace() {
  "$py" - "$1" "$2" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if '"event":"pace"' in l]
j = lines[-1] if lines else None
ok = j is not None and eval(sys.argv[2], {"j": j})
if not ok:
    print("   last pace line:", json.dumps(j))
sys.exit(0 if ok else 1)
PY
}
# 12 steps of batch B per rank on 3 hosts: one exchange, at the tenth step.
flags() { echo "--dataset synthetic --model mlp --threads 1 --epochs 1 --batch-size $1 --train-samples $((3 * $1 * 12))" \
  "--test-samples 64 --log-every 10 --no-progress"; }

# 1. A host held to a tenth of a CPU. Batch 256: the quota also throttles host2's share of the
# all-reduce, which counts as waiting; at batch 128 its compute (0.185 s a step) fell below
# that wait (0.200 s) once on a loaded machine, at 256 it was 0.30 s against 0.16 s there.
# shellcheck disable=SC2046
run cpu --hosts 3 --link 10gbit --cpu host2=0.1 --timeout 30 "$TRAIN_CIFAR" $(flags 256) --metrics "$tmp/cpu.jsonl"
check "cpu: the job finishes ($code)" "[ $code = 0 ]"
check "cpu: the step line names rank 2 on host2 as slowest" \
  "grep -q 'batch   10: .*; slowest rank 2 (host2): compute' '$tmp/cpu'"
check "cpu: rank 0's metrics name rank 2 on host2" \
  "pace '$tmp/cpu.rank0.jsonl' 'j[\"slowest_rank\"] == 2 and j[\"slowest_host\"] == \"host2\" and j[\"straggler\"]'"
check "cpu: rank 2's step goes to compute, the others' to waiting" \
  "pace '$tmp/cpu.rank1.jsonl' 'all((r[\"compute_s\"] > r[\"wait_s\"]) == (r[\"rank\"] == 2) for r in j[\"ranks\"])'"
check "cpu: the step metrics carry the slowest rank and host" \
  "grep -q '\"event\":\"step\".*\"slowest_host\":\"host2\",\"slowest_rank\":2' '$tmp/cpu.rank2.jsonl'"
check "cpu: no link is flagged" "pace '$tmp/cpu.rank0.jsonl' 'j[\"slow_link\"] is None'"
check "cpu: nothing of job $job remains" "[ -z \"\$(leftovers '$job')\" ]"

# 2. One slow link: every rank waits, and host1's link is the one at its limit.
# shellcheck disable=SC2046
run link --hosts 3 --link 1gbit --link host1=200mbit --timeout 20 "$TRAIN_CIFAR" $(flags 32) --metrics "$tmp/link.jsonl"
check "link: the job finishes ($code)" "[ $code = 0 ]"
check "link: the step line flags host1's link" "grep -q 'batch   10: .*; no straggler; .*; slow link rank 1 (host1) [0-9]*% busy' '$tmp/link'"
check "link: the metrics flag host1's link by its use of its capacity" \
  "pace '$tmp/link.rank2.jsonl' 'j[\"slow_link\"][\"host\"] == \"host1\" and j[\"slow_link\"][\"measure\"] == \"link_use\"'"
check "link: every rank waits more than it computes, and none is called a straggler" \
  "pace '$tmp/link.rank0.jsonl' 'all(r[\"wait_s\"] > r[\"compute_s\"] for r in j[\"ranks\"]) and not j[\"straggler\"]'"
check "link: nothing of job $job remains" "[ -z \"\$(leftovers '$job')\" ]"
[ "$fail" = 0 ] || { sed 's/^/   | /' "$tmp/cpu" "$tmp/link" | grep -E 'batch|error|ddlrun' | head -40; }
exit "$fail"
