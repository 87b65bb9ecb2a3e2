#!/usr/bin/env bash
# Everything to run the first time ddl meets a GPU, in stages, stopping at the first failure:
#   build  configure and build with CUDA required (always runs first; ninja rebuilds only what changed)
#   cuda   the CUDA tests (a skip is an error, except the two-GPU executables on a one-GPU machine,
#          which say so), one at a time so that NCCL's shared-GPU ranks are not time-sliced
#   suite  the rest of the suite
#   train  one Fashion-MNIST epoch of train_cifar --device cuda, one process
#   ddp    NCCL DDP under ddlrun (two ranks sharing the GPU on a one-GPU machine)
#   bench  the train step of VGG-11-BN and ResNet-18 at batch 128 next to PyTorch's on the same
#          GPU, in fp32 and bf16 autocast, when python3 has a CUDA PyTorch (bench/torch_step.py)
# A device call is limited to 600 s and a build there takes minutes, so name the stages that fit:
# `scripts/gpu_check.sh cuda suite`, then `scripts/gpu_check.sh train ddp bench` (no names: all).
# Each stage runs under what is left of DDL_GPU_CHECK_BUDGET seconds (default 570); one that runs
# out stops the script with exit 75, naming the stages still to run.
# On a machine without a package registry it builds against the carried .gpu-deps/ (made here
# by scripts/gpu_deps.sh; docs/cuda.md) in build-gpu/, and never calls apt-get; without that
# folder it runs scripts/setup.sh and uses build/. Logs go to ${OUT:-gpu-check}/ (at most 8 files:
# a device call returns no more).
# Usage: scripts/gpu_check.sh [build|cuda|suite|train|ddp|bench ...]
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
out=${OUT:-gpu-check}
mkdir -p "$out"
start=$SECONDS
budget=${DDL_GPU_CHECK_BUDGET:-570}
all_stages=(cuda suite train ddp bench)
stages=("$@")
[ ${#stages[@]} -eq 0 ] && stages=("${all_stages[@]}")
for st in "${stages[@]}"; do
  case " build ${all_stages[*]} " in *" $st "*) ;; *) echo "gpu_check: unknown stage '$st' (build ${all_stages[*]})"; exit 2 ;; esac
done
exec 3>&1  # the terminal, for messages from inside redirected calls
step() { echo "== $1"; }
fail() { echo "gpu_check: $*"; exit 1; }

command -v nvidia-smi >/dev/null && nvidia-smi | tee "$out/nvidia-smi.txt" || true
export PATH=$PATH:/usr/local/cuda/bin
# NCCL explains a refusal or a socket error in the logs of the one run there is.
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
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
  export CPLUS_INCLUDE_PATH=$nv/include:${CPLUS_INCLUDE_PATH:-} LIBRARY_PATH=$nv/lib:${LIBRARY_PATH:-}
  export LD_LIBRARY_PATH=$nv/lib:${LD_LIBRARY_PATH:-}
  build="build-gpu"
  # No registry there: a test that installs what it lacks (torchrun's python3-torch) skips.
  export DDL_TESTS_NO_INSTALL=1
  # Warnings are not errors here: that machine's compiler (g++ 13 on Ubuntu 24.04) is not the
  # one CI builds with, and one new warning must not end the only GPU run; CI keeps --werror.
  if [ ! -f "$build/build.ninja" ]; then
    meson setup "$build" --buildtype=release -Dwerror=false -Dcuda=enabled >"$out/setup.log" 2>&1 ||
      { tail -30 "$out/setup.log"; rm -rf "$build"; fail "configure failed (log: $out/setup.log)"; }
  fi
  data=(--data "$DDL_FASHION_MNIST")
else
  scripts/setup.sh >"$out/setup.log" 2>&1 || { tail -20 "$out/setup.log"; exit 1; }
  build=build
  meson configure "$build" -Dcuda=enabled >/dev/null
  data=()
fi

current=build
# Runs a command under what is left of the budget; running out ends the script (exit 75),
# naming the stages still to run. Output goes to the caller's redirection, never a pipe, so
# that the exit reaches this shell.
within() {
  local left=$((budget - (SECONDS - start))) rc=0
  [ "$left" -gt 5 ] || out_of_time
  timeout -k 10 "$left" "$@" || rc=$?
  [ "$rc" -eq 124 ] && out_of_time
  return "$rc"
}
out_of_time() {
  local rest=() seen=0
  [ "$current" = build ] && seen=1
  for st in "${stages[@]}"; do
    [ "$st" = "$current" ] && seen=1
    [ "$seen" = 1 ] && [ "$st" != build ] && rest+=("$st")
  done
  echo "gpu_check: the ${budget} s budget ran out in stage '$current'; to go on: scripts/gpu_check.sh ${rest[*]}" >&3
  exit 75
}
# Runs a command with its output in $out/$1 and shows the last $2 lines; a failure fails the check.
logged() {
  local log=$out/$1 lines=$2 rc=0
  shift 2
  within "$@" >"$log" 2>&1 || rc=$?
  tail -n "$lines" "$log"
  [ "$rc" -eq 0 ] || fail "$* failed (log: $log)"
}

stage_build() {
  within ninja -C "$build" >"$out/build.log" 2>&1 || { grep -A20 FAILED "$out/build.log" | head -60; fail "build failed"; }
  # -Dcuda=enabled fails without CUDA; NCCL is optional to meson, not to this check.
  grep -qE "^ *nccl *: *(True|YES)" "$build/meson-logs/meson-log.txt" ||
    fail "configured without NCCL (no nccl.h and libnccl under /usr/local/cuda or python3's nvidia.nccl)"
}

# A test run's result is read from meson's summary, so its own exit status is not checked here.
stage_cuda() {
  within meson test -C "$build" --suite cuda --num-processes 1 --print-errorlogs >"$out/cuda-tests.log" 2>&1 || true
  tail -16 "$out/cuda-tests.log"
  grep -q "^Fail: *0" "$out/cuda-tests.log" || fail "CUDA tests failed (log: $out/cuda-tests.log)"
  grep -q "^Timeout: *0" "$out/cuda-tests.log" || fail "CUDA tests timed out (log: $out/cuda-tests.log)"
  # A skip means the test did not run: only the two-GPU executables may skip, and only below two
  # GPUs; test_nccl_shared_gpu skips only if NCCL refuses two ranks on one GPU (reported).
  local allowed=" "
  [ "$gpus" -lt 2 ] && allowed=" cuda_multi_gpu nccl_ranks "
  for t in $(grep -E "^ *[0-9]+/[0-9]+ .* SKIP " "$out/cuda-tests.log" | sed -E 's/.* ddl:cuda \/ ([a-z0-9_]+) .*/\1/'); do
    case "$allowed" in
      *" $t "*) echo "gpu_check: $t skipped: it needs two GPUs, this machine has $gpus (not counted as passed)" ;;
      *) if [ "$t" = nccl_shared_gpu ]; then
           echo "gpu_check: WARNING nccl_shared_gpu skipped: NCCL refused two ranks on one GPU; no multi-process NCCL ran"
         else fail "$t was skipped: it did not run on this GPU machine"; fi ;;
    esac
  done
}

stage_suite() {
  # The cuda suite ran in stage cuda, one test at a time: eight at once on one GPU would time
  # NCCL's shared-GPU ranks and the hot-path checks against each other.
  within meson test -C "$build" --num-processes 8 --no-suite cuda >"$out/all-tests.log" 2>&1 || true
  tail -8 "$out/all-tests.log"
  grep -q "^Fail: *0" "$out/all-tests.log" || fail "the suite failed (log: $out/all-tests.log)"
}

stage_train() {
  echo "train_cifar --device cuda, one process, one whole epoch of Fashion-MNIST (60000 images)"
  logged train-1gpu.log 6 "$build/apps/train_cifar" --device cuda --dataset fashion-mnist "${data[@]}" --epochs 1 \
    --batch-size 128 --no-progress --log-every 100
}

stage_ddp() {
  # At least two ranks: on one GPU they share it (--share-gpu: NCCL connects them as two hosts
  # over sockets, so this shows DDP over NCCL working across processes, not its speed).
  local ranks=$gpus share=()
  [ "$gpus" -lt 2 ] && ranks=2 share=(--share-gpu)
  echo "train_cifar --device cuda under ddlrun, $ranks ranks on $gpus GPU(s), NCCL DDP"
  logged train-ddp.log 12 "$build/apps/ddlrun" --nproc "$ranks" "$build/apps/train_cifar" --device cuda \
    "${share[@]}" --backend auto --dataset fashion-mnist "${data[@]}" --epochs 1 --train-samples 10000 \
    --test-samples 2000 --batch-size 128 --no-progress --log-every 20
}

stage_bench() {
  echo "train step, batch 128: ddl, then PyTorch on the same GPU when python3 has a CUDA PyTorch"
  # PyTorch runs without the carried libraries on its loader path (they are for ddl alone).
  local has_torch_cuda
  has_torch_cuda=$(env -u LD_LIBRARY_PATH python3 -c "import torch; print(int(torch.cuda.is_available()))" \
    2>/dev/null || echo 0)
  # fp32 (IEEE in both: no TF32), then bf16 autocast (float32 master weights) in both; cuDNN
  # algorithms from cuDNN's heuristics in both (docs/cuda.md). One JSON line per run.
  local threads
  threads=$(nproc)
  for model in vgg11_bn resnet18; do
    for precision in fp32 bf16; do
      within "$build/bench/ddl-bench" train-step --model "$model" --batch 128 --steps 20 --device cuda \
        --autocast "$precision" --threads "$threads" >>"$out/train-step.json" ||
        fail "ddl-bench train-step --model $model --autocast $precision failed"
      if [ "$has_torch_cuda" = 1 ]; then
        # PyTorch as users run it, then with deterministic cuDNN algorithms only, as ddl prefers.
        for det in 0 1; do
          local flag=()
          [ "$det" = 1 ] && flag=(--deterministic)
          within env -u LD_LIBRARY_PATH python3 bench/torch_step.py --model "$model" --batch 128 --steps 20 \
            --device cuda --autocast "$precision" --threads "$threads" "${flag[@]}" >>"$out/train-step.json" ||
            fail "bench/torch_step.py --model $model --autocast $precision ${flag[*]} failed"
        done
      fi
      tail -n "$([ "$has_torch_cuda" = 1 ] && echo 3 || echo 1)" "$out/train-step.json"
    done
  done
  [ "$has_torch_cuda" = 1 ] || echo "gpu_check: python3 has no CUDA PyTorch: no PyTorch figures"
}

gpus=$( (nvidia-smi -L 2>/dev/null || true) | wc -l)
step "build $build with -Dcuda=enabled"
stage_build
for st in "${stages[@]}"; do
  [ "$st" = build ] && continue
  current=$st
  step "$st ($((budget - (SECONDS - start))) s left of the ${budget} s budget)"
  "stage_$st"
done
echo "gpu_check: stages passed: build ${stages[*]/build/}; logs in $out/"
