# shellcheck shell=bash disable=SC2034  # sourced: its variables are for the caller
# train_cifar on emulated hosts (sourced after hosts.sh, with DDLRUN and TRAIN_CIFAR set).
# link_run STRATEGY OUT [train_cifar flags...]: one rank on each of the HOSTS_N hosts, under
# ddlrun --nnodes HOSTS_N, LINK_STEPS steps of the MLP (~6.8 MB of gradient) on synthetic
# data; leaves in OUT what tests/hosts/link_stats.py reads (h<i>.log, m<i>.rank<i>.jsonl,
# bytes<i>); the ddlrun exit statuses in HOSTS_CODES ("0 0"). A run longer than LINK_TIMEOUT
# seconds is stopped (ddlrun forwards the SIGTERM to its worker).
LINK_STEPS=${LINK_STEPS:-6}
LINK_TIMEOUT=${LINK_TIMEOUT:-120}
LINK_BATCH=32
LINK_PIECE=$((1 << 20))  # gather-scatter's unit: a gradient travels in 1 MiB pieces (dist/sync/gather_scatter.cpp)
link_port=29500  # a fresh store port per run (the last run's may linger in TIME_WAIT)

# link_snapshot DIR: copies DDLRUN, TRAIN_CIFAR and the libddl.so beside them (RUNPATH
# $ORIGIN/..) into DIR and points DDLRUN and TRAIN_CIFAR there, so a rebuild of build/
# during the runs cannot pull the programs from under them.
link_snapshot() {
  local dir=$1 lib
  lib=$(dirname "$TRAIN_CIFAR")/../libddl.so
  mkdir -p "$dir/apps" && cp "$DDLRUN" "$TRAIN_CIFAR" "$dir/apps/" && cp "$lib" "$dir/" ||
    { echo "FAIL cannot copy $DDLRUN, $TRAIN_CIFAR and $lib to $dir"; exit 1; }
  DDLRUN=$dir/apps/$(basename "$DDLRUN") TRAIN_CIFAR=$dir/apps/$(basename "$TRAIN_CIFAR")
}

link_run() {
  local i
  link_start "$@"
  hosts_wait
  for ((i = 0; i < HOSTS_N; i++)); do host_bytes "$i" >>"$2/bytes$i"; done
}

# link_start STRATEGY OUT [flags...]: link_run's first half; the ranks run on in the
# background (their pids in HOSTS_PIDS) until hosts_wait.
link_start() {
  local strategy=$1 out=$2 i n=$HOSTS_N
  shift 2
  mkdir -p "$out"
  link_port=$((link_port + 1))
  for ((i = 0; i < n; i++)); do host_bytes "$i" >"$out/bytes$i"; done
  for ((i = 0; i < n; i++)); do
    host_spawn "$i" "$out/h$i.log" env DDL_GLOO_IFACE="$HOSTS_IFACE" DDL_JOB_TOKEN="job-$HOSTS_JOB-$link_port" \
      timeout "$LINK_TIMEOUT" "$DDLRUN" --nnodes "$n" --node-rank "$i" --master-addr "$(host_addr 0)" \
      --master-port "$link_port" --nproc 1 --all-ranks --args-may-differ \
      "$TRAIN_CIFAR" --dataset synthetic --model mlp --threads 1 --epochs 1 --batch-size "$LINK_BATCH" \
      --train-samples $((n * LINK_BATCH * LINK_STEPS)) --test-samples 32 --sync "$strategy" \
      --metrics "$out/m$i.jsonl" "$@"
  done
}
