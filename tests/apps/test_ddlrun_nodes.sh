#!/usr/bin/env bash
# ddlrun across nodes (two launchers on loopback stand in for two machines):
#  1. flags ddlrun does not know, before the program, are usage errors (exit 2) with a hint,
#     torchrun's underscored spellings of ddlrun's own flags are accepted;
#  2. a hostfile with uneven slots (2 + 1) trains to the weights of 3 ranks on one node, and
#     so does -H host:slots,...;
#  3. a node whose program arguments differ is refused at the nodes' rendezvous, on both
#     nodes, naming the node, its host and the argument.
set -uo pipefail
: "${TRAIN_CIFAR:?}" "${DDLRUN:?}"
dir=$(mktemp -d /tmp/ddl_ddlrun_nodes.$$.XXXXXX)
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }
free_port() { /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("", 0)); print(s.getsockname()[1])'; }

# 1. Flags.
usage() {  # usage NAME EXPECTED_TEXT ARGS...: ddlrun ARGS exits 2 saying EXPECTED_TEXT
  local name=$1 text=$2
  shift 2
  timeout 10 "$DDLRUN" "$@" >"$dir/usage.txt" 2>&1
  local rc=$?
  check "$name: exit 2 ($rc), '$text'" "[ $rc -eq 2 ] && grep -qF -- '$text' $dir/usage.txt"
}
usage "an unknown flag" "unknown flag --bogus before the program" --nproc 1 --bogus true
usage "torchrun's --rdzv_backend" "way: --master-addr and --master-port" --nproc 2 --rdzv_backend c10d true
usage "--hostfile without its file" "--hostfile $dir/none: cannot read it" --hostfile "$dir/none" true
printf 'a slots=2\nb slots=x\n' >"$dir/bad"
usage "a hostfile's bad slots" "line 2: slots" --hostfile "$dir/bad" --node-rank 0 true
usage "a hostfile without this machine" "this machine is none of its hosts; give --node-rank" -H nosuch1:1,nosuch2:1 true
timeout 10 "$DDLRUN" --nproc_per_node 1 --max_restarts 0 true >"$dir/alias.txt" 2>&1
check "torchrun's --nproc_per_node and --max_restarts are ddlrun's --nproc and --max-restarts" "[ $? -eq 0 ]"

# 2. Uneven nodes.
common=(--dataset synthetic --model mlp --train-samples 96 --test-samples 32 --batch-size 16 --lr 0.05 --threads 1
        --loader-workers 1 --no-progress --seed 5 --epochs 1)
timeout 60 "$DDLRUN" --nproc 3 "$TRAIN_CIFAR" "${common[@]}" --save "$dir/one.safetensors" >"$dir/one.txt" 2>&1
check "3 ranks on one node train" "[ $? -eq 0 ] && [ -s $dir/one.safetensors ]"
# nodes NAME LAUNCHER_FLAGS_NODE0 -- LAUNCHER_FLAGS_NODE1 -- PROGRAM_ARGS_NODE1...: both nodes, one token.
nodes() {
  local name=$1 f0=() f1=()
  shift
  while [ "$1" != "--" ]; do f0+=("$1"); shift; done
  shift
  while [ "$1" != "--" ]; do f1+=("$1"); shift; done
  shift
  local port
  port=$(free_port)
  DDL_JOB_TOKEN=nodes-test-$$ timeout 60 "$DDLRUN" "${f0[@]}" --node-rank 0 --master-port "$port" --timeout 20 \
    "$TRAIN_CIFAR" "${common[@]}" --save "$dir/$name.safetensors" >"$dir/$name.0" 2>&1 &
  local p0=$!
  DDL_JOB_TOKEN=nodes-test-$$ timeout 60 "$DDLRUN" "${f1[@]}" --node-rank 1 --master-port "$port" --timeout 20 \
    "$TRAIN_CIFAR" "${common[@]}" --save "$dir/$name.safetensors" "$@" >"$dir/$name.1" 2>&1 &
  local p1=$!
  pids+=("$p0" "$p1")
  wait "$p0"
  echo $? >"$dir/$name.0.rc"
  wait "$p1"
  echo $? >"$dir/$name.1.rc"
}
printf '# two nodes of one machine\n127.0.0.1 slots=2\n127.0.0.1 slots=1 max_slots=4\n' >"$dir/hostfile"
nodes hostfile --hostfile "$dir/hostfile" -- --hostfile "$dir/hostfile" --
check "2 + 1 from a hostfile: both nodes exit 0" "[ \$(cat $dir/hostfile.0.rc) -eq 0 ] && [ \$(cat $dir/hostfile.1.rc) -eq 0 ]"
check "2 + 1 from a hostfile ends with the weights of 3 ranks on one node" \
  "cmp -s $dir/one.safetensors $dir/hostfile.safetensors"
nodes hostlist -H 127.0.0.1:2,127.0.0.1:1 -- -H 127.0.0.1:2,127.0.0.1:1 --
check "2 + 1 from -H ends with the same weights" \
  "[ \$(cat $dir/hostlist.1.rc) -eq 0 ] && cmp -s $dir/one.safetensors $dir/hostlist.safetensors"
# --nproc on each node, no hostfile: the counts come from the nodes' rendezvous.
nodes nproc --nnodes 2 --nproc 2 --master-addr 127.0.0.1 -- --nnodes 2 --nproc 1 --master-addr 127.0.0.1 --
check "--nproc 2 on node 0 and --nproc 1 on node 1 end with the same weights" \
  "[ \$(cat $dir/nproc.1.rc) -eq 0 ] && cmp -s $dir/one.safetensors $dir/nproc.safetensors"

# 3. Node 1 trains with another learning rate: refused on both nodes, at once.
start=$(date +%s)
nodes differ -H 127.0.0.1:1,127.0.0.1:1 -- -H 127.0.0.1:1,127.0.0.1:1 -- --lr 0.1
took=$(($(date +%s) - start))
grep -h 'differs' "$dir/differ.0" | cut -c1-400 | sed 's/^/  node 0: /'
check "a node with other arguments: both nodes exit 2 within 10 s (${took} s)" \
  "[ \$(cat $dir/differ.0.rc) -eq 2 ] && [ \$(cat $dir/differ.1.rc) -eq 2 ] && [ $took -lt 10 ]"
for n in 0 1; do
  check "node $n names node 1, its host and the argument" \
    "grep -q \"node 1 (host $(hostname)) differs from node 0\" $dir/differ.$n && grep -q -- '--lr 0.1' $dir/differ.$n"
done
check "no rank started" "! grep -q 'epoch 1' $dir/differ.0 $dir/differ.1"
exit $fail
