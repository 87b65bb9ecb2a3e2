#!/usr/bin/env bash
# Installs what is missing (Debian 12 packages), configures build/ as a release
# build and compiles. Safe to run again: it only does what is not yet done.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(meson ninja-build pkg-config g++ libeigen3-dev catch2 libstb-dev libgloo-dev zlib1g-dev
          libjpeg62-turbo-dev python3-pil  # JPEG decoding (data/jpeg_decode.cpp) and its PIL cross-check
          libcli11-dev nlohmann-json3-dev libfmt-dev dataset-fashion-mnist
          fortunes   # the text corpus of apps/examples/char_lm (tests/apps/test_char_lm.sh)
          cmake      # the install test builds a CMake project against an installed ddl (tests/install)
          strace     # ddlrun --syscalls counts each rank's system calls with it (tests/apps/test_ddlrun_syscalls.sh)
          chromium   # chromium: the test suite renders the HTML reports headless (tests/report)
          clang-format                      # the format check (scripts/check_format.sh)
          clang libclang-rt-dev libomp-dev  # the sanitizer and libFuzzer builds (tests/sanitize, tests/fuzz)
          lld        # links the ASan build's programs (tests/sanitize/run.sh), a third of GNU ld's time
          qemu-user  # runs the build on emulated AVX2-only and x86-64-v2 CPUs (tests/apps/test_emulated_cpus.sh)
          python3-torch   # the PyTorch 1.13 cross-checks (nn_torch_interop, torchrun, tests/golden)
          slurm-wlm munge)  # a one-node Slurm cluster for scripts/cluster/a2.sbatch (tests/hosts/test_a2_sbatch.sh)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get -o DPkg::Lock::Timeout=600 update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get -o DPkg::Lock::Timeout=600 install -y -qq "${missing[@]}"
fi

# Extra meson options pass through, e.g. DDL_MESON_ARGS="-Dcuda=disabled".
# On a machine without a GPU the CUDA kernels (if the toolkit is here) are compiled to PTX
# only: the build still checks every kernel, and skips ptxas's machine code for two GPU
# generations, about a third of the kernels' compile time (docs/build.md, "CUDA").
if [ ! -f build/build.ninja ]; then
  args=(${DDL_MESON_ARGS:-})
  if [[ " ${args[*]} " != *gpu_sass* ]] && [ ! -e /dev/nvidia0 ] && ! nvidia-smi -L 2> /dev/null | grep -q '^GPU'; then
    args+=(-Dgpu_sass=false)
  fi
  meson setup build --buildtype=release --werror "${args[@]}"
fi
ninja -C build
echo "setup: built build/ (programs in build/apps/, benchmarks in build/bench/ddl-bench)"
