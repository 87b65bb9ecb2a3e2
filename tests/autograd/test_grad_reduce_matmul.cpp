// Gradient checks of reductions, matmul and linear.
#include <catch2/catch.hpp>

#include "tests/common/gradcheck.h"
#include <ddl/ddl.h>

using namespace ddl;
using ddl::test::non_contiguous;
using ddl::test::random_double;
using V = std::vector<Variable>;

TEST_CASE("sum, mean and var over dims, with and without keepdim", "[grad][reduce]") {
  const Tensor a = random_double({3, 4, 5}, 1);
  REQUIRE_GRADCHECK([](const V& x) { return sum(x[0]); }, {a});
  REQUIRE_GRADCHECK([](const V& x) { return sum(x[0], {1}); }, {non_contiguous(a)});
  REQUIRE_GRADCHECK([](const V& x) { return sum(x[0], {0, 2}, true); }, {a});
  REQUIRE_GRADCHECK([](const V& x) { return mean(x[0], {-1}); }, {a});
  REQUIRE_GRADCHECK([](const V& x) { return mean(x[0]); }, {a});
  REQUIRE_GRADCHECK([](const V& x) { return var(x[0], {1}); }, {a});
  REQUIRE_GRADCHECK([](const V& x) { return var(x[0], {0, 2}, 0, true); }, {non_contiguous(a)});
}

TEST_CASE("amax and amin route the gradient to the extremes", "[grad][reduce]") {
  const Tensor a = random_double({4, 6}, 2);  // continuous values: no ties
  REQUIRE_GRADCHECK([](const V& x) { return amax(x[0], {1}); }, {a});
  REQUIRE_GRADCHECK([](const V& x) { return amin(x[0], {0}, true); }, {a});
  // Ties split the gradient evenly, as in PyTorch.
  Variable t(from_vector<double>({1, 3, 3}), true);
  amax(t).backward();
  REQUIRE(to_vector<double>(t.grad()) == std::vector<double>{0, 0.5, 0.5});
}

TEST_CASE("matmul: 2-D, batched with broadcasting, 1-D, transposed views", "[grad][matmul]") {
  REQUIRE_GRADCHECK([](const V& x) { return matmul(x[0], x[1]); },
                    {random_double({3, 4}, 3), random_double({4, 5}, 4)});
  REQUIRE_GRADCHECK([](const V& x) { return matmul(x[0], x[1]); },
                    {random_double({2, 3, 4}, 5), random_double({4, 2}, 6)});
  REQUIRE_GRADCHECK([](const V& x) { return matmul(x[0], x[1]); },
                    {random_double({2, 1, 3, 4}, 7), random_double({3, 4, 2}, 8)});
  REQUIRE_GRADCHECK([](const V& x) { return matmul(x[0], x[1]); }, {random_double({4}, 9), random_double({4, 3}, 10)});
  REQUIRE_GRADCHECK([](const V& x) { return matmul(x[0], x[1]); }, {random_double({3, 4}, 11), random_double({4}, 12)});
  REQUIRE_GRADCHECK([](const V& x) { return matmul(x[0].t(), x[1]); },
                    {non_contiguous(random_double({4, 3}, 13)), random_double({4, 2}, 14)});
}

TEST_CASE("linear with and without bias", "[grad][matmul]") {
  const Tensor x = random_double({5, 3}, 15), w = random_double({4, 3}, 16), b = random_double({4}, 17);
  REQUIRE_GRADCHECK([](const V& v) { return linear(v[0], v[1], v[2]); }, {x, w, b});
  REQUIRE_GRADCHECK([](const V& v) { return linear(v[0], v[1], Variable()); }, {non_contiguous(x), w});
  REQUIRE_GRADCHECK([](const V& v) { return linear(v[0], v[1], v[2]); }, {random_double({2, 5, 3}, 18), w, b});
}
