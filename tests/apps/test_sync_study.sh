#!/usr/bin/env bash
# sync_study end to end on tiny synthetic runs (2 workers, 4 steps of the MLP): every
# strategy runs; study.csv has one row per strategy with positive times, bytes, CPU and
# memory; the exact strategies (gather-scatter, allreduce, ddp, ring, param-server) end
# with the same training loss and move the same bytes, and every strategy the bytes its
# algorithm implies (docs/sync.md); study.md's paragraph names the fastest and by how much,
# as the CSV says; each worker's header names its transport; with --shm, all_reduce goes
# through shared memory and counts the same bytes as over TCP; --repeat runs each strategy
# again and reports ranges; --print-commands shows --cpu and --link hostI= reaching ddlrun.
set -uo pipefail
: "${SYNC_STUDY:?}"
command -v python3 >/dev/null || { echo "python3 is needed to read study.csv"; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
run=(--nproc 2 --train-samples 128 --test-samples 64 --batch-size 16)
"$SYNC_STUDY" "${run[@]}" --out "$dir/tcp" >"$dir/out.txt" 2>&1 ||
  { cat "$dir/out.txt"; for f in "$dir"/tcp/*.log; do tail -5 "$f"; done; exit 1; }
csv=$dir/tcp/study.csv
# The registered strategies (dist/sync/registry.h): every one runs by default.
"$SYNC_STUDY" --list-strategies >"$dir/list.txt" || { cat "$dir/list.txt"; exit 1; }
all=$(cut -f1 "$dir/list.txt" | tr '\n' ' ')
exact=$(awk -F'\t' '$2 == "exact" { print $1 }' "$dir/list.txt" | paste -sd'|')
check "the seven first built-in strategies are listed first, five exact ($all; $exact)" \
  "[[ '$all' == 'ddp allreduce gather-scatter ring param-server stepwise local-sgd:4 '* ]] &&
   [[ '$exact' == 'ddp|allreduce|gather-scatter|ring|param-server'* ]]"
check "zero1 and zero2 are listed as exact" "[[ '|$exact|' == *'|zero1|zero2|'* ]]"
check "fsdp is listed as exact" "[[ '|$exact|' == *'|fsdp|'* ]]"
check "async-ps:2 is listed, not exact" "[[ ' $all' == *' async-ps:2 '* ]] && [[ '|$exact|' != *'|async-ps'* ]]"
check "every listed strategy in study.csv" "[ \$(tail -n +2 '$csv' | wc -l) -eq $(echo $all | wc -w) ]"
losses=$(grep -E "^($exact)," "$csv" | cut -d, -f8 | awk '{printf "%.4f\n", $1}' | sort -u | wc -l)
check "exact strategies agree on the final training loss" "[ $losses -eq 1 ]"
# The model's size from a run's header; 128 samples / 2 workers / batch 16 = 4 steps.
params=$(grep -oE 'model mlp \([0-9]+ parameters\)' "$dir/tcp/ddp.log" | head -1 | grep -oE '[0-9]+')
check "columns, bytes per strategy (P = $params) and the fastest's margin in study.md" \
  "checks study '$dir/tcp' --nproc 2 --params '${params:-0}' --steps 4"
check "study.md says every strategy used TCP" "grep -q 'Every strategy talked over TCP' '$dir/tcp/study.md'"
# How many workers' headers in a strategy's log (DIR/<strategy>.log, both workers' output)
# name the TCP transport, and how many of those say all_reduce went through shared memory.
tcp_headers() { grep -cE '^\[rank [01]/2\] process group gloo \(transport: tcp' "$1" 2>/dev/null; }
shm_headers() {
  grep -cE '^\[rank [01]/2\] process group gloo \(transport: tcp; all_reduce through shared memory' "$1" 2>/dev/null
}
bad=""
for s in $all; do
  [ "$(tcp_headers "$dir/tcp/$s.log")" = 2 ] && [ "$(shm_headers "$dir/tcp/$s.log")" = 0 ] || bad+=" $s"
done
check "without --shm, both workers of every strategy use TCP, all_reduce included (not:$bad)" "[ -z '$bad' ]"

# --shm: all_reduce through shared memory counts the ring's bytes (docs/dist.md).
"$SYNC_STUDY" "${run[@]}" --out "$dir/shm" --shm --strategies ddp allreduce ring >"$dir/shm.txt" 2>&1
check "--shm: the study runs" "[ $? -eq 0 ]"
check "--shm: study.md says all_reduce went through shared memory" "grep -q 'shared memory (--shm)' '$dir/shm/study.md'"
bad=""
for s in ddp allreduce ring; do [ "$(shm_headers "$dir/shm/$s.log")" = 2 ] || bad+=" $s"; done
check "--shm: both workers of ddp, allreduce and ring say all_reduce went through shared memory (not:$bad)" \
  "[ -z '$bad' ]"
sent() { grep -E "^($2)," "$1" | cut -d, -f1,4; }
check "--shm: ddp, allreduce and ring send the bytes they sent over TCP" \
  "[ -n \"\$(sent '$dir/shm/study.csv' 'ddp|allreduce|ring')\" ] &&
   [ \"\$(sent '$dir/shm/study.csv' 'ddp|allreduce|ring')\" = \"\$(sent '$csv' 'ddp|allreduce|ring')\" ]"

# --repeat 2: each strategy twice, its own files per run, the CSV's ranges around the mean.
"$SYNC_STUDY" "${run[@]}" --out "$dir/rep" --repeat 2 --strategies ring param-server >"$dir/rep.txt" 2>&1
check "--repeat 2: the study runs, each run with its own log" \
  "[ $? -eq 0 ] && [ -s '$dir/rep/ring.run1.log' ] && [ -s '$dir/rep/ring.run2.log' ] && [ ! -e '$dir/rep/ring.log' ]"
check "--repeat 2: study.csv has repeats = 2 and step_ms_min <= step_ms <= step_ms_max" "python3 -c '
import csv, sys
rows = list(csv.DictReader(open(\"$dir/rep/study.csv\")))
assert len(rows) == 2 and all(r[\"repeats\"] == \"2\" for r in rows), rows
assert all(float(r[\"step_ms_min\"]) <= float(r[\"step_ms\"]) <= float(r[\"step_ms_max\"]) for r in rows), rows
# param-server: rank 0 is the hub, sending more than the mean; the ring has no hub.
ps = [r for r in rows if r[\"strategy\"] == \"param-server\"][0]
assert ps[\"sent_max_rank\"] == \"0\" and float(ps[\"sent_mb_max_rank\"]) > float(ps[\"sent_mb_per_worker\"]), ps
'"
check "--repeat 2: study.md says so and shows ranges" \
  "grep -q 'Each strategy ran 2 times' '$dir/rep/study.md' && grep -qE '^\| ring \| [0-9.]+ \([0-9.]+–[0-9.]+\) \|' '$dir/rep/study.md'"

# --print-commands: the per-host flags reach ddlrun (no root needed: nothing runs).
"$SYNC_STUDY" --hosts 3 --links 100mbit,10mbit --cpu host1=0.5 --link host2=1mbit/5ms --repeat 2 \
  --strategies ring param-server --print-commands >"$dir/cmds.txt" 2>&1
check "--print-commands: 8 runs (2 links x 2 strategies x 2 repeats), each with the straggler flags" \
  "[ \$(grep -c -- '--hosts 3 --link 100mbit --link host2=1mbit,5ms --cpu host1=0.5 ' '$dir/cmds.txt') = 4 ] &&
   [ \$(grep -c -- '--hosts 3 --link 10mbit --link host2=1mbit,5ms --cpu host1=0.5 ' '$dir/cmds.txt') = 4 ] &&
   grep -q 'ring.run2.jsonl' '$dir/cmds.txt'"
"$SYNC_STUDY" --nproc 2 --cpu host1=0.5 --print-commands >"$dir/nohosts.txt" 2>&1
check "--cpu without --hosts is refused" "[ $? -ne 0 ] && grep -q 'requires --hosts' '$dir/nohosts.txt'"
"$SYNC_STUDY" --hosts 2 --links 1gbit --cpu host2=0.5 --print-commands >"$dir/badhost.txt" 2>&1
check "--cpu naming a host that does not exist is refused" "[ $? -ne 0 ] && grep -q 'host0..host1' '$dir/badhost.txt'"
[ $fail -eq 0 ] || { cat "$csv"; cat "$dir/tcp/study.md"; grep -H 'process group' "$dir"/*/*.log; }
exit $fail
