#!/usr/bin/env bash
# A cut link ends every rank in time: two emulated hosts (tests/hosts/hosts.sh) train with
# ring, then with ddp, under DDL_TIMEOUT=CUT_TIMEOUT seconds; after a few steps host 1's cable
# is pulled (the switch's port goes down, so neither side gets a reset: only the timeout
# can notice). Both ddlruns must exit non-zero within the timeout plus a margin, each
# worker must end with an error (not a crash), and each host's error must name the other
# rank. Needs root (namespaces); without it the test fails and says why.
set -uo pipefail
: "${DDLRUN:?}" "${TRAIN_CIFAR:?}"
here=$(cd "$(dirname "$0")" && pwd)
CUT_TIMEOUT=${CUT_TIMEOUT:-5}   # DDL_TIMEOUT, seconds
MARGIN=10                       # for ddlrun to stop its worker and exit

for p in "$DDLRUN" "$TRAIN_CIFAR"; do
  [ -x "$p" ] || { echo "FAIL $p is not built (ninja -C build)"; exit 1; }
done
. "$here/hosts.sh"
. "$here/link_lib.sh"
export DDL_TIMEOUT=$CUT_TIMEOUT
LINK_STEPS=100000  # until the cut
LINK_TIMEOUT=$((CUT_TIMEOUT + MARGIN + 60))
hosts_up 2 1gbit
link_snapshot "$HOSTS_DIR/bin"
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }
now() { date +%s.%N; }
for s in ring ddp; do
  out=$HOSTS_DIR/$s
  host_link 1 up
  link_start "$s" "$out" --log-every 1
  for ((t = 0; t < 600; t++)); do  # up to a minute for three steps on both hosts
    grep -q 'batch *3:' "$out/h0.log" 2>/dev/null && grep -q 'batch *3:' "$out/h1.log" 2>/dev/null && break
    sleep 0.1
  done
  check "$s: both hosts trained three steps before the cut" "grep -q 'batch *3:' '$out/h1.log'"
  host_link 1 down
  cut=$(now)
  ended=("" "")
  while [ -z "${ended[0]}" ] || [ -z "${ended[1]}" ]; do
    for i in 0 1; do
      if [ -z "${ended[$i]}" ] && ! kill -0 "${HOSTS_PIDS[$i]}" 2>/dev/null; then
        ended[$i]=$(awk -v a="$(now)" -v b="$cut" 'BEGIN { printf "%.1f", a - b }')
      fi
    done
    sleep 0.1
  done
  hosts_wait
  read -r c0 c1 <<<"$HOSTS_CODES"
  for i in 0 1; do
    peer=$((1 - i))
    code=$([ "$i" = 0 ] && echo "$c0" || echo "$c1")
    check "$s: host $i's ddlrun exited non-zero ($code) ${ended[$i]} s after the cut (limit $((CUT_TIMEOUT + MARGIN)) s)" \
      "[ '$code' != 0 ] && [ '$code' != 124 ] && awk 'BEGIN { exit !(${ended[$i]} <= $((CUT_TIMEOUT + MARGIN))) }'"
    check "$s: host $i's error names rank $peer" \
      "grep -E 'error: .*rank $peer([^/0-9]|\$)' '$out/h$i.log' >/dev/null"
    check "$s: host $i's worker ended with an error, not a crash" \
      "! grep -E 'killed by signal|double free|terminate called|Segmentation' '$out/h$i.log' >/dev/null"
  done
  [ "$fail" = 0 ] || { echo "--- $s, host 0:"; grep -v 'batch' "$out/h0.log" | tail -n 8; echo "--- host 1:"; grep -v 'batch' "$out/h1.log" | tail -n 8; }
done
exit $fail
