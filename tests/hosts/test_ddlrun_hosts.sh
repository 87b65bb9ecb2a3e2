#!/usr/bin/env bash
# ddlrun --hosts (docs/cluster.md) with train_cifar and an all_reduce benchmark:
#  1. on 2 and 3 emulated hosts, one rank each, every --sync strategy completes; each rank's
#     header says transport tcp without shared memory and names its host and link; bytes
#     appear on every host's own link (its /proc/net/dev); for the exact strategies every
#     rank ends with rank 0's weights (the final test loss, which each rank computes on its
#     slice with its own weights, equals that of rank 0's saved weights loaded on every
#     rank); nothing of the job remains afterwards;
#  2. 2 hosts x 2 ranks: the ranks of one host share /dev/shm and see each other's process,
#     other hosts' ranks do not; 1 host x 2 ranks: all_reduce through shared memory;
#  3. at --link 100mbit a 4 MB all_reduce takes at least S·2(n-1)/n / R and at most 1.5x that.
# Needs root; fails (never skips) without it.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/test_ddlrun_hosts_lib.sh"

# 1. Every strategy on 2 and 3 hosts.
exact=" ddp allreduce ring gather-scatter param-server "
for n in 2 3; do
  for s in ddp allreduce ring gather-scatter param-server stepwise local-sgd:1; do
    out=$tmp/$n-$s
    mkdir -p "$out"
    # shellcheck disable=SC2046
    timeout 120 "$DDLRUN" --hosts "$n" --link 1gbit --all-ranks "$TRAIN_CIFAR" $(train_flags "$n" 4) --sync "$s" \
      --metrics "$out/m.jsonl" --save "$out/w.st" >"$out/log" 2>&1
    code=$?
    job=$(job_of "$out/log")
    JOBS+=("$job")
    check "$n hosts, $s: ddlrun exits 0 ($code)" "[ $code = 0 ]"
    [ "$code" = 0 ] || { grep -v 'batch ' "$out/log" | tail -n 12; continue; }
    check "$n hosts, $s: every rank's header says tcp, shared memory not used as ranks are on different hosts" \
      "[ \$(grep -c 'transport: tcp; shared memory not used: rank 1: .*(ranks on different hosts)' '$out/log') = $n ]"
    check "$n hosts, $s: no header reads as an error (shm_open, No such file)" \
      "! grep -qE 'shared memory error|No such file' '$out/log'"
    ok=1 all_tx=0 all_sent=0
    for ((r = 0; r < n; r++)); do
      grep -q "^\[rank $r/$n\] emulated host host$r, link 1gbit" "$out/log" || ok=0
      m=$out/m.rank$r.jsonl
      tx=$(json_field "$m" net_tx_bytes) rx=$(json_field "$m" net_rx_bytes) sent=$(json_field "$m" pg_bytes_sent)
      # Every host's own link moved megabytes (stepwise's last rank only receives).
      [ $((${tx:-0} + ${rx:-0})) -gt 1000000 ] || ok=0
      all_tx=$((all_tx + ${tx:-0})) all_sent=$((all_sent + ${sent:-0}))
      echo "     rank $r: its process group sent ${sent:-?} B; host$r's eth0 sent ${tx:-?} B, received ${rx:-?} B"
    done
    # Together the links carried what the process groups sent (plus headers; a group's
    # count of one rank may differ from what Gloo's algorithm sent from that rank).
    check "$n hosts, $s: each rank names its host and link; the hosts' links carried the job's bytes" \
      "[ $ok = 1 ] && [ $all_tx -ge \$((all_sent * 95 / 100)) ]"
    if [[ "$exact" == *" $s "* ]]; then
      # Each rank scores its slice of the test set with its own weights and the sums are
      # all-reduced; the same job evaluating rank 0's saved weights on every rank must give
      # the same bits (same slices, same reduction), unless some rank's weights differ.
      # shellcheck disable=SC2046
      timeout 60 "$DDLRUN" --hosts "$n" --link 1gbit "$TRAIN_CIFAR" $(train_flags "$n" 4) --eval-only \
        --load "$out/w.st" --metrics "$out/e.jsonl" >"$out/eval" 2>&1
      want=$(json_field "$out/e.rank0.jsonl" test_loss) got=$(json_field "$out/m.rank0.jsonl" test_loss)
      check "$n hosts, $s: every rank holds rank 0's weights (test loss $got; rank 0's weights on every rank: $want)" \
        "[ -n '$want' ] && [ '$got' = '$want' ]"
    fi
    check "$n hosts, $s: nothing of job $job remains" "[ -z \"\$(leftovers '$job')\" ]"
  done
done

# 2. Two ranks per host share their host's /dev/shm and process view, and only theirs.
probe='touch /dev/shm/r$RANK; echo $$ >/dev/shm/pid$RANK; sleep 1; other=$((RANK ^ 1));
  echo "shm $(ls /dev/shm | grep "^r" | tr "\n" " ")sees $( [ -d /proc/$(cat /dev/shm/pid$other) ] && echo yes || echo no)";
  sleep 2'
timeout 60 "$DDLRUN" --hosts 2 --nproc-per-host 2 --link 1gbit --all-ranks sh -c "$probe" >"$tmp/probe" 2>&1
code=$?
check "2 hosts x 2 ranks: ddlrun exits 0 ($code)" "[ $code = 0 ]"
check "  ranks 0 and 1 share host0's /dev/shm and see each other's process" \
  "[ \$(grep -cE '^\[rank [01]/4\] shm r0 r1 sees yes' '$tmp/probe') = 2 ]"
check "  ranks 2 and 3 share host1's, and neither host sees the other's files" \
  "[ \$(grep -cE '^\[rank [23]/4\] shm r2 r3 sees yes' '$tmp/probe') = 2 ]"
check "  nothing of job $(job_of "$tmp/probe") remains" "[ -z \"\$(leftovers '$(job_of "$tmp/probe")')\" ]"
# shellcheck disable=SC2046
timeout 60 "$DDLRUN" --hosts 2 --nproc-per-host 2 --link 1gbit --all-ranks "$TRAIN_CIFAR" $(train_flags 4 2) --sync ddp \
  --trace "$tmp/2x2.json" >"$tmp/2x2" 2>&1
code=$?
check "2 hosts x 2 ranks, train_cifar ddp: exits 0 ($code), ranks 0,1 on host0 and 2,3 on host1" \
  "[ $code = 0 ] && [ \$(grep -cE '^\[rank [01]/4\] emulated host host0|^\[rank [23]/4\] emulated host host1' '$tmp/2x2') = 4 ]"
# The merged timeline names each rank's track after its emulated host (docs/trace.md).
tracks=$(python3 -c 'import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
print(";".join(sorted(e["args"]["name"] for e in ev if e.get("ph") == "M" and e.get("name") == "process_name")))' \
  "$tmp/2x2.json" 2>&1)
check "  its merged --trace has one track per rank under its host name ($tracks)" \
  "[ '$tracks' = 'rank 0 (host0);rank 1 (host0);rank 2 (host1);rank 3 (host1)' ]"
# shellcheck disable=SC2046
timeout 60 "$DDLRUN" --hosts 1 --nproc-per-host 2 --link 1gbit --all-ranks "$TRAIN_CIFAR" $(train_flags 2 2) --sync ddp \
  >"$tmp/1x2" 2>&1
code=$?
check "1 host x 2 ranks: exits 0 ($code); both headers say all_reduce through shared memory" \
  "[ $code = 0 ] && [ \$(grep -c 'all_reduce through shared memory' '$tmp/1x2') = 2 ]"

# 3. A shaped rate: a 4 MB all_reduce at 100mbit on 2 and 3 hosts.
numel=1000000
for n in 2 3; do
  timeout 120 "$DDLRUN" --hosts "$n" --link 100mbit "$DDL_BENCH" allreduce --numel $numel --iters 3 >"$tmp/bench$n" 2>&1
  ms=$(sed -n 's/.*"ms":\([0-9.]*\).*/\1/p' "$tmp/bench$n")
  bound=$(awk -v n="$n" -v e=$numel 'BEGIN { printf "%.1f", e * 4 * 8 * 2 * (n - 1) / n / 1e8 * 1000 }')
  check "$n hosts at 100mbit: all_reduce of $((numel * 4)) B takes ${ms:-?} ms, within [1, 1.5] x the bus bound $bound ms" \
    "[ -n '$ms' ] && awk 'BEGIN { exit !($ms >= $bound && $ms <= 1.5 * $bound) }'"
done
exit $fail
