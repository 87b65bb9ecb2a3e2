// Integer convolutions on the CPU, as PyTorch 1.13 computes them (exact sums, wrapping
// on overflow): conv2d, conv1d and conv_transpose2d for int64 against golden values
// (tests/golden/conv_int.py), int32 and uint8 agreeing with int64, and bool refused
// with a ddl::Error that names the op.
#include <catch2/catch.hpp>
#include <vector>

#include "tests/common/values.h"
#include <ddl/autograd/functions.h>
#include <ddl/tensor/ops.h>

using namespace ddl;
using ddl::test::params;

namespace {

// (7 i mod m) - shift for the flat index i, as ints() in the golden script.
Tensor mod_ints(const Shape& s, int64_t m, int64_t shift, DType dt = DType::Int64) {
  std::vector<int64_t> v(static_cast<size_t>(s.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = int64_t(i) * 7 % m - shift;
  return from_vector(v, s).to(dt);
}

// ---- golden values printed by tests/golden/conv_int.py ----
// conv2d_y [2, 6, 3, 8]
const std::vector<int64_t> conv2d_y = {
    -11, -3,  -7, -21, -2,  17,  -5,  -5, 7,   7,  -35, 6,   25,  -22, -3,  5,   -1,  -20, 2,   20,  -17, 1,   9,  -9,
    16,  -2,  15, -7,  -7,  26,  0,   -4, -1,  3,  -3,  -7,  22,  -4,  -6,  -3,  8,   -6,  1,   20,  -5,  3,   -9, 2,
    -11, 0,   -7, 18,  -1,  -9,  6,   -2, -8,  0,  20,  -9,  -5,  10,  -3,  15,  -2,  24,  -9,  -9,  13,  -9,  14, -1,
    -8,  -1,  6,  -12, 3,   -15, -2,  6,  -7,  -4, -23, 24,  -17, -3,  10,  -12, -2,  -2,  16,  -3,  -11, 3,   -4, 10,
    -6,  8,   0,  -26, 3,   21,  -9,  -5, 11,  -4, -25, 19,  19,  -25, -4,  11,  -5,  -9,  21,  3,   -26, 0,   8,  -6,
    15,  1,   8,  -6,  2,   21,  3,   3,  -7,  15, 2,   -12, 29,  -18, 1,   -2,  11,  3,   -10, 8,   -7,  11,  4,  -3,
    3,   -11, -4, -7,  -21, -2,  6,   -5, -15, 7,  1,   -35, 6,   25,  -11, -3,  7,   -1,  -27, 2,   20,  -17, -6, 9,
    1,   16,  -7, 15,  -7,  -7,  26,  0,  17,  -1, 12,  -3,  -7,  22,  2,   -6,  0,   8,   -7,  1,   20,  -5,  2,  -9,
    0,   -11, 1,  -7,  18,  -1,  -8,  6,  -5,  -8, -6,  20,  -9,  -5,  1,   -3,  -6,  -2,  24,  -9,  -9,  13,  -4, 14,
    -4,  -8,  2,  6,   -12, 3,   -10, -2, -10, -7, 7,   -23, 24,  -17, -12, 10,  -13, -2,  -9,  16,  -3,  -11, 4,  -4,
    2,   -6,  4,  0,   -26, 3,   20,  -9, -7,  11, -3,  -25, 19,  19,  -19, -4,  10,  -5,  -16, 21,  3,   -26, 0,  8,
    7,   15,  0,  8,   -6,  2,   14,  3,  15,  -7, 16,  2,   -12, 29,  -7,  1,   -3,  11,  16,  -10, 8,   -7,  0,  4};
// conv1d_y [2, 4, 5]
const std::vector<int64_t> conv1d_y = {14,  15, 1,  0,  -30, 3,  8,   22, 23,  19,  -2, -8, -36, -38,
                                       -1,  13, 21, 21, 21,  -1, -37, -5, 7,   19,  9,  16, 2,   -23,
                                       -48, -8, 10, 30, 28,  26, 6,   -6, -57, -31, -5, 5};
// convt_y [1, 3, 7, 4]
const std::vector<int64_t> convt_y = {-17, -14, 5,   -32, -1, -7, 4,   1,  -1, 7,   -29, 12, -22, 4,   4,  -22, 4,
                                      -27, 25,  -10, 1,   4,  -7, -1,  -4, -4, -4,  -4,  -3, 32,  -20, 11, 3,   -1,
                                      14,  9,   19,  -22, 14, 6,  13,  15, -3, -8,  -25, 12, -7,  -10, 12, -2,  -9,
                                      19,  3,   3,   3,   3,  17, -11, -4, 10, -12, -9,  10, -27, -10, -5, 13,  11,
                                      4,   12,  -24, 17,  7,  12, -3,  1,  9,  -22, 30,  -5, 1,   1,   1,  1};

}  // namespace

TEST_CASE("conv2d, conv1d, conv_transpose2d: int64 as PyTorch") {
  const Conv2dParams p = params({2, 1}, {1, 2}, {1, 2}, 2);
  const Tensor y = conv2d(mod_ints({2, 4, 5, 6}, 11, 5), mod_ints({6, 2, 3, 2}, 5, 2), mod_ints({6}, 9, 4), p);
  REQUIRE(y.dtype() == DType::Int64);
  REQUIRE(y.shape() == Shape{2, 6, 3, 8});
  CHECK(to_vector<int64_t>(y) == conv2d_y);
  // The Variable ops (integer tensors never require grad).
  const Variable y1 = conv1d(Variable(mod_ints({2, 3, 9}, 13, 6)), Variable(mod_ints({4, 3, 3}, 5, 2)),
                             Variable(mod_ints({4}, 9, 4)), 2, 1);
  REQUIRE(y1.shape() == Shape{2, 4, 5});
  CHECK(to_vector<int64_t>(y1.data()) == conv1d_y);
  const Tensor yt = conv_transpose2d(mod_ints({1, 4, 3, 4}, 11, 5), mod_ints({4, 3, 2, 3}, 5, 2), mod_ints({3}, 9, 4),
                                     params({2, 1}, {0, 1}, {1, 1}), {1, 0});
  REQUIRE(yt.shape() == Shape{1, 3, 7, 4});
  CHECK(to_vector<int64_t>(yt) == convt_y);
  // Unbatched input, and 1x1 kernels (the pointwise path without im2col).
  CHECK(
      to_vector<int64_t>(conv2d(mod_ints({4, 5, 6}, 11, 5).unsqueeze(0), mod_ints({6, 2, 3, 2}, 5, 2), Tensor(), p)) ==
      to_vector<int64_t>(conv2d(mod_ints({4, 5, 6}, 11, 5), mod_ints({6, 2, 3, 2}, 5, 2), Tensor(), p)));
  const Tensor x = mod_ints({3, 4, 5, 5}, 11, 5), w1 = mod_ints({2, 4, 1, 1}, 5, 2);
  CHECK(to_vector<int64_t>(conv2d(x, w1, Tensor())) ==
        to_vector<int64_t>(conv2d(x.to(DType::Float64), w1.to(DType::Float64), Tensor()).to(DType::Int64)));
}

TEST_CASE("conv2d: int32 and uint8 agree with int64, wrapping as PyTorch") {
  const Conv2dParams p = params({1, 1}, {1, 1}, {1, 1});
  const Tensor x = mod_ints({2, 3, 6, 5}, 11, 5), w = mod_ints({4, 3, 3, 3}, 5, 2), b = mod_ints({4}, 9, 4);
  const Tensor y64 = conv2d(x, w, b, p);
  const Tensor y32 = conv2d(x.to(DType::Int32), w.to(DType::Int32), b.to(DType::Int32), p);
  REQUIRE(y32.dtype() == DType::Int32);
  CHECK(to_vector<int64_t>(y32) == to_vector<int64_t>(y64));
  // uint8 sums wrap modulo 256 (torch.uint8 does): nonnegative inputs, then y64 mod 256.
  const Tensor xu = mod_ints({2, 3, 6, 5}, 11, 0), wu = mod_ints({4, 3, 3, 3}, 5, 0);
  const std::vector<int64_t> wide = to_vector<int64_t>(conv2d(xu, wu, Tensor(), p));
  const std::vector<int64_t> narrow = to_vector<int64_t>(conv2d(xu.to(DType::UInt8), wu.to(DType::UInt8), Tensor(), p));
  REQUIRE(wide.size() == narrow.size());
  bool wrapped = false;
  for (size_t i = 0; i < wide.size(); ++i) {
    CHECK(narrow[i] == wide[i] % 256);
    wrapped = wrapped || wide[i] >= 256;
  }
  CHECK(wrapped);
}

TEST_CASE("conv2d: bool and mixed integer/float operands are refused naming the op") {
  const Tensor x = mod_ints({1, 2, 4, 4}, 3, 1), w = mod_ints({1, 2, 3, 3}, 3, 1);
  REQUIRE_THROWS_WITH(conv2d(x.to(DType::Bool), w.to(DType::Bool), Tensor()),
                      Catch::Contains("conv2d: ") && Catch::Contains("bool"));
  REQUIRE_THROWS_WITH(conv2d(x, w.to(DType::Float32), Tensor()),
                      Catch::Contains("conv2d: ") && Catch::Contains("dtypes must match"));
  REQUIRE_THROWS_WITH(conv_transpose2d(x.to(DType::Bool), w.to(DType::Bool), Tensor()),
                      Catch::Contains("conv_transpose2d") && Catch::Contains("bool"));
}
