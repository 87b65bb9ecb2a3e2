#!/usr/bin/env bash
# End-to-end checks of what train_cifar prints and records (suite "apps"), alone and as
# two ranks under ddlrun, on tiny synthetic runs of the MLP:
#  1. the classification report and confusion matrix agree with each other and with
#     --test-samples (check_outputs.py report), and only rank 0 prints them;
#  2. the per-rank tables have a row per rank (and bytes for each rank of a group);
#  3. --metrics: step, epoch, eval and summary lines with the documented keys, one step
#     line per batch of the header's count, per-op byte counters adding up to the total;
#  4. every rank logs with its prefix, every --log-every N batches and the last;
#  5. the header names the transport; the shared-memory all_reduce counts the same bytes
#     as Gloo's TCP ring, which the loopback counter sees;
#  6. the strategy's counted bytes are its formula's exactly (2(N-1)/N * 4P per step),
#     with evaluation and the report's exchanges on the control group.
set -uo pipefail
: "${TRAIN_CIFAR:?}" "${DDLRUN:?}"
command -v python3 >/dev/null || { echo "python3 is needed to read the metrics files"; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
common=(--dataset synthetic --model mlp --train-samples 192 --test-samples 64 --batch-size 16 --epochs 2
        --threads 1 --loader-workers 1 --log-every 4 --no-progress --seed 5)
batches() { grep -oE '[0-9]+ batches per epoch' "$1" | head -1 | cut -d' ' -f1; }
# summary value: json_get FILE KEY [SUBKEY...]
json_get() {
  python3 -c 'import json, sys
s = [json.loads(l) for l in open(sys.argv[1]) if "\"summary\"" in l][-1]
for k in sys.argv[2:]: s = s[k]
print(s)' "$@"
}

# 1-4, one process: 12 batches per epoch.
"$TRAIN_CIFAR" "${common[@]}" --metrics "$dir/one.jsonl" >"$dir/one.txt" 2>&1
check "one process: exit 0" "[ $? -eq 0 ]"
b=$(batches "$dir/one.txt")
check "one process: the header says world size 1, sync none, 12 batches per epoch" \
  "grep -q 'world size 1, sync none, .* 12 batches per epoch' '$dir/one.txt'"
check "one process: report and confusion matrix consistent, 64 images" "checks report '$dir/one.txt' --images 64"
check "one process: the per-rank tables have rank 0's row, without pg bytes" "checks ranks '$dir/one.txt' --world 1 --bytes"
check "one process: metrics lines and keys, $b step lines per epoch" \
  "checks metrics '$dir/one.jsonl' --batches ${b:-0} --epochs 2 --evals 0,1"
check "one process: the printed step lines agree with the metrics" "checks steplog '$dir/one.txt' '$dir/one.jsonl'"
# --log-every 4 over 12 batches: batches 0, 4, 8 and the last, 11.
check "--log-every 4: batches 0 4 8 11 of each epoch are printed" \
  "[ \"\$(grep -oE 'epoch [12] batch +[0-9]+:' '$dir/one.txt' | tr -s ' ' | tr '\n' ,)\" = \
'epoch 1 batch 0:,epoch 1 batch 4:,epoch 1 batch 8:,epoch 1 batch 11:,epoch 2 batch 0:,epoch 2 batch 4:,epoch 2 batch 8:,epoch 2 batch 11:,' ]"
check "one process: no process group line" "! grep -q 'process group' '$dir/one.txt'"

# 1-5, two ranks (ddp), all_reduce through shared memory (the default on one host).
"$DDLRUN" --nproc 2 --all-ranks "$TRAIN_CIFAR" "${common[@]}" --metrics "$dir/two.jsonl" >"$dir/two.txt" 2>&1
check "two ranks: exit 0" "[ $? -eq 0 ]"
b=$(batches "$dir/two.txt")
check "two ranks: each rank's header says world size 2, 6 batches per epoch" \
  "[ \$(grep -cE '^\[rank [01]/2\] model .*world size 2, sync ddp, .* 6 batches per epoch' '$dir/two.txt') -eq 2 ]"
check "two ranks: report and matrix consistent over both shards, printed once" \
  "checks report '$dir/two.txt' --images 64 && [ \$(grep -c 'confusion matrix' '$dir/two.txt') -eq 1 ]"
check "two ranks: the per-rank tables have rows 0, 1 and mean, with bytes" "checks ranks '$dir/two.txt' --world 2 --bytes"
for r in 0 1; do
  check "rank $r: metrics lines and keys, $b step lines per epoch, per-op byte counters" \
    "checks metrics '$dir/two.rank$r.jsonl' --rank $r --world 2 --batches ${b:-0} --epochs 2 --evals 0,1 --per-op"
  check "rank $r: prints batches 0 4 and 5 of each epoch with its prefix" \
    "[ \"\$(grep -oE '^\[rank $r/2\] epoch [12] batch +[0-9]+:' '$dir/two.txt' | grep -oE '[0-9]+:' | tr '\n' ,)\" = '0:,4:,5:,0:,4:,5:,' ]"
done
check "two ranks: every line carries a rank prefix" "! grep -qvE '^\[rank [01]/2\]' '$dir/two.txt'"
check "two ranks: what rank 0 sent, rank 1 received, and back" \
  "[ \"\$(json_get '$dir/two.rank0.jsonl' pg_bytes_sent)\" = \"\$(json_get '$dir/two.rank1.jsonl' pg_bytes_received)\" ] &&
   [ \"\$(json_get '$dir/two.rank1.jsonl' pg_bytes_sent)\" = \"\$(json_get '$dir/two.rank0.jsonl' pg_bytes_received)\" ]"
# The training group carries the strategy's traffic only (run_report.h, Note [Control group]):
# with evaluation every epoch and the report's exchanges on, ddp's all_reduce bytes are the
# ring all-reduce's 2(N-1)/N * 4P per step exactly, and its one broadcast rank 0's 4P weights.
params=$(grep -oE 'model mlp \([0-9]+ parameters\)' "$dir/two.txt" | head -1 | grep -oE '[0-9]+')
for r in 0 1; do
  check "rank $r: the strategy's all_reduce bytes are 2(N-1)/N * 4P per step, evaluation and reporting apart" "python3 -c '
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
steps = sum(1 for l in lines if l.get(\"event\") == \"step\")
s = [l for l in lines if \"pg_ops\" in l][-1]
n, p = 2, int(sys.argv[2])
want = steps * 2 * (n - 1) * 4 * p // n
got = s[\"pg_ops\"][\"all_reduce\"][\"bytes_sent\"]
b = s[\"pg_ops\"][\"broadcast\"][\"bytes_sent\"]
ok = steps == 12 and got == want and b == (4 * p if sys.argv[3] == \"0\" else 0)
ok = ok and s[\"slowest_rank_exchange\"][\"calls\"] > 0
print(\"%d steps, all_reduce %d B (want %d), broadcast %d B\" % (steps, got, want, b))
sys.exit(0 if ok else 1)' '$dir/two.rank$r.jsonl' '${params:-0}' $r"
done
ar=$(json_get "$dir/two.rank0.jsonl" pg_ops all_reduce bytes_sent 2>/dev/null)
check "two ranks: the printed all_reduce counter is the metrics' ($ar bytes)" \
  "grep -qE \"^\[rank 0/2\] +all_reduce: [0-9]+ calls, sent \$(python3 -c 'print(\"%.3f\" % ($ar / 1e6))') MB\" '$dir/two.txt'"
check "two ranks: each rank names the transport (tcp; all_reduce through shared memory)" \
  "[ \$(grep -cE '^\[rank [01]/2\] process group gloo \(transport: tcp; all_reduce through shared memory' '$dir/two.txt') -eq 2 ]"

# 5. The same run with DDL_SHM=0: all_reduce over Gloo's TCP ring, same byte counts.
DDL_SHM=0 "$DDLRUN" --nproc 2 --all-ranks "$TRAIN_CIFAR" "${common[@]}" --metrics "$dir/tcp.jsonl" >"$dir/tcp.txt" 2>&1
check "DDL_SHM=0: each rank's header says tcp, shared memory not used because DDL_SHM=0 (not an error)" \
  "[ \$(grep -cE '^\[rank [01]/2\] process group gloo \(transport: tcp; shared memory not used: rank 0: disabled \(DDL_SHM=0\)' '$dir/tcp.txt') -eq 2 ]"
check "DDL_SHM=0: all_reduce bytes equal those counted through shared memory" \
  "[ -n '$ar' ] && [ \"\$(json_get '$dir/tcp.rank0.jsonl' pg_ops all_reduce bytes_sent)\" = '$ar' ]"
check "DDL_SHM=0: same losses as through shared memory" \
  "diff <(grep -o '\"loss\":[^,]*' '$dir/two.rank0.jsonl') <(grep -o '\"loss\":[^,]*' '$dir/tcp.rank0.jsonl') >/dev/null"
# Host-wide loopback counters include others' traffic: only a lower bound.
check "DDL_SHM=0: loopback carried at least the bytes both ranks sent" "python3 -c '
import json, sys
s = [[json.loads(l) for l in open(\"$dir/tcp.rank%d.jsonl\" % r) if \"summary\" in l][-1] for r in (0, 1)]
sent = s[0][\"pg_bytes_sent\"] + s[1][\"pg_bytes_sent\"]
print(\"  lo tx\", s[0][\"lo_tx_bytes\"], \"pg sent\", sent)
sys.exit(not s[0][\"lo_tx_bytes\"] >= 0.99 * sent)'"

[ $fail -eq 0 ] || { for f in "$dir"/*.txt; do echo "== $f"; tail -5 "$f"; done; }
exit $fail
