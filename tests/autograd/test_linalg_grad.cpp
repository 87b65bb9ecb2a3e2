// Gradients of cholesky, qr and svd against central finite differences (float64): each output on
// its own and together, square, tall, wide and batched inputs; for svd only losses invariant to
// the singular vectors' signs, as PyTorch's own gradcheck of svd; second derivatives likewise.
#include <catch2/catch.hpp>

#include "tests/common/first_grad.h"
#include "tests/common/gradcheck.h"
#include <ddl/ddl.h>

using namespace ddl;
using ddl::test::random_double;
using V = std::vector<Variable>;

namespace {
Variable mT(const Variable& x) { return x.transpose(-1, -2); }
Variable flat(const std::vector<Variable>& parts) {
  std::vector<Variable> f;
  for (const Variable& p : parts) f.push_back(p.flatten());
  return cat(f, 0);
}
// X X^T + n I: symmetric positive-definite for every X, so finite differences in X stay in the domain.
Variable spd(const Variable& x) {
  const int64_t n = x.size(-1);
  const Tensor i = arange(n);
  const Tensor eye = eq(i.reshape({n, 1}), i.reshape({1, n})).to(DType::Float64);
  return add(matmul(x, mT(x)), Variable(mul(eye, static_cast<double>(n))));
}
}  // namespace

TEST_CASE("cholesky's gradient matches finite differences", "[grad][linalg]") {
  const auto chol = [](const V& x) { return cholesky(spd(x[0])); };
  REQUIRE_GRADCHECK(chol, {random_double({3, 3}, 1)});
  REQUIRE_GRADCHECK(chol, {random_double({2, 4, 4}, 2)});
  // Directly on a symmetric A: PyTorch's gradient is symmetric, so it equals that of cholesky((A + A^T) / 2).
  const Tensor a = spd(Variable(random_double({4, 4}, 3))).data();
  REQUIRE_GRADCHECK([](const V& x) { return cholesky(mul(add(x[0], mT(x[0])), 0.5)); }, {a});
  Variable av(a, true);
  sum(mul(cholesky(av), Variable(random_double({4, 4}, 4)))).backward();
  REQUIRE(allclose(av.grad(), av.grad().transpose(0, 1), 1e-12, 1e-12));
}

TEST_CASE("qr's gradient matches finite differences: square, tall, wide, batched", "[grad][linalg]") {
  const auto q_of = [](const V& x) { return std::get<0>(qr(x[0])); };
  const auto r_of = [](const V& x) { return std::get<1>(qr(x[0])); };
  const auto both = [](const V& x) {
    auto [q, r] = qr(x[0]);
    return flat({q, r});
  };
  for (const Shape& s : {Shape{3, 3}, Shape{5, 3}, Shape{3, 5}, Shape{2, 4, 2}, Shape{2, 2, 4}}) {
    INFO("A " << s);
    const Tensor a = random_double(s, 10 + s.numel());
    REQUIRE_GRADCHECK(q_of, {a});
    REQUIRE_GRADCHECK(r_of, {a});
    REQUIRE_GRADCHECK(both, {a});
  }
}

TEST_CASE("svd's gradient matches finite differences for sign-invariant losses", "[grad][linalg]") {
  const auto s_of = [](const V& x) { return std::get<1>(svd(x[0])); };
  // U diag(S^2) Vh: every output, its signs cancelled pair by pair
  const auto usv = [](const V& x) {
    auto [u, s, vh] = svd(x[0]);
    return matmul(mul(u, mul(s, s).unsqueeze(-2)), vh);
  };
  // the projectors U U^T and Vh^T Vh, each through one factor alone
  const auto uu = [](const V& x) {
    const Variable u = std::get<0>(svd(x[0]));
    return matmul(u, mT(u));
  };
  const auto vv = [](const V& x) {
    const Variable vh = std::get<2>(svd(x[0]));
    return matmul(mT(vh), vh);
  };
  const auto abs_uv = [](const V& x) {
    auto [u, s, vh] = svd(x[0]);
    return flat({abs(u), s, abs(vh)});
  };
  for (const Shape& s : {Shape{3, 3}, Shape{5, 3}, Shape{3, 5}, Shape{2, 4, 3}}) {
    INFO("A " << s);
    const Tensor a = random_double(s, 20 + s.numel());
    REQUIRE_GRADCHECK(s_of, {a});
    REQUIRE_GRADCHECK(usv, {a});
    REQUIRE_GRADCHECK(uu, {a});
    REQUIRE_GRADCHECK(vv, {a});
    REQUIRE_GRADCHECK(abs_uv, {a});
  }
}

TEST_CASE("cholesky, qr and svd: second derivatives match finite differences", "[grad][linalg]") {
  using test::first_grad;
  const auto chol = [](const V& x) { return cholesky(spd(x[0])); };
  REQUIRE_GRADCHECK(first_grad(chol, 0), {random_double({3, 3}, 31)});
  const auto both = [](const V& x) {
    auto [q, r] = qr(x[0]);
    return flat({q, r});
  };
  const auto usv = [](const V& x) {
    auto [u, s, vh] = svd(x[0]);
    return flat({matmul(mul(u, mul(s, s).unsqueeze(-2)), vh), s, matmul(u, mT(u)), matmul(mT(vh), vh)});
  };
  for (const Shape& s : {Shape{3, 3}, Shape{4, 2}, Shape{2, 4}}) {
    INFO("A " << s);
    REQUIRE_GRADCHECK(first_grad(both, 0), {random_double(s, 32 + s.numel())});
    REQUIRE_GRADCHECK(first_grad(usv, 0), {random_double(s, 42 + s.numel())});
  }
}
