// matmul: known values, transposed views read in place, batching, 1-D operands,
// cross-check of float32 GEMM against float64, errors.
#include <catch2/catch.hpp>

#include "tests/common/values.h"
#include <ddl/ddl.h>

using namespace ddl;
using ddl::test::v;

namespace {

// Reference product in float64 by explicit loops.
Tensor naive_matmul(const Tensor& a, const Tensor& b) {
  const Tensor ad = a.to(DType::Float64).contiguous(), bd = b.to(DType::Float64).contiguous();
  const int64_t M = a.size(0), K = a.size(1), N = b.size(1);
  Tensor c = zeros({M, N}, DType::Float64);
  const double *pa = ad.data<double>(), *pb = bd.data<double>();
  double* pc = c.data<double>();
  for (int64_t i = 0; i < M; ++i)
    for (int64_t k = 0; k < K; ++k)
      for (int64_t j = 0; j < N; ++j) pc[i * N + j] += pa[i * K + k] * pb[k * N + j];
  return c;
}
}  // namespace

TEST_CASE("2-D product of known matrices", "[matmul]") {
  Tensor a = from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = from_vector<float>({7, 8, 9, 10, 11, 12}, {3, 2});
  REQUIRE(v(matmul(a, b)) == std::vector<double>{58, 64, 139, 154});
  REQUIRE(v(matmul(b.t(), a.t())) == std::vector<double>{58, 139, 64, 154});
  REQUIRE(v(matmul(a, from_vector<float>({1, 1, 1}))) == std::vector<double>{6, 15});
  REQUIRE(matmul(from_vector<float>({1, 1}), a).shape() == Shape{3});
}

TEST_CASE("float32 GEMM agrees with a float64 reference on odd shapes and views", "[matmul]") {
  Generator g(2);
  for (auto [M, K, N] : std::vector<std::array<int64_t, 3>>{{1, 1, 1}, {3, 17, 5}, {65, 127, 33}, {128, 300, 200}}) {
    Tensor a = randn({M, K}, g), b = randn({K, N}, g);
    const Tensor ref = naive_matmul(a, b);
    REQUIRE(allclose(matmul(a, b).to(DType::Float64), ref, 1e-4, 1e-4));
    // Transposed storage read in place.
    Tensor at = a.t().contiguous().t(), bt = b.t().contiguous().t();
    if (M > 1 && K > 1) REQUIRE_FALSE(at.is_contiguous());
    REQUIRE(allclose(matmul(at, bt).to(DType::Float64), ref, 1e-4, 1e-4));
    // A sliced (strided rows) operand.
    Tensor wide = randn({M, 2 * K}, g);
    Tensor sliced = wide.narrow(1, 0, K);
    REQUIRE(allclose(matmul(sliced, b).to(DType::Float64), naive_matmul(sliced, b), 1e-4, 1e-4));
  }
}

TEST_CASE("batched matmul broadcasts batch dims", "[matmul]") {
  Generator g(3);
  Tensor a = randn({2, 3, 4, 5}, g, DType::Float64), b = randn({3, 5, 6}, g, DType::Float64);
  Tensor c = matmul(a, b);
  REQUIRE(c.shape() == Shape{2, 3, 4, 6});
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      REQUIRE(allclose(c.select(0, i).select(0, j), naive_matmul(a.select(0, i).select(0, j), b.select(0, j)), 1e-12,
                       1e-12));
  Tensor w = randn({5, 6}, g, DType::Float64);
  Tensor cw = matmul(a, w);
  REQUIRE(allclose(cw.select(0, 1).select(0, 2), naive_matmul(a.select(0, 1).select(0, 2), w), 1e-12, 1e-12));
  // Batched transposed operand.
  Tensor bt = randn({3, 6, 5}, g, DType::Float64).transpose(1, 2);
  REQUIRE(allclose(matmul(a, bt).select(0, 0).select(0, 1), naive_matmul(a.select(0, 0).select(0, 1), bt.select(0, 1)),
                   1e-12, 1e-12));
}

TEST_CASE("matmul and linear report shape mismatches", "[matmul]") {
  REQUIRE_THROWS_WITH(matmul(zeros({64, 512}), zeros({256, 10})),
                      Catch::Contains("matmul: cannot multiply [64, 512] by [256, 10]"));
  REQUIRE_THROWS_WITH(matmul(zeros({2, 2}), zeros({2, 2}, DType::Float64)), Catch::Contains("matmul"));
  REQUIRE_THROWS_WITH(linear(zeros({4, 3}), zeros({2, 5}), Tensor()),
                      Catch::Contains("linear: input [4, 3] does not match weight [2, 5]"));
  Tensor y = linear(ones({4, 3}), ones({2, 3}), from_vector<float>({1, -1}));
  REQUIRE(v(y.select(0, 0)) == std::vector<double>{4, 2});
}

TEST_CASE("GEMM gives identical bits for 1 and 2 threads", "[matmul][threads]") {
  Generator g(4);
  Tensor a = randn({300, 700}, g), b = randn({700, 500}, g);
  const int n = get_num_threads();
  set_num_threads(1);
  const auto one = to_vector<float>(matmul(a, b));
  set_num_threads(2);
  const auto two = to_vector<float>(matmul(a, b));
  set_num_threads(n);
  REQUIRE(one == two);
}
