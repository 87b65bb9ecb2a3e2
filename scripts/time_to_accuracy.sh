#!/usr/bin/env bash
# Time to 93.5% Fashion-MNIST test accuracy with 2 workers x 1 thread: the fmnist-fast recipe
# (docs/train_cifar.md, "Time to accuracy") in ddl (ddlrun --nproc 2 train_cifar, stopping at the
# first epoch that reaches the target; HTML report with the curves), then the same recipe in
# PyTorch 1.13 (bench/torch_fmnist_tta.py), side by side with the load average.
# Usage: scripts/time_to_accuracy.sh [--epochs 10] [--seed 0] [--target 93.5] [--out DIR]
#          [--no-pytorch] [--train-samples N --test-samples N (quick checks)] [--dry-run]
# DDLRUN and TRAIN_CIFAR name other binaries than build/apps/'s.
set -euo pipefail
cd "$(dirname "$0")/.."
epochs=10 seed=0 target=93.5 out=tta-out pytorch=1 dry=0 extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --epochs | --seed | --target | --out | --train-samples | --test-samples)
      [ $# -ge 2 ] || { echo "time_to_accuracy: $1 needs a value" >&2; exit 2; }
      case "$1" in
        --epochs) epochs=$2 ;; --seed) seed=$2 ;; --target) target=$2 ;; --out) out=$2 ;;
        *) extra+=("$1" "$2") ;;
      esac
      shift 2 ;;
    --no-pytorch) pytorch=0; shift ;;
    --dry-run) dry=1; shift ;;
    -h | --help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "time_to_accuracy: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
# The recipe: ResNet-9 at quarter width, SGD + Nesterov, OneCycle over --epochs, label smoothing,
# random crop + flip, batch 128 per worker (256 in all), one compute thread per worker.
recipe=(--model resnet9_small --dataset fashion-mnist --augment true --batch-size 128 --lr 0.1 --momentum 0.9
  --nesterov --weight-decay 5e-4 --schedule onecycle --label-smoothing 0.1 --threads 1 --loader-workers 1
  --epochs "$epochs" --seed "$seed" --target-accuracy "$target" --stop-at-target --no-progress)
ddlrun=${DDLRUN:-build/apps/ddlrun} train_cifar=${TRAIN_CIFAR:-build/apps/train_cifar}
ddl_cmd=("$ddlrun" --nproc 2 "$train_cifar" "${recipe[@]}" "${extra[@]}"
  --report "$out/report.html" --metrics "$out/metrics.jsonl")
torch_cmd=(/usr/bin/python3 bench/torch_fmnist_tta.py --epochs "$epochs" --seed "$seed" --target "$target" "${extra[@]}")
if [ "$dry" = 1 ]; then
  echo "${ddl_cmd[*]}"
  [ "$pytorch" = 0 ] || echo "${torch_cmd[*]}"
  exit 0
fi
[ -x "$train_cifar" ] && [ -x "$ddlrun" ] || ninja -C build apps/train_cifar apps/ddlrun
mkdir -p "$out"
rm -f "$out"/metrics*.jsonl
load_before=$(cut -d' ' -f1 /proc/loadavg)
"${ddl_cmd[@]}" | tee "$out/ddl.log"
load_after=$(cut -d' ' -f1 /proc/loadavg)
# Rank 0's summary line: convergence_s is the time from the start of training to the end of
# the first test evaluation at or above the target (NaN when never reached).
ddl_s=$(/usr/bin/python3 -c '
import json, sys
c = None
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("event") == "summary" or "convergence_s" in r:
        c = r.get("convergence_s")
print("not reached" if c is None or c != c else "%.1f s" % c)' "$out/metrics.rank0.jsonl")
echo "ddl: $ddl_s to $target % test accuracy (load average $load_before before, $load_after after;" \
  "$(grep -o 'avx[0-9a-z_]*' <(grep -m1 'CPU kernels' "$out/ddl.log") | head -1 || true) kernels); report: $out/report.html"
if [ "$pytorch" = 1 ]; then
  "${torch_cmd[@]}" | tee "$out/pytorch.log"
  echo "side by side: ddl $ddl_s, $(grep '^pytorch:' "$out/pytorch.log")"
fi
