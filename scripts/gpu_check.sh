#!/usr/bin/env bash
# Everything to run the first time ddl meets a GPU, in order, stopping at the first failure:
# build with CUDA required, the CUDA tests (a skip is an error, except the two-GPU executables
# on a one-GPU machine, which say so), the whole suite, training on the GPU (one Fashion-MNIST
# epoch alone, then NCCL DDP under ddlrun: two ranks sharing the GPU on a one-GPU machine), and
# the train step of VGG-11-BN and ResNet-18 at batch 128 next to PyTorch's on the same GPU, in
# fp32 and bf16 autocast, when python3 has a CUDA PyTorch (bench/torch_step.py).
# On a machine without a package registry it builds against the carried .gpu-deps/ (made here
# by scripts/gpu_deps.sh; docs/cuda.md) in a fresh build-gpu/, and never calls apt-get; without
# that folder it runs scripts/setup.sh and uses build/. Logs go to ${OUT:-gpu-check}/.
# Usage: scripts/gpu_check.sh
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
out=${OUT:-gpu-check}
mkdir -p "$out"
step() { echo "== $1"; }
fail() { echo "gpu_check: $*"; exit 1; }

command -v nvidia-smi >/dev/null && nvidia-smi | tee "$out/nvidia-smi.txt" || true
export PATH=$PATH:/usr/local/cuda/bin
if [ -f .gpu-deps/env.sh ]; then
  step "build dependencies from the carried .gpu-deps/ (no registry needed)"
  # shellcheck source=/dev/null
  . .gpu-deps/env.sh
  # cuDNN and NCCL may exist only as the pip wheels PyTorch uses (nvidia-cudnn-cu13,
  # nvidia-nccl-cu13): link their headers and libraries where the build finds them.
  nv=$repo/build-gpu-nvidia
  rm -rf "$nv"
  mkdir -p "$nv/include" "$nv/lib"
  for pkg in cudnn nccl; do
    [ -e /usr/local/cuda/include/$pkg.h ] && ls /usr/local/cuda/lib64/lib$pkg.so >/dev/null 2>&1 && continue
    dir=$(env -u LD_LIBRARY_PATH python3 -c "import nvidia.$pkg as m; print(list(m.__path__)[0])" 2>/dev/null) || {
      echo "gpu_check: no $pkg under /usr/local/cuda nor as a python3 wheel"
      continue
    }
    echo "gpu_check: $pkg from $dir"
    [ -d "$dir/include" ] && ln -sf "$dir"/include/* "$nv/include/"
    for so in "$dir"/lib/lib*.so.*; do
      ln -sf "$so" "$nv/lib/"
      base=$(basename "$so")
      ln -sf "$so" "$nv/lib/${base%%.so.*}.so"  # the unversioned name the linker asks for
    done
  done
  export CPLUS_INCLUDE_PATH=$nv/include:$CPLUS_INCLUDE_PATH LIBRARY_PATH=$nv/lib:$LIBRARY_PATH
  export LD_LIBRARY_PATH=$nv/lib:$LD_LIBRARY_PATH
  build="build-gpu"
  rm -rf "$build"
  meson setup "$build" --buildtype=release --werror -Dcuda=enabled >"$out/setup.log" 2>&1 ||
    { tail -30 "$out/setup.log"; fail "configure failed (log: $out/setup.log)"; }
  data=(--data "$DDL_FASHION_MNIST")
else
  scripts/setup.sh >"$out/setup.log" 2>&1 || { tail -20 "$out/setup.log"; exit 1; }
  build=build
  meson configure "$build" -Dcuda=enabled >/dev/null
  data=()
fi
step "build $build with -Dcuda=enabled"
ninja -C "$build" >"$out/build.log" 2>&1 || { grep -A20 FAILED "$out/build.log" | head -60; fail "build failed"; }
# -Dcuda=enabled fails without CUDA; NCCL is optional to meson, not to this check.
grep -qE "^ *nccl *: *(True|YES)" "$build/meson-logs/meson-log.txt" ||
  fail "configured without NCCL (no nccl.h and libnccl under /usr/local/cuda or python3's nvidia.nccl)"
gpus=$( (nvidia-smi -L 2>/dev/null || true) | wc -l)

step "CUDA tests ($gpus GPU(s))"
set +e
meson test -C "$build" --suite cuda --print-errorlogs 2>&1 | tee "$out/cuda-tests.log" | tail -16
set -e
grep -q "^Fail: *0" "$out/cuda-tests.log" || fail "CUDA tests failed (log: $out/cuda-tests.log)"
grep -q "^Timeout: *0" "$out/cuda-tests.log" || fail "CUDA tests timed out (log: $out/cuda-tests.log)"
# A skip means the test did not run: only the two-GPU executables may skip, and only below two
# GPUs; test_nccl_shared_gpu skips only if NCCL refuses two ranks on one GPU (reported).
allowed=" "
[ "$gpus" -lt 2 ] && allowed=" cuda_multi_gpu nccl_ranks "
for t in $(grep -E "^ *[0-9]+/[0-9]+ .* SKIP " "$out/cuda-tests.log" | sed -E 's/.* ddl:cuda \/ ([a-z0-9_]+) .*/\1/'); do
  case "$allowed" in
    *" $t "*) echo "gpu_check: $t skipped: it needs two GPUs, this machine has $gpus (not counted as passed)" ;;
    *) if [ "$t" = nccl_shared_gpu ]; then
         echo "gpu_check: WARNING nccl_shared_gpu skipped: NCCL refused two ranks on one GPU; no multi-process NCCL ran"
       else fail "$t was skipped: it did not run on this GPU machine"; fi ;;
  esac
done

step "whole suite"
set +e
meson test -C "$build" --num-processes 8 2>&1 | tee "$out/all-tests.log" | tail -8
set -e
grep -q "^Fail: *0" "$out/all-tests.log" || fail "the suite failed (log: $out/all-tests.log)"

step "train_cifar --device cuda, one process, one whole epoch of Fashion-MNIST (60000 images)"
"$build/apps/train_cifar" --device cuda --dataset fashion-mnist "${data[@]}" --epochs 1 \
  --batch-size 128 --no-progress --log-every 100 2>&1 | tee "$out/train-1gpu.log" | tail -6 ||
  fail "train_cifar on the GPU failed (log: $out/train-1gpu.log)"
# At least two ranks: on one GPU they share it (--share-gpu: NCCL connects them as two hosts
# over sockets, so this shows DDP over NCCL working across processes, not its speed).
ranks=$gpus share=()
[ "$gpus" -lt 2 ] && ranks=2 share=(--share-gpu)
step "train_cifar --device cuda under ddlrun, $ranks ranks on $gpus GPU(s), NCCL DDP"
"$build/apps/ddlrun" --nproc "$ranks" "$build/apps/train_cifar" --device cuda "${share[@]}" --backend auto \
  --dataset fashion-mnist "${data[@]}" --epochs 1 --train-samples 10000 --test-samples 2000 --batch-size 128 \
  --no-progress --log-every 20 2>&1 | tee "$out/train-ddp.log" | tail -12 ||
  fail "train_cifar under ddlrun failed (log: $out/train-ddp.log)"

step "train step, batch 128, GPU: ddl, then PyTorch on the same GPU when python3 has a CUDA PyTorch"
# PyTorch runs without the carried libraries on its loader path (they are for ddl alone).
has_torch_cuda=$(env -u LD_LIBRARY_PATH python3 -c "import torch; print(int(torch.cuda.is_available()))" 2>/dev/null ||
  echo 0)
# fp32, then bf16 autocast (float32 master weights) in both; PyTorch with cudnn.benchmark,
# since ddl also times the cuDNN algorithms once per shape.
for model in vgg11_bn resnet18; do
  for precision in fp32 bf16; do
    "$build/bench/ddl-bench" train-step --model "$model" --batch 128 --steps 20 --device cuda --autocast "$precision" |
      tee -a "$out/train-step.json" || fail "ddl-bench train-step --model $model --autocast $precision failed"
    if [ "$has_torch_cuda" = 1 ]; then
      env -u LD_LIBRARY_PATH python3 bench/torch_step.py --model "$model" --batch 128 --steps 20 --device cuda \
        --autocast "$precision" --cudnn-benchmark | tee -a "$out/train-step.json" ||
        fail "bench/torch_step.py --model $model --autocast $precision failed"
    fi
  done
done
[ "$has_torch_cuda" = 1 ] || echo "gpu_check: python3 has no CUDA PyTorch: no PyTorch figures"
echo "gpu_check: all steps passed; logs in $out/"
