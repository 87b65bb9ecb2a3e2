#!/usr/bin/env bash
# torchrun --rdzv_backend c10d across two "nodes" (network namespaces joined by a veth pair,
# each with its own host name), nobody setting DDL_JOB_TOKEN: rank 0 serves ddl's store on
# its node's address, beyond loopback, so it needs a token, and the ranks take it through
# torchrun's own rendezvous store (Note [Tokens under torchrun] in
# dist/launch/torchrun_token.cpp). The job trains to the weights of a 2-rank ddlrun run.
# Needs root, iproute2 and Debian's torchrun: exit 77 without them.
set -uo pipefail
: "${TRAIN_CIFAR:?}" "${DDLRUN:?}"
TORCHRUN=/usr/bin/torchrun
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root (network namespaces)"; exit 77; }
command -v ip >/dev/null || { echo "SKIP: ip (iproute2) is not installed"; exit 77; }
[ -x "$TORCHRUN" ] && /usr/bin/python3 -c 'import torch.distributed' 2>/dev/null ||
  { echo "SKIP: Debian's torchrun (python3-torch) is not installed"; exit 77; }
id=$$
ns=(ddltr${id}a ddltr${id}b)
names=(node${id}a node${id}b)
addrs=(10.77.0.1 10.77.0.2)
dir=$(mktemp -d /tmp/ddl_torchrun_c10d.$id.XXXXXX)
pids=()
cleanup() {
  local p n
  for p in "${pids[@]}"; do kill -KILL -- "-$p" 2>/dev/null; kill -KILL "$p" 2>/dev/null; done
  for n in "${ns[@]}"; do
    ip netns del "$n" 2>/dev/null
    rm -rf "/etc/netns/$n"
  done
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }

for i in 0 1; do
  ip netns add "${ns[$i]}" 2>"$dir/err" || { echo "SKIP: cannot create a network namespace: $(cat "$dir/err")"; exit 77; }
  ip -n "${ns[$i]}" link set lo up
  # ip netns exec mounts /etc/netns/NAME/hosts over /etc/hosts: each node resolves both names.
  mkdir -p "/etc/netns/${ns[$i]}"
  printf '127.0.0.1 localhost\n%s %s\n%s %s\n' "${addrs[0]}" "${names[0]}" "${addrs[1]}" "${names[1]}" \
    >"/etc/netns/${ns[$i]}/hosts"
done
if ! ip link add "vt${id}a" netns "${ns[0]}" type veth peer name "vt${id}b" netns "${ns[1]}" 2>"$dir/err"; then
  echo "SKIP: cannot add a veth pair: $(cat "$dir/err")"
  exit 77
fi
for i in 0 1; do
  ip -n "${ns[$i]}" addr add "${addrs[$i]}/24" dev "vt${id}$([ $i = 0 ] && echo a || echo b)"
  ip -n "${ns[$i]}" link set "vt${id}$([ $i = 0 ] && echo a || echo b)" up
done

common=(--dataset synthetic --model mlp --train-samples 96 --test-samples 32 --batch-size 16 --lr 0.05 --threads 1
        --loader-workers 1 --no-progress --seed 5 --epochs 1)
timeout -k 2 60 "$DDLRUN" --nproc 2 "$TRAIN_CIFAR" "${common[@]}" --save "$dir/ddlrun.safetensors" >"$dir/ddlrun.txt" 2>&1
check "the reference 2-rank ddlrun run finished" "[ -s $dir/ddlrun.safetensors ]"

# One torchrun per node, its own host name (UTS namespace) and /dev/shm (mount namespace),
# a private HOME so no ~/.ddl/secret is shared; no DDL_JOB_TOKEN anywhere.
for i in 0 1; do
  mkdir -p "$dir/home$i"
  setsid ip netns exec "${ns[$i]}" unshare --uts --mount sh -c \
    'hostname "$0"; mount -t tmpfs tmpfs /dev/shm; shift; exec "$@"' "${names[$i]}" placeholder \
    env -u DDL_JOB_TOKEN -u DDL_JOB_TOKEN_FILE HOME="$dir/home$i" DDL_TIMEOUT=20 \
    timeout -k 2 50 "$TORCHRUN" --nnodes 2 --nproc_per_node 1 --rdzv_backend c10d --rdzv_endpoint "${addrs[0]}:29400" \
    --rdzv_id "job$id" --no_python --redirects 1 --tee 1 --monitor_interval 1 --log_dir "$dir/logs$i" \
    "$TRAIN_CIFAR" "${common[@]}" --save "$dir/node$i.safetensors" >"$dir/node$i.txt" 2>&1 &
  pids+=($!)
done
rcs=()
for p in "${pids[@]}"; do wait "$p"; rcs+=($?); done
for i in 0 1; do grep -E 'store|token|Error|error' "$dir/node$i.txt" | head -3 | cut -c1-300 | sed "s/^/  node $i: /"; done
check "both torchrun nodes exit 0 (${rcs[*]})" "[ ${rcs[0]} -eq 0 ] && [ ${rcs[1]} -eq 0 ]"
# The workers' own stdout files under --log_dir: torchrun's --tee copy of them can lose
# lines (its tailer stops at EOF once the worker has ended, whatever it has not read yet).
check "one 2-rank group across the nodes" "grep -rqs 'world size 2' $dir/logs0 $dir/logs1"
saved=$(ls "$dir"/node*.safetensors 2>/dev/null | head -1)
check "torchrun's c10d run ends with ddlrun's weights" "[ -n '$saved' ] && cmp -s $dir/ddlrun.safetensors '$saved'"
exit $fail
