#!/usr/bin/env bash
# ddl vs PyTorch 1.13 on gloo, alternating in one run (2 processes on this machine):
# the 9.2 M-float all-reduce (VGG-11's gradient) and the DDP train step
# (vgg11_bn, batch 64 per process, 1 thread each), plus ddl's DDP step with the
# all-reduce only after backward (what overlap buys). Prints each JSON line and the ratios.
# Usage: bench/dist_vs_pytorch.sh [--rounds 3] [--steps 10] [--model vgg11_bn]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=3 steps=10 model=vgg11_bn
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --model) model=$2; shift 2 ;;
    *) echo "dist_vs_pytorch: unknown flag $1"; exit 2 ;;
  esac
done
[ -x build/bench/ddl-bench ] || scripts/setup.sh >/dev/null
root=$PWD
# Rank 0's JSON line (unprefixed: ddlrun shows rank 0's lines as they are).
run() { "$root/build/apps/ddlrun" --nproc 2 "$@" 2>&1 | grep '^{'; }
field() { sed "s/.*\"$1\": *\([0-9.]*\).*/\1/"; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ar_ddl=() ar_pt=() st_ddl=() st_no=() st_pt=()
for r in $(seq "$rounds"); do
  a=$(run "$root/build/bench/ddl-bench" allreduce --numel 9231114 --iters 20); echo "$a"; ar_ddl+=("$(echo "$a" | field ms)")
  a=$(cd bench && run --rank0-store /usr/bin/python3 torch_dist.py allreduce --numel 9231114 --iters 20); echo "$a"; ar_pt+=("$(echo "$a" | field ms)")
  a=$(run "$root/build/bench/ddl-bench" ddp-step --model "$model" --batch 64 --threads 1 --steps "$steps"); echo "$a"; st_ddl+=("$(echo "$a" | field ms_per_step)")
  a=$(run "$root/build/bench/ddl-bench" ddp-step --model "$model" --batch 64 --threads 1 --steps "$steps" --no-overlap); echo "$a"; st_no+=("$(echo "$a" | field ms_per_step)")
  a=$(cd bench && run --rank0-store /usr/bin/python3 torch_dist.py ddp-step --model "$model" --batch 64 --threads 1 --steps "$steps"); echo "$a"; st_pt+=("$(echo "$a" | field ms_per_step)")
done
ad=$(median "${ar_ddl[@]}"); ap=$(median "${ar_pt[@]}"); sd=$(median "${st_ddl[@]}"); sn=$(median "${st_no[@]}"); sp=$(median "${st_pt[@]}")
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a / b}'; }
echo "{\"allreduce_ms\":{\"ddl\":$ad,\"pytorch\":$ap,\"ratio\":$(ratio "$ad" "$ap")},\"ddp_step_ms\":{\"ddl\":$sd,\"ddl_no_overlap\":$sn,\"pytorch\":$sp,\"ratio\":$(ratio "$sd" "$sp")}}"
