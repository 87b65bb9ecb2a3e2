#!/usr/bin/env bash
# Every synchronisation strategy between two emulated hosts (tests/hosts/hosts.sh: network
# namespaces, a bridge, tbf at LINK_RATE both ways, private /dev/shm): one rank per host
# trains the MLP (~6.8 MB of gradient) for a few steps. Checks that each host's header
# names the TCP transport (no shared-memory shortcut), that the bytes on each veth are the
# algorithm's (link_stats.py: within 10%, headers included), and that the comm wait per
# step reaches MIN_FRACTION of the strategy's own least time (the all-reduce bus bound
# 2(n-1)/n · S / R for ddp, allreduce, ring and local-sgd:1; the others' from the table
# in docs/sync.md, "On a real link"; see link_stats.py). Prints the measured numbers for
# every strategy before failing.
# Needs root (namespaces); without it the test fails and says why.
set -uo pipefail
: "${DDLRUN:?}" "${TRAIN_CIFAR:?}"
here=$(cd "$(dirname "$0")" && pwd)
LINK_RATE=${LINK_RATE:-100mbit}

# Thresholds: fraction of each strategy's own bound the comm wait must reach.
declare -A MIN_FRACTION=(
  [ddp]=0.70 [allreduce]=0.70 [ring]=0.70 [local-sgd:1]=0.70
  [gather-scatter]=0.70 [param-server]=0.70 [stepwise]=0.70
)
read -ra strategies <<<"${LINK_STRATEGIES:-ddp allreduce ring gather-scatter param-server stepwise local-sgd:1}"

for p in "$DDLRUN" "$TRAIN_CIFAR"; do
  [ -x "$p" ] || { echo "FAIL $p is not built (ninja -C build)"; exit 1; }
done
command -v python3 >/dev/null || { echo "FAIL python3 is needed to read the metrics"; exit 1; }
. "$here/hosts.sh"
. "$here/link_lib.sh"
hosts_up 2 "$LINK_RATE"
link_snapshot "$HOSTS_DIR/bin"
fail=0
for s in "${strategies[@]}"; do
  out=$HOSTS_DIR/$s
  link_run "$s" "$out"
  if [ "$HOSTS_CODES" != "0 0" ]; then
    echo "FAIL $s: ddlrun exited with '$HOSTS_CODES' on hosts 0 and 1"
    tail -n 15 "$out"/h*.log
    fail=1
    continue
  fi
  python3 "$here/link_stats.py" --dir "$out" --strategy "$s" --hosts 2 --rate "$LINK_RATE" --check \
    --piece "$LINK_PIECE" --min-fraction "${MIN_FRACTION[$s]}" || fail=1
done
exit $fail
