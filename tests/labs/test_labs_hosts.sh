#!/usr/bin/env bash
# ddl-grade on emulated hosts (docs/labs/README.md, "Grading on emulated hosts"; needs
# root, exits 77 otherwise): the ring lab's reference on 3 hosts (ddlrun --hosts 3) with
# 50mbit links gets full marks, its link use check graded on a hidden case large enough
# (3.75 MB per rank per step, over 16·N token-bucket bursts) and passed, small cases
# passed as not graded; an unshaped run would move those bytes in milliseconds and fail
# it. Usage errors: a bad rate, --link without --hosts. Env: GRADE, LABS (as test_labs.sh).
set -euo pipefail
GRADE=${GRADE:?GRADE: the ddl-grade program}
LABS=${LABS:?LABS: the folder of the lab plugins}
[ "$(id -u)" = 0 ] || { echo "skipped: ddl-grade --hosts needs root"; exit 77; }
command -v ip > /dev/null || { echo "skipped: ip (iproute2) is not installed"; exit 77; }
tmp=$(mktemp -d "/tmp/ddl-labs-hosts-$$.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export DDL_TIMEOUT=120
name=labs_hosts
. "$(dirname "$0")/lib.sh"

echo "== ring reference on 3 emulated hosts at 50mbit"
printf 'ranks=3 in=700 hidden=1000 out=2 batch=1 steps=2 seed=2\n' > "$tmp/big.txt"
grade ring --lab ring --plugin "$LABS/liblab_ring_reference.so" --hosts --link 50mbit --ranks 3 \
  --hidden "$tmp/big.txt" --timeout 120 --keep
# --keep leaves the runs' folder, whatever the score: removed on every exit from here on.
runs=$(sed -n 's/^ddl-grade: the runs are in //p' "$tmp/ring.txt")
case "$runs" in /tmp/ddl-grade.*) trap 'rm -rf "$tmp" "$runs"' EXIT ;; esac
expect ring 0 "score 12/12"
expect ring 0 "3 ranks took at least 3/4 of bytes/rate at 50mbit"
expect ring 0 "not graded: no rank moves 16*N token-bucket bursts"
# The ranks really ran on separate hosts: their logs name host0..host2.
[ -n "$runs" ] && [ -d "$runs" ] || fail "ddl-grade --keep did not name its runs' folder"
for h in host0 host1 host2; do
  grep -qr "$h" "$runs/case2/logs" "$runs/case2/ddlrun.log" || fail "no log names $h"
done

echo "== usage errors"
grade badrate --lab ring --plugin "$LABS/liblab_ring_reference.so" --hosts --link 50mbps
expect badrate 2 "give a rate in tc's units"
grade nohosts --lab ring --plugin "$LABS/liblab_ring_reference.so" --link 50mbit
[ "$rc" != 0 ] && grep -qF -- "--link requires --hosts" "$tmp/nohosts.txt" || fail "--link without --hosts was accepted"
echo "labs_hosts: ok"
