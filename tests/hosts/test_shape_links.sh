#!/bin/bash
# scripts/cluster/shape_links.sh on a link of its own: two network namespaces joined by a
# veth pair made here (names carry this test's pid; removed on any exit). After shaping
# one end to 20 mbit, a TCP transfer of 5 MB across it (a python3 sender and receiver)
# runs at 70-105% of 20 Mbit/s (TCP/IP headers take ~4%; the bucket lets 64 KB through at
# once); --delay is refused, naming netem, where the kernel lacks it (applied where it has
# it); --clear removes the qdisc and the same transfer runs well above the shaped rate.
# Needs root; skips (77) without it or without ip, tc or python3.
set -u
script=$(cd "$(dirname "$0")" && pwd)/../../scripts/cluster/shape_links.sh
[ "$(id -u)" = 0 ] || { echo "skipped: needs root (network namespaces, tc)"; exit 77; }
for p in ip tc python3; do command -v "$p" >/dev/null || { echo "skipped: $p missing"; exit 77; }; done

a=ddlshape_a_$$ b=ddlshape_b_$$ va=dsa$$ vb=dsb$$
tmp=$(mktemp -d)
cleanup() {
  ip netns del "$a" 2>/dev/null  # takes its veth end, and so the pair, along
  ip netns del "$b" 2>/dev/null
  ip link del "$va" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }
"$script" --help >"$tmp/help" 2>&1
check "--help prints the usage, down to --clear, and none of the script" \
  "grep -q -- '--dev eth0 --clear' '$tmp/help' && ! grep -q 'set -euo' '$tmp/help'"

if ! { ip netns add "$a" && ip netns add "$b" && ip link add "$va" type veth peer name "$vb" &&
  ip link set "$va" netns "$a" && ip link set "$vb" netns "$b" &&
  ip -n "$a" addr add 10.233.0.1/24 dev "$va" && ip -n "$b" addr add 10.233.0.2/24 dev "$vb" &&
  ip -n "$a" link set "$va" up && ip -n "$b" link set "$vb" up && ip -n "$a" link set lo up &&
  ip -n "$b" link set lo up; } 2>"$tmp/err"; then
  echo "FAIL: cannot build the namespaces and veth pair: $(cat "$tmp/err")"
  exit 1
fi

# Receiver in b: prints the Mbit/s from its first byte to the sender's close.
receive() {
  ip netns exec "$b" timeout 60 python3 -c '
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("10.233.0.2", 5201)); s.listen(1)
open(sys.argv[1], "w").write("ready")
c, _ = s.accept()
n, t0 = 0, None
while True:
    d = c.recv(1 << 16)
    if not d: break
    if t0 is None: t0 = time.monotonic()
    n += len(d)
print("%.2f" % (n * 8 / (time.monotonic() - t0) / 1e6))' "$tmp/ready"
}
send() {  # 5 MB from a to b
  ip netns exec "$a" timeout 60 python3 -c '
import socket
c = socket.create_connection(("10.233.0.2", 5201))
c.sendall(b"x" * (5 << 20)); c.close()'
}
measure() {
  rm -f "$tmp/ready"
  receive >"$tmp/rate" &
  local r=$!
  for _ in $(seq 100); do [ -f "$tmp/ready" ] && break; sleep 0.05; done
  send
  wait "$r"
  cat "$tmp/rate"
}
within() { python3 -c 'import sys; v, lo, hi = map(float, sys.argv[1:]); sys.exit(not lo <= v <= hi)' "$@" 2>/dev/null; }

out=$(ip netns exec "$a" "$script" --dev "$va" --rate 20mbit 2>&1)
check "shaping $va to 20mbit succeeds ($out)" "[ $? = 0 ] || false"
check "tc shows a tbf at 20Mbit on $va" "ip netns exec '$a' tc qdisc show dev '$va' | grep -q 'tbf .*rate 20Mbit'"
shaped=$(measure)
check "a 5 MB transfer runs at 14-21 Mbit/s through the 20mbit link ($shaped)" "within '$shaped' 14 21"

out=$(ip netns exec "$a" "$script" --dev "$va" --rate 20mbit --delay 10ms 2>&1)
code=$?
if grep -q "netem qdisc, which this kernel does not have" <<<"$out"; then
  check "--delay is refused, naming netem, with status 2 ($code)" "[ $code = 2 ]"
  check "the refusal changed nothing: the tbf is still there" \
    "ip netns exec '$a' tc qdisc show dev '$va' | grep -q 'tbf .*rate 20Mbit'"
else
  check "--delay applied through netem where the kernel has it ($out)" \
    "[ $code = 0 ] && ip netns exec '$a' tc qdisc show dev '$va' | grep -q netem"
fi
check "a rate tc does not know is refused" "! ip netns exec '$a' '$script' --dev '$va' --rate 20mbps 2>/dev/null"

out=$(ip netns exec "$a" "$script" --dev "$va" --clear 2>&1)
check "--clear succeeds ($out)" "[ $? = 0 ] || false"
check "no tbf or netem on $va after --clear" "! ip netns exec '$a' tc qdisc show dev '$va' | grep -qE 'tbf|netem'"
check "--clear again says there is nothing to clear" \
  "ip netns exec '$a' '$script' --dev '$va' --clear | grep -q 'nothing to clear'"
free=$(measure)
check "after --clear the same transfer runs above 40 Mbit/s ($free)" "within '$free' 40 1e9"
exit $fail
