#!/usr/bin/env bash
# ddlrun --hosts with hosts of different sizes (-H host0:2,host1:1) trains to the weights of
# 3 ranks on one node (over TCP too: DDL_SHM=0, the same ring). Needs root (namespaces):
# exit 77 without it. Which rank runs where: tests/apps/test_ddlrun_nodes_unit.cpp.
set -uo pipefail
: "${DDLRUN:?}" "${TRAIN_CIFAR:?}"
[ "$(id -u)" -eq 0 ] || { echo "SKIP: ddlrun --hosts needs root here"; exit 77; }
dir=$(mktemp -d /tmp/ddl_hosts_uneven.$$.XXXXXX)
trap 'rm -rf "$dir"' EXIT
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }
common=(--dataset synthetic --model mlp --train-samples 96 --test-samples 32 --batch-size 16 --lr 0.05 --threads 1
        --loader-workers 1 --no-progress --seed 5 --epochs 1)
DDL_SHM=0 timeout 60 "$DDLRUN" --nproc 3 "$TRAIN_CIFAR" "${common[@]}" --save "$dir/one.safetensors" >"$dir/one.txt" 2>&1
check "3 ranks on one node train" "[ $? -eq 0 ]"
timeout 90 "$DDLRUN" --hosts 2 -H host0:2,host1:1 --link 1gbit --all-ranks "$TRAIN_CIFAR" "${common[@]}" \
  --save "$dir/hosts.safetensors" >"$dir/hosts.txt" 2>&1
rc=$?
grep -E 'error|rank 2/3\] model' "$dir/hosts.txt" | head -3 | cut -c1-200 | sed 's/^/  /'
check "--hosts 2 -H host0:2,host1:1 exits 0 ($rc)" "[ $rc -eq 0 ]"
check "3 ranks, the last on host1" "grep -q 'world size 3' $dir/hosts.txt"
check "2 + 1 emulated hosts end with the weights of 3 ranks on one node" \
  "cmp -s $dir/one.safetensors $dir/hosts.safetensors"
timeout 10 "$DDLRUN" --hosts 2 -H host0:2,hostX:1 --link 1gbit true >"$dir/bad.txt" 2>&1
check "a name other than hostI is a usage error (exit 2)" "[ $? -eq 2 ] && grep -q \"entry 2 is 'hostX'\" $dir/bad.txt"
exit $fail
