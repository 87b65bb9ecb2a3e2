#!/bin/bash
# Shapes a real host's network interface as ddlrun --hosts shapes an emulated host's link
# (docs/cluster.md): a tbf qdisc at the root of DEV's egress, rate RATE, burst 64 KB or
# RATE/250 (whichever is larger), latency 50 ms, so a real cluster can run at a chosen
# link rate. Egress only: shape both ends of a link (run it on every node) for both
# directions. Delay and loss need the kernel's netem qdisc; where it is missing they are
# refused, saying so, and nothing is changed. Needs CAP_NET_ADMIN (root). See tc-tbf(8),
# tc-netem(8).
#
#   shape_links.sh --dev eth0 --rate 100mbit              # shape
#   shape_links.sh --dev eth0 --rate 1gbit --delay 1ms     # with netem, where the kernel has it
#   shape_links.sh --dev eth0 --show                       # what is on it
#   shape_links.sh --dev eth0 --clear                      # back to the default qdisc
set -euo pipefail

usage() {
  sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
  exit "${1:-0}"
}
die() {
  echo "shape_links: $*" >&2
  exit 2
}

dev= rate= delay= loss= clear=0 show=0 burst= latency=50ms
while [ $# -gt 0 ]; do
  case "$1" in
    --dev) dev=${2:-}; shift 2 || die "--dev needs an interface" ;;
    --rate) rate=${2:-}; shift 2 || die "--rate needs a rate (e.g. 100mbit)" ;;
    --burst) burst=${2:-}; shift 2 || die "--burst needs a size in bytes" ;;
    --latency) latency=${2:-}; shift 2 || die "--latency needs a time (e.g. 50ms)" ;;
    --delay) delay=${2:-}; shift 2 || die "--delay needs a time (e.g. 10ms)" ;;
    --loss) loss=${2:-}; shift 2 || die "--loss needs a percentage (e.g. 1%)" ;;
    --clear) clear=1; shift ;;
    --show) show=1; shift ;;
    -h | --help) usage 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
[ -n "$dev" ] || die "--dev DEV is required (see --help)"
command -v tc >/dev/null || die "tc is not installed (Debian: iproute2)"
ip link show dev "$dev" >/dev/null 2>&1 || die "no interface '$dev' here ($(ls /sys/class/net | tr '\n' ' '))"

if [ "$show" = 1 ]; then
  tc qdisc show dev "$dev"
  exit 0
fi
if [ "$clear" = 1 ]; then
  [ -z "$rate$delay$loss" ] || die "--clear takes no --rate, --delay or --loss"
  if out=$(tc qdisc del dev "$dev" root 2>&1); then
    echo "shape_links: $dev: shaping removed (default qdisc again)"
  elif grep -qiE "handle of zero|no such file|invalid handle" <<<"$out"; then
    echo "shape_links: $dev: nothing to clear (no root qdisc of ours)"
  else
    die "$dev: tc qdisc del failed: $out"
  fi
  exit 0
fi

[ -n "$rate" ] || die "--rate RATE is required to shape (e.g. 100mbit; or --clear, --show)"
# Rates as tc writes them: a number and bit, kbit, mbit or gbit (SI: 1mbit = 10^6 bit/s).
[[ "$rate" =~ ^([0-9]+)(bit|kbit|mbit|gbit)$ ]] || die "rate '$rate': expected <number>bit|kbit|mbit|gbit, e.g. 100mbit"
case "${BASH_REMATCH[2]}" in
  bit) mult=1 ;; kbit) mult=1000 ;; mbit) mult=1000000 ;; gbit) mult=1000000000 ;;
esac
bits=$((BASH_REMATCH[1] * mult))
[ "$bits" -gt 0 ] || die "rate '$rate' must be positive"
# ddlrun's burst (cluster/network.cpp): a bucket of 64 KB holds a few full-size
# TCP segments; at high rates tbf needs rate/HZ at least, and rate/250 covers HZ=250.
[ -n "$burst" ] || burst=$(((bits / 8 / 250) > 65536 ? bits / 8 / 250 : 65536))

if [ -n "$delay$loss" ]; then
  # netem shapes the rate itself (its `rate` option) along with delay and loss.
  args=(netem)
  [ -n "$delay" ] && args+=(delay "$delay")
  [ -n "$loss" ] && args+=(loss "$loss")
  args+=(rate "$rate")
  if ! out=$(tc qdisc replace dev "$dev" root "${args[@]}" 2>&1); then
    if grep -qi "unknown" <<<"$out"; then
      die "--delay/--loss need the netem qdisc, which this kernel does not have ('$out'); nothing was changed." \
        "Shape the rate alone (--rate), or load sch_netem where the kernel ships it"
    fi
    die "$dev: tc qdisc replace ... netem failed: $out"
  fi
  echo "shape_links: $dev: netem ${delay:+delay $delay }${loss:+loss $loss }rate $rate (egress)"
  exit 0
fi
if ! out=$(tc qdisc replace dev "$dev" root handle 1: tbf rate "$rate" burst "$burst" latency "$latency" 2>&1); then
  die "$dev: tc qdisc replace ... tbf failed: $out"
fi
echo "shape_links: $dev: tbf rate $rate burst $burst latency $latency (egress; shape the other end too)"
