// Catch2 main for the CUDA suite: exits 77 (skipped, never passed) when this machine has fewer
// GPUs than the executable needs: DDL_CUDA_TEST_MIN_GPUS, 1 unless its meson target says 2.
// Catch2 itself is compiled once, in tests/common/catch_impl.cpp.
#include <cstdio>

#include "tests/common/catch_run.h"
#include <ddl/tensor/core/devices.h>

#ifndef DDL_CUDA_TEST_MIN_GPUS
#define DDL_CUDA_TEST_MIN_GPUS 1
#endif

int main(int argc, char** argv) {
  const int have = ddl::cuda::device_count();
  if (have < DDL_CUDA_TEST_MIN_GPUS) {
    std::printf("skipped: needs %d CUDA device(s), ddl::cuda::device_count() is %d\n", DDL_CUDA_TEST_MIN_GPUS, have);
    return 77;
  }
  return ddl::test::run_catch(argc, argv);
}
