// Catch2's implementation, compiled once: the main of every test executable
// (catch_main.cpp, tests/cuda/cuda_main.cpp) is a few lines beside it and calls run_catch.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "tests/common/catch_run.h"

int ddl::test::run_catch(int argc, char** argv) { return Catch::Session().run(argc, argv); }
