// The headers most test files include, precompiled once per clang build (tests/common/make_pch.py)
// and given to every test object built with test_deps (tests/meson.build) through -include.
// No include guard: a precompiled header is compiled as a main file.
#include <catch2/catch.hpp>

#include <ddl/ddl.h>
#include <ddl/dist/dist.h>
