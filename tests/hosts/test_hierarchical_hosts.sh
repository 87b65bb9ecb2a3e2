#!/usr/bin/env bash
# The hierarchical all-reduce (DDL_HIERARCHICAL=1, docs/dist.md) on 2 emulated hosts x 2 ranks
# at 100mbit (ddlrun --hosts; needs root, skipped otherwise): the all-reduce of integer-valued
# floats equals the closed form (the flat all-reduce's exact result), and each host's link sends
# the bytes of one rank per host, 2(H-1)/H · 4n = 4n (within 15% for TCP/IP headers and acks),
# where the flat ring of the same job sends 1.5 times that; the same with hosts of 2 and 1
# ranks (-H host0:2,host1:1). Times are printed, not checked.
set -uo pipefail
: "${DDLRUN:?}" "${DDL_TEST_HELPERS:?}"
[ "$(id -u)" = 0 ] || { echo "skipped: ddlrun --hosts needs root"; exit 77; }
command -v ip >/dev/null || { echo "skipped: ip (iproute2) is not installed"; exit 77; }
helper=$DDL_TEST_HELPERS/ddl_helper_hier_allreduce
[ -x "$helper" ] || { echo "FAIL $helper is not built"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hier_hosts.$$.XXXXXX")
jobs=()
cleanup() {
  local j
  for j in "${jobs[@]}"; do
    ip netns list 2>/dev/null | awk -v j="$j-" 'index($1, j) == 1 { print $1 }' | xargs -r -n1 ip netns delete 2>/dev/null
  done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }

n=1000000
want=$((4 * n))  # 2(H-1)/H · 4n bytes at H = 2
for mode in 1 0; do
  log=$tmp/h$mode.log
  DDL_HIERARCHICAL=$mode timeout 120 "$DDLRUN" --hosts 2 --nproc-per-host 2 --link 100mbit --all-ranks \
    "$helper" "$n" 2 >"$log" 2>&1
  code=$?
  jobs+=("$(sed -n 's/^ddlrun: job \([^:]*\):.*/\1/p' "$log" | head -n 1)")
  check "DDL_HIERARCHICAL=$mode: ddlrun exits 0 ($code) and the sum is exact" \
    "[ $code = 0 ] && grep -q 'sum ok' '$log'"
  [ $code = 0 ] || tail -n 20 "$log"
  grep -E 'group:|median' "$log" | sed 's/^/     /'
  tx=$(sed -n 's/.*host_tx_bytes \([0-9]*\).*/\1/p' "$log" | tr '\n' ' ')
  echo "     bytes sent per host link: $tx(one rank per host: $want)"
  check "DDL_HIERARCHICAL=$mode: one count per host" "[ \$(echo '$tx' | wc -w) = 2 ]"
  for b in $tx; do
    if [ $mode = 1 ]; then
      check "hierarchical: a host's link sent $b B, within [1, 1.15] x $want" \
        "[ $b -ge $want ] && [ $b -le $((want * 115 / 100)) ]"
    else
      check "flat: a host's link sent $b B, at least 1.4 x $want (the ring crosses it with two ranks' shares)" \
        "[ $b -ge $((want * 14 / 10)) ]"
    fi
  done
  [ $mode = 1 ] && check "hierarchical: the group says so" "grep -q 'group: hierarchical: 2 hosts x 2 ranks' '$log'"
done
# Hosts of different sizes: host1's one rank owns both slices and runs both cross-host rings,
# so each link still sends 4n.
log=$tmp/uneven.log
DDL_HIERARCHICAL=1 timeout 120 "$DDLRUN" --hosts 2 -H host0:2,host1:1 --link 100mbit --all-ranks \
  "$helper" "$n" 1 >"$log" 2>&1
code=$?
jobs+=("$(sed -n 's/^ddlrun: job \([^:]*\):.*/\1/p' "$log" | head -n 1)")
check "-H host0:2,host1:1: ddlrun exits 0 ($code), the sum is exact, the group is hierarchical" \
  "[ $code = 0 ] && grep -q 'sum ok' '$log' && grep -q 'group: hierarchical: 2 hosts of 2+1 ranks' '$log'"
[ $code = 0 ] || tail -n 20 "$log"
tx=$(sed -n 's/.*host_tx_bytes \([0-9]*\).*/\1/p' "$log" | tr '\n' ' ')
echo "     bytes sent per host link: $tx(one rank per host: $want)"
check "-H host0:2,host1:1: one count per host" "[ \$(echo '$tx' | wc -w) = 2 ]"
for b in $tx; do
  check "-H host0:2,host1:1: a host's link sent $b B, within [1, 1.15] x $want" \
    "[ $b -ge $want ] && [ $b -le $((want * 115 / 100)) ]"
done
left=""
for j in "${jobs[@]}"; do left+=$(ip netns list | awk -v j="$j-" 'index($1, j) == 1 {printf "%s ", $1}'); done
check "no network namespace of these jobs left behind (${left:-none})" "[ -z '$left' ]"
exit $fail
