// Gradient checks (first and second order, central differences in float64) of inverse, det,
// slogdet and solve, and the properties of cholesky, qr and svd: reconstruction, triangularity, orthonormality,
// refusals naming the op (their gradients: test_linalg_grad.cpp).
#include <catch2/catch.hpp>
#include <cmath>

#include "tests/common/error_of.h"
#include "tests/common/first_grad.h"
#include "tests/common/gradcheck.h"
#include <ddl/ddl.h>

using namespace ddl;
using ddl::test::error_of;
using ddl::test::first_grad;
using ddl::test::random_double;
using V = std::vector<Variable>;

namespace {
// Random plus n on the diagonal: far from singular.
Tensor well(const Shape& s, uint64_t seed) {
  const int64_t n = s[s.size() - 1];
  std::vector<double> d(static_cast<size_t>(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i) d[i * n + i] = static_cast<double>(n);
  return add(random_double(s, seed), from_vector<double>(d, {n, n}));
}
double max_abs(const Tensor& t) { return to_vector<double>(amax(abs(t)))[0]; }
}  // namespace

TEST_CASE("inverse, det and solve: gradients and second derivatives", "[grad][linalg]") {
  const Tensor a = well({2, 3, 3}, 1);
  const Tensor b = random_double({2, 3, 2}, 2);
  REQUIRE_GRADCHECK([](const V& x) { return inverse(x[0]); }, {a});
  REQUIRE_GRADCHECK(first_grad([](const V& x) { return inverse(x[0]); }, 0), {a});
  REQUIRE_GRADCHECK([](const V& x) { return det(x[0]); }, {a});
  REQUIRE_GRADCHECK(first_grad([](const V& x) { return det(x[0]); }, 0), {a});
  const auto logabsdet = [](const V& x) { return std::get<1>(slogdet(x[0])); };
  REQUIRE_GRADCHECK(logabsdet, {a});
  REQUIRE_GRADCHECK(first_grad(logabsdet, 0), {a});
  REQUIRE_GRADCHECK([](const V& x) { return solve(x[0], x[1]); }, {a, b});
  REQUIRE_GRADCHECK(first_grad([](const V& x) { return solve(x[0], x[1]); }, 0), {a, b});
  REQUIRE_GRADCHECK(first_grad([](const V& x) { return solve(x[0], x[1]); }, 1), {a, b});
  // a vector right-hand side broadcast over A's batch: its gradient sums the batch
  REQUIRE_GRADCHECK([](const V& x) { return solve(x[0], x[1]); }, {a, random_double({3}, 3)});
}

TEST_CASE("inverse, det and solve: values and refusals", "[linalg]") {
  const Tensor a = well({3, 3}, 4);
  REQUIRE(max_abs(sub(matmul(a, inverse(a)), from_vector<double>({1, 0, 0, 0, 1, 0, 0, 0, 1}, {3, 3}))) < 1e-12);
  REQUIRE(to_vector<double>(det(from_vector<double>({2, 1, 1, 3}, {2, 2})))[0] == Approx(5.0));
  REQUIRE(to_vector<double>(det(zeros({0, 0}, DType::Float64)))[0] == 1.0);
  const Tensor singular = from_vector<double>({1, 2, 2, 4}, {2, 2});
  REQUIRE(to_vector<double>(det(singular))[0] == 0.0);
  auto [sg, la] = slogdet(from_vector<double>({0, 1, 1, 0}, {2, 2}));  // one row swap: det -1
  REQUIRE(to_vector<double>(sg)[0] == -1.0);
  REQUIRE(to_vector<double>(la)[0] == 0.0);
  REQUIRE(std::isinf(to_vector<double>(std::get<1>(slogdet(singular)))[0]));
  REQUIRE(error_of([&] { inverse(singular); }).find("inverse: ") == 0);
  REQUIRE(error_of([&] { solve(singular, ones({2}, DType::Float64)); }).find("solve: ") == 0);
  REQUIRE(error_of([] { inverse(zeros({2, 3})); }).find("square") != std::string::npos);
  REQUIRE(error_of([] { det(zeros({2, 2}, DType::Int64)); }).find("det: ") == 0);
}

TEST_CASE("cholesky, qr and svd: factorisations and refusals", "[linalg]") {
  const Tensor m = random_double({4, 4}, 5);
  const Tensor a = add(matmul(m, m.t()), from_vector<double>({4, 0, 0, 0, 0, 4, 0, 0, 0, 0, 4, 0, 0, 0, 0, 4}, {4, 4}));
  const Tensor l = cholesky(a);
  REQUIRE(max_abs(sub(matmul(l, l.t()), a)) < 1e-12);
  REQUIRE(to_vector<double>(l)[1] == 0.0);  // upper triangle zero
  REQUIRE(error_of([] {
            cholesky(from_vector<double>({1, 2, 2, 1}, {2, 2}));
          }).find("positive-definite") != std::string::npos);
  const Tensor r5 = random_double({2, 5, 3}, 7);
  auto [q, r] = qr(r5);
  REQUIRE(q.shape() == Shape{2, 5, 3});
  REQUIRE(r.shape() == Shape{2, 3, 3});
  REQUIRE(max_abs(sub(matmul(q, r), r5)) < 1e-12);
  REQUIRE(max_abs(sub(matmul(q.transpose(-1, -2), q), from_vector<double>({1, 0, 0, 0, 1, 0, 0, 0, 1}, {3, 3}))) <
          1e-12);
  auto [u, s, vh] = svd(r5);
  REQUIRE(s.shape() == Shape{2, 3});
  REQUIRE(max_abs(sub(matmul(mul(u, s.unsqueeze(-2)), vh), r5)) < 1e-12);
  // gradients: tests/autograd/test_linalg_grad.cpp
}
