// dropout: identity cases, keep fraction and scaling, reproducible masks, and
// the gradient (mask / (1 − p)).
#include <catch2/catch.hpp>
#include <vector>

#include "tests/common/gradcheck.h"
#include <ddl/autograd/functions.h>
#include <ddl/tensor/ops.h>

using namespace ddl;

TEST_CASE("dropout: identity when p == 0 or not training, zeros when p == 1", "[dropout]") {
  Generator gen(1);
  Variable x(test::random_double({4, 5}, 1), true);
  REQUIRE(dropout(x, 0.0, true, gen).impl() == x.impl());
  REQUIRE(dropout(x, 0.7, false, gen).impl() == x.impl());
  REQUIRE(gen.offset() == 0);  // no random numbers drawn

  Variable y = dropout(x, 1.0, true, gen);
  REQUIRE(allclose(y.data(), zeros({4, 5}, DType::Float64)));
  y.backward(ones({4, 5}, DType::Float64));
  REQUIRE(allclose(x.grad(), zeros({4, 5}, DType::Float64)));
}

TEST_CASE("dropout: keeps about 1 - p of the elements, scaled by 1 / (1 - p)", "[dropout]") {
  Generator gen(42);
  const double p = 0.3;
  const int64_t n = 1 << 20;
  Tensor x = full({n}, 2.0);
  Tensor y = dropout(Variable(x), p, true, gen).data();
  const std::vector<float> v = to_vector<float>(y);
  int64_t kept = 0;
  for (float e : v) {
    if (e != 0.0f) {
      ++kept;
      REQUIRE(e == Approx(2.0 / (1.0 - p)));
    }
  }
  // The standard deviation of the kept fraction is sqrt(p(1 − p)/n) ≈ 0.00045.
  REQUIRE(static_cast<double>(kept) / n == Approx(1.0 - p).margin(0.003));
  // Inverted dropout preserves the mean.
  REQUIRE(mean(y).item() == Approx(2.0).margin(0.02));
}

TEST_CASE("dropout: the same generator state gives the same mask", "[dropout]") {
  Tensor x = ones({64, 33});
  Generator a(9), b(9);
  Tensor ya = dropout(Variable(x), 0.5, true, a).data();
  Tensor yb = dropout(Variable(x), 0.5, true, b).data();
  REQUIRE(to_vector<float>(ya) == to_vector<float>(yb));
  // The generator advanced, so the next draw differs.
  Tensor yc = dropout(Variable(x), 0.5, true, a).data();
  REQUIRE(to_vector<float>(ya) != to_vector<float>(yc));
}

TEST_CASE("dropout of a 16-bit input scales in float32 and rounds once", "[dropout][half]") {
  // 1 / (1 - 0.1) is 1.109375 in bfloat16: a 16-bit mask would shrink every kept value.
  const double p = 0.1;
  for (const DType h : {DType::BFloat16, DType::Float16}) {
    INFO(h);
    Generator a(12), b(12);
    const Tensor x = test::random_double({40, 50}, 3, -2.0, 2.0).to(h);
    Variable xv(x, true);
    Variable y = dropout(xv, p, true, a);
    REQUIRE(y.data().dtype() == h);
    const Tensor mask = mul(bernoulli(x.shape(), 1.0 - p, b), 1.0 / (1.0 - p));  // float32
    REQUIRE(to_vector<double>(y.data()) == to_vector<double>(mul(x.to(DType::Float32), mask).to(h)));
    const Tensor g = test::random_double({40, 50}, 4, -1.0, 1.0).to(h);
    y.backward(g);
    REQUIRE(xv.grad().dtype() == h);
    REQUIRE(to_vector<double>(xv.grad()) == to_vector<double>(mul(g.to(DType::Float32), mask).to(h)));
  }
}

TEST_CASE("dropout: gradient is mask / (1 - p)", "[dropout][grad]") {
  const double p = 0.4;
  Generator gen(5);
  Variable x(test::random_double({6, 7}, 2, 0.5, 1.5), true);
  Variable y = dropout(x, p, true, gen);
  Tensor g = test::random_double({6, 7}, 3);
  y.backward(g);
  // y = x·m, so m = y / x and dL/dx = g·m, with m in {0, 1 / (1 − p)}.
  const std::vector<double> yv = to_vector<double>(y.data()), xv = to_vector<double>(x.data());
  const std::vector<double> gv = to_vector<double>(g), dx = to_vector<double>(x.grad());
  for (size_t i = 0; i < yv.size(); ++i) {
    const double m = yv[i] / xv[i];
    REQUIRE((m == Approx(0.0).margin(1e-12) || m == Approx(1.0 / (1.0 - p))));
    REQUIRE(dx[i] == Approx(gv[i] * m));
  }
  // The same check through finite differences, redrawing the same mask each call.
  const auto f = [p](const std::vector<Variable>& v) {
    Generator g2(11);
    return dropout(v[0], p, true, g2);
  };
  REQUIRE_GRADCHECK(f, {test::non_contiguous(test::random_double({3, 4, 5}, 4))});
  REQUIRE_THROWS_WITH(dropout(x, 1.5, true, gen), Catch::Contains("dropout") && Catch::Contains("1.5"));
}
