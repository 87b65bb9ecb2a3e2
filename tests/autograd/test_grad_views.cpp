// Gradient checks of the differentiable views and casts.
#include <catch2/catch.hpp>

#include "tests/common/gradcheck.h"
#include <ddl/ddl.h>

using namespace ddl;
using ddl::test::non_contiguous;
using ddl::test::random_double;
using V = std::vector<Variable>;

TEST_CASE("reshaping views", "[grad][views]") {
  const Tensor a = random_double({2, 3, 4}, 1);
  // Multiply by a fixed tensor so each output element has its own weight.
  const Tensor w = random_double({4, 6}, 2);
  REQUIRE_GRADCHECK([w](const V& x) { return x[0].view({4, 6}) * Variable(w); }, {a});
  REQUIRE_GRADCHECK([w](const V& x) { return x[0].reshape({4, -1}) * Variable(w); }, {non_contiguous(a)});
  REQUIRE_GRADCHECK([](const V& x) { return x[0].flatten(1); }, {a});
  REQUIRE_GRADCHECK([](const V& x) { return x[0].unsqueeze(1).squeeze(1); }, {a});
  REQUIRE_GRADCHECK([](const V& x) { return x[0].contiguous(); }, {non_contiguous(a)});
}

TEST_CASE("permuting views", "[grad][views]") {
  const Tensor a = random_double({2, 3, 4}, 3);
  REQUIRE_GRADCHECK([](const V& x) { return x[0].permute({2, 0, 1}) * Variable(random_double({4, 2, 3}, 9)); }, {a});
  REQUIRE_GRADCHECK([](const V& x) { return x[0].transpose(0, 2).contiguous(); }, {a});
  REQUIRE_GRADCHECK([](const V& x) { return x[0].t() * 2.0; }, {random_double({3, 5}, 4)});
}

TEST_CASE("region views scatter the gradient back", "[grad][views]") {
  const Tensor a = random_double({4, 6}, 5);
  REQUIRE_GRADCHECK([](const V& x) { return x[0].narrow(1, 1, 3); }, {a});
  REQUIRE_GRADCHECK([](const V& x) { return x[0].slice(1, 0, 6, 2) * 3.0; }, {non_contiguous(a)});
  REQUIRE_GRADCHECK([](const V& x) { return x[0].select(0, 2); }, {a});
  // Two overlapping slices of one input add up.
  REQUIRE_GRADCHECK([](const V& x) { return x[0].narrow(0, 0, 3) + x[0].narrow(0, 1, 3); }, {a});
}

TEST_CASE("expand sums the gradient over broadcast dims", "[grad][views]") {
  REQUIRE_GRADCHECK(
      [](const V& x) {
        return x[0].expand({3, 4, 5}) * Variable(random_double({3, 4, 5}, 7));
      },
      {random_double({4, 1}, 6)});
}

TEST_CASE("dtype casts pass the gradient back in the source dtype", "[grad][views]") {
  Variable x(from_vector<double>({1, 2}), true);
  Variable y = x.to(DType::Float32);
  sum(y * y).backward();
  REQUIRE(x.grad().dtype() == DType::Float64);
  REQUIRE(to_vector<double>(x.grad()) == std::vector<double>{2, 4});
}
