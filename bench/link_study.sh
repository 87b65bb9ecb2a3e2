#!/usr/bin/env bash
# Every synchronisation strategy over emulated hosts (tests/hosts/hosts.sh: one network
# namespace per host, a bridge, tbf at RATE on both directions of every link, private
# /dev/shm so nothing bypasses the link): one rank per host trains the MLP (~6.8 MB of
# gradient) for a few steps. Prints a markdown table: step time and comm wait per step
# (slowest rank, first step excluded), the bytes each host's link sent over the run
# (namespace counters; the algorithm's figure beside them, with the initial broadcast of
# rank 0's model), and the fraction of the strategy's own least time (docs/sync.md, "On a
# real link") and of the all-reduce bus bound T* = 2(n-1)/n · S / R.
# Needs root. Usage: bench/link_study.sh [--hosts "2 3"] [--rates "100mbit 1gbit"] [--steps 6]
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
root=$PWD
host_counts="2 3" rates="100mbit 1gbit" steps=6 strategies="ddp allreduce ring gather-scatter param-server stepwise local-sgd:1"
while [ $# -gt 0 ]; do
  case "$1" in
    --hosts) host_counts=$2; shift 2 ;;
    --rates) rates=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --strategies) strategies=$2; shift 2 ;;
    *) echo "link_study: unknown flag $1"; exit 2 ;;
  esac
done
DDLRUN=$root/build/apps/ddlrun TRAIN_CIFAR=$root/build/apps/train_cifar
for p in "$DDLRUN" "$TRAIN_CIFAR"; do [ -x "$p" ] || { echo "link_study: build first ($p missing)"; exit 1; }; done
. tests/hosts/hosts.sh
. tests/hosts/link_lib.sh
LINK_STEPS=$steps
snap=$(mktemp -d)
HOSTS_EXIT_HOOK='rm -rf "$snap"'
trap "$HOSTS_EXIT_HOOK" EXIT
exec 9>/tmp/ddl-build.lock && flock 9  # copy the programs between builds, not during one
link_snapshot "$snap"
flock -u 9 && exec 9>&-
rows=()
for n in $host_counts; do
  hosts_up "$n" "${rates%% *}"
  for rate in $rates; do
    hosts_set_rate "$rate"
    for s in $strategies; do
      out=$HOSTS_DIR/$n-$rate-$s
      link_run "$s" "$out"
      if [ "$HOSTS_CODES" != "$(printf '0 %.0s' $(seq "$n") | sed 's/ $//')" ]; then
        echo "link_study: $s on $n hosts at $rate: ddlrun exited with '$HOSTS_CODES'" >&2
        tail -n 5 "$out"/h*.log >&2
        rows+=("| $s | $n | $rate | failed | | | | | |")
        continue
      fi
      r=$(python3 tests/hosts/link_stats.py --dir "$out" --strategy "$s" --hosts "$n" --rate "$rate" \
        --piece "$LINK_PIECE" --markdown)
      echo "$r" | head -1 >&2
      rows+=("$(echo "$r" | tail -1)")
    done
  done
  hosts_down
done
echo "| strategy | hosts | link | step ms | comm wait ms | MB sent per host (veth) | algorithm's MB | of its bound | of bus bound |"
echo "|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
