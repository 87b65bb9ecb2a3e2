#pragma once

namespace ddl::test {

// Catch2's session over the command line (tests/common/catch_impl.cpp): the one place that
// compiles Catch2's implementation, so a main costs no more than its own lines.
int run_catch(int argc, char** argv);

}  // namespace ddl::test
