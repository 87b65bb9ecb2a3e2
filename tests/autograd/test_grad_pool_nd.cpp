// Finite-difference gradient checks of the N-d convolutions and pools (autograd/ops/conv_nd.h,
// pool_nd.h), over stride, padding, dilation, groups, ceil_mode and bias; and max pooling's tie rule.
#include <catch2/catch.hpp>
#include <limits>

#include "tests/common/gradcheck.h"
#include <ddl/ddl.h>

using namespace ddl;
using ddl::test::random_double;
using V = std::vector<Variable>;

TEST_CASE("conv3d gradients in x, weight and bias", "[grad][conv_nd]") {
  REQUIRE_GRADCHECK([](const V& v) { return conv3d(v[0], v[1], v[2]); },
                    {random_double({2, 2, 3, 4, 4}, 1), random_double({3, 2, 2, 2, 3}, 2), random_double({3}, 3)});
  REQUIRE_GRADCHECK(
      [](const V& v) {
        return conv3d(v[0], v[1], v[2], {2, 1, 2}, {1, 0, 1}, {1, 2, 1}, 2);
      },
      {random_double({1, 4, 5, 5, 4}, 4), random_double({4, 2, 3, 2, 2}, 5), random_double({4}, 6)});
  REQUIRE_GRADCHECK([](const V& v) { return conv3d(v[0], v[1], Variable(), 1, 1); },
                    {random_double({2, 3, 3, 3}, 7), random_double({2, 2, 3, 3, 3}, 8)});
}

TEST_CASE("conv_transpose1d and conv_transpose3d gradients", "[grad][conv_nd]") {
  REQUIRE_GRADCHECK([](const V& v) { return conv_transpose1d(v[0], v[1], v[2], 2, 1, 1, 1, 2); },
                    {random_double({2, 3, 5}, 11), random_double({3, 2, 3}, 12), random_double({2}, 13)});
  REQUIRE_GRADCHECK([](const V& v) { return conv_transpose1d(v[0], v[1], Variable(), 1, 0, 0, 2); },
                    {random_double({4, 5}, 14), random_double({4, 1, 2}, 15)});
  REQUIRE_GRADCHECK(
      [](const V& v) {
        return conv_transpose3d(v[0], v[1], v[2], {2, 1, 2}, {1, 0, 0}, {1, 0, 1}, 2, {1, 2, 1});
      },
      {random_double({1, 4, 3, 3, 2}, 16), random_double({4, 1, 3, 2, 2}, 17), random_double({2}, 18)});
}

TEST_CASE("1-D and 3-D max and average pooling gradients", "[grad][pool_nd]") {
  const Tensor x1 = random_double({2, 3, 9}, 21), x3 = random_double({1, 2, 5, 6, 5}, 22);
  REQUIRE_GRADCHECK([](const V& v) { return max_pool1d(v[0], 3, 2, 1, 1, true); }, {x1});
  REQUIRE_GRADCHECK([](const V& v) { return max_pool1d(v[0], 2, 1, 0, 3); }, {x1});
  REQUIRE_GRADCHECK([](const V& v) { return max_pool3d(v[0], {2, 3, 2}, {1, 2, 2}, {1, 1, 0}, 1, true); }, {x3});
  REQUIRE_GRADCHECK([](const V& v) { return max_pool3d(v[0], 2, 1, 0, {2, 1, 2}); }, {x3});
  REQUIRE_GRADCHECK([](const V& v) { return avg_pool1d(v[0], 3, 2, 1, true, false); }, {x1});
  REQUIRE_GRADCHECK([](const V& v) { return avg_pool3d(v[0], 3, 2, 1, true, true); }, {x3});
  REQUIRE_GRADCHECK([](const V& v) { return avg_pool3d(v[0], {2, 3, 2}, {1, 2, 3}, {1, 1, 0}, false, false); }, {x3});
}

TEST_CASE("adaptive, LP pooling and max unpooling gradients", "[grad][pool_nd]") {
  const Tensor x1 = random_double({2, 3, 7}, 31), x3 = random_double({1, 2, 5, 4, 7}, 32);
  REQUIRE_GRADCHECK([](const V& v) { return adaptive_avg_pool1d(v[0], 3); }, {x1});
  REQUIRE_GRADCHECK([](const V& v) { return adaptive_avg_pool3d(v[0], {2, 3, 4}); }, {x3});
  REQUIRE_GRADCHECK([](const V& v) { return adaptive_max_pool1d(v[0], 4); }, {x1});
  REQUIRE_GRADCHECK([](const V& v) { return adaptive_max_pool3d(v[0], {3, 2, 5}); }, {x3});
  const Tensor pos = random_double({2, 3, 7}, 33, 0.5, 2.0);
  REQUIRE_GRADCHECK([](const V& v) { return lp_pool1d(v[0], 2.0, 2, 1); }, {pos});
  REQUIRE_GRADCHECK([](const V& v) { return lp_pool1d(v[0], 1.5, 3, 2, true); }, {pos});
  REQUIRE_GRADCHECK([](const V& v) { return lp_pool2d(v[0], 3.0, {2, 3}, 1); }, {random_double({2, 4, 5}, 34, 0.5, 2)});
  for (int n : {1, 2, 3}) {
    const Tensor x = n == 1   ? random_double({2, 2, 8}, 35)
                     : n == 2 ? random_double({2, 6, 6}, 36)
                              : random_double({1, 1, 4, 4, 6}, 37);
    const Variable xv(x);
    const auto [y, idx] = n == 1   ? max_pool1d_with_indices(xv, 2)
                          : n == 2 ? max_pool2d_with_indices(xv, Pool2dParams{})
                                   : max_pool3d_with_indices(xv, 2);
    INFO("n = " << n);
    REQUIRE_GRADCHECK(
        [n, idx = idx](const V& v) {
          return n == 1 ? max_unpool1d(v[0], idx, 2) : n == 2 ? max_unpool2d(v[0], idx, 2) : max_unpool3d(v[0], idx, 2);
        },
        {y.data()});
    // Unpooling the pooled maxima puts each back where it came from.
    const Variable back = n == 1 ? max_unpool1d(y, idx, 2) : n == 2 ? max_unpool2d(y, idx, 2) : max_unpool3d(y, idx, 2);
    REQUIRE(back.shape() == x.shape());
    const auto b = to_vector<double>(back.data()), yv = to_vector<double>(y.data());
    const auto iv = to_vector<int64_t>(idx);
    const int64_t vol = x.numel() / x.size(0) / (n == 2 ? 1 : x.size(1)), per = y.numel() / (x.numel() / vol);
    for (size_t j = 0; j < yv.size(); ++j) REQUIRE(b[(j / per) * vol + iv[j]] == yv[j]);
  }
}

TEST_CASE("max pooling ties: the first maximum in window order wins and takes the gradient", "[pool_nd]") {
  // All-equal input, overlapping windows: PyTorch returns each window's first element.
  Variable x(ones({1, 1, 3, 3, 3}, DType::Float64), true);
  auto [y, idx] = max_pool3d_with_indices(x, 2, 1);
  REQUIRE(to_vector<int64_t>(idx) == std::vector<int64_t>{0, 1, 3, 4, 9, 10, 12, 13});
  sum(y).backward();
  std::vector<double> expect(27, 0);
  for (int64_t i : {0, 1, 3, 4, 9, 10, 12, 13}) expect[i] = 1;
  REQUIRE(to_vector<double>(x.grad()) == expect);
  // With padding the first in-bounds element wins, not a padding slot.
  Variable z(ones({1, 1, 4}, DType::Float64), true);
  auto [yz, iz] = max_pool1d_with_indices(z, 3, 2, 1);
  REQUIRE(to_vector<int64_t>(iz) == std::vector<int64_t>{0, 1});
  // Several NaNs: PyTorch reports the last one, and only it gets the gradient.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Variable n(from_vector<double>({1, nan, 2, nan, 0}, {1, 1, 5}), true);
  auto [yn, in] = max_pool1d_with_indices(n, 4, 1);
  REQUIRE(to_vector<int64_t>(in) == std::vector<int64_t>{3, 3});
  sum(yn).backward();
  REQUIRE(to_vector<double>(n.grad()) == std::vector<double>{0, 0, 0, 2, 0});
  // Adaptive windows of different lengths, a tie in the longer one.
  auto [ya, ia] = adaptive_max_pool1d_with_indices(Variable(from_vector<double>({1, 3, 3, 2, 3}, {1, 5})), 2);
  REQUIRE(to_vector<int64_t>(ia) == std::vector<int64_t>{1, 2});
}
