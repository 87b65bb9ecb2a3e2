// Catch2 main for the CUDA suite: exits 77 (skipped) when no GPU can run the tests.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cstdio>

#include "tensor/devices.h"

int main(int argc, char** argv) {
  if (!ddl::cuda::is_available()) {
    std::printf("skipped: no CUDA device (ddl::cuda::device_count() == 0)\n");
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
