// The main of every test executable; Catch2 itself is compiled once in catch_impl.cpp.
#include "tests/common/catch_run.h"

int main(int argc, char** argv) { return ddl::test::run_catch(argc, argv); }
