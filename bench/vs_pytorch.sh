#!/usr/bin/env bash
# Times ddl and PyTorch 1.13 (Debian's python3-torch) on the same step, alternating
# the two programs ROUNDS times in one run, and prints both medians and the ratio.
# Usage: bench/vs_pytorch.sh [--model vgg11_bn] [--batch 64] [--threads 2] [--steps 10] [--eval] [--rounds 3]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=3
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
[ ${#args[@]} -eq 0 ] && args=(--model vgg11_bn --batch 64 --threads 2 --steps 10)
bench=build/bench/ddl-bench
[ -x "$bench" ] || scripts/setup.sh >/dev/null
/usr/bin/python3 -c "import torch" 2>/dev/null || { echo "vs_pytorch: python3-torch is not installed (apt-get install python3-torch)"; exit 1; }
ddl_ms=() torch_ms=()
for r in $(seq "$rounds"); do
  d=$("$bench" train-step "${args[@]}")
  t=$(/usr/bin/python3 bench/torch_step.py "${args[@]}")
  echo "$d"
  echo "$t"
  ddl_ms+=("$(echo "$d" | sed 's/.*"ms_per_step":\([0-9.]*\).*/\1/')")
  torch_ms+=("$(echo "$t" | sed 's/.*"ms_per_step": \([0-9.]*\).*/\1/')")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
dm=$(median "${ddl_ms[@]}")
tm=$(median "${torch_ms[@]}")
# Each round's two runs are minutes apart at most, so their ratio is less exposed to the
# machine's drift than the ratio of the medians: print both, and the rounds' range.
ratios=()
for i in "${!ddl_ms[@]}"; do ratios+=("$(awk -v a="${ddl_ms[$i]}" -v b="${torch_ms[$i]}" 'BEGIN {printf "%.3f", a / b}')"); done
lo=$(printf '%s\n' "${ratios[@]}" | sort -g | head -1)
hi=$(printf '%s\n' "${ratios[@]}" | sort -g | tail -1)
echo "{\"args\":\"${args[*]}\",\"rounds\":$rounds,\"ddl_ms\":$dm,\"pytorch_ms\":$tm,\"ratio_ddl_over_pytorch\":$(awk -v a="$dm" -v b="$tm" 'BEGIN {printf "%.3f", a / b}'),\"round_ratio_median\":$(median "${ratios[@]}"),\"round_ratio_min\":$lo,\"round_ratio_max\":$hi}"
