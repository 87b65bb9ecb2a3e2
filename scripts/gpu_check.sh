#!/usr/bin/env bash
# Everything to run the first time ddl meets a GPU, in order, stopping at the first
# failure: build with CUDA required, the CUDA tests (never skipped here: no GPU is an
# error), the whole suite, a short training on the GPU (alone, then one rank per GPU
# under ddlrun with NCCL), and the VGG-11-BN train step at batch 128 (issue 7's figure;
# PyTorch's on the same GPU needs a CUDA PyTorch: bench/torch_step.py --device cuda).
# Logs go to ${OUT:-gpu-check}/. Usage: scripts/gpu_check.sh
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-gpu-check}
mkdir -p "$out"
step() { echo "== $1"; }

command -v nvidia-smi >/dev/null && nvidia-smi | tee "$out/nvidia-smi.txt" || true
scripts/setup.sh >"$out/setup.log" 2>&1 || { tail -20 "$out/setup.log"; exit 1; }
step "build with -Dcuda=enabled"
meson configure build -Dcuda=enabled >/dev/null
ninja -C build >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
step "CUDA tests"
meson test -C build --suite cuda --print-errorlogs 2>&1 | tee "$out/cuda-tests.log" | tail -12
grep -q "^Skipped: *0" "$out/cuda-tests.log" || { echo "gpu_check: CUDA tests were skipped: no usable GPU"; exit 1; }
grep -q "^Fail: *0" "$out/cuda-tests.log"
step "whole suite"
meson test -C build --num-processes 4 2>&1 | tee "$out/all-tests.log" | tail -8
grep -q "^Fail: *0" "$out/all-tests.log"
step "train_cifar --device cuda, one process"
build/apps/train_cifar --device cuda --dataset fashion-mnist --epochs 1 --train-samples 10000 \
  --test-samples 2000 --batch-size 128 --no-progress --log-every 20 2>&1 | tee "$out/train-1gpu.log" | tail -6
gpus=$(nvidia-smi -L | wc -l)
step "train_cifar --device cuda under ddlrun, $gpus rank(s), NCCL"
build/apps/ddlrun --nproc "$gpus" build/apps/train_cifar --device cuda --backend auto --dataset fashion-mnist \
  --epochs 1 --train-samples 10000 --test-samples 2000 --batch-size 128 --no-progress --log-every 20 2>&1 |
  tee "$out/train-ddp.log" | tail -12
step "train step, vgg11_bn, batch 128, GPU"
build/bench/ddl-bench train-step --model vgg11_bn --batch 128 --steps 20 --device cuda | tee "$out/train-step.json"
echo "gpu_check: all steps passed; logs in $out/"
