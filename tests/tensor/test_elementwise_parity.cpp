// Elementwise semantics checked against PyTorch 1.13 (values from
// tests/golden/elementwise_parity.py, quoted next to each check): NaN and -0.0 through
// relu/abs/clamp/maximum, the result dtype of integer and bool tensors with
// scalars, bool arithmetic, allclose, and which calls refuse and with what name.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "tests/common/values.h"
#include <ddl/ddl.h>

using namespace ddl;
using ddl::test::v;

namespace {
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
const DType kFloats[] = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16};
const DType kInts[] = {DType::Int64, DType::Int32, DType::UInt8};

Tensor f(std::vector<double> x, DType t) { return from_vector<double>(x).to(t); }
Tensor ints_as(std::vector<int64_t> x, DType t) { return from_vector<int64_t>(x).to(t); }
Tensor bools(std::vector<int64_t> x, Shape s = {}) {
  return from_vector<int64_t>(x, s.empty() ? Shape{static_cast<int64_t>(x.size())} : s).to(DType::Bool);
}
bool same(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || (a == b && std::signbit(a) == std::signbit(b));
}
void require_same(const Tensor& t, const std::vector<double>& want) {
  const auto got = v(t);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << ", want " << want[i]);
    REQUIRE(same(got[i], want[i]));
  }
}
}  // namespace

TEST_CASE("relu, abs, clamp, maximum keep NaN and the sign of zero as PyTorch", "[elementwise][parity]") {
  for (DType t : kFloats) {
    INFO(t);
    // torch.relu([nan, -0., 0., -1., 2.]) = [nan, -0., 0., 0., 2.]
    require_same(relu(f({kNan, -0.0, 0.0, -1, 2}, t)), {kNan, -0.0, 0.0, 0.0, 2});
    // torch.abs(-0.) = +0.
    require_same(abs(f({-0.0, kNan, -1.5}, t)), {0.0, kNan, 1.5});
    // torch.clamp([nan, -0., 3., -3.], -1, 1) = [nan, -0., 1., -1.]
    require_same(clamp(f({kNan, -0.0, 3, -3}, t), -1.0, 1.0), {kNan, -0.0, 1, -1});
    // lo > hi gives hi everywhere; a NaN bound gives NaN.
    require_same(clamp(f({0, 1.5, 3}, t), 2.0, 1.0), {1, 1, 1});
    require_same(clamp(f({0, 1.5}, t), kNan, 1.0), {kNan, kNan});
    require_same(clamp(f({0, 1.5}, t), 0.0, kNan), {kNan, kNan});
    // torch.clamp(x, min=nan) leaves x as it is (1.13), as does max=nan.
    require_same(clamp(f({0, 1.5}, t), kNan, std::nullopt), {0, 1.5});
    require_same(clamp(f({0, 1.5}, t), std::nullopt, kNan), {0, 1.5});
    // maximum/minimum: NaN in either operand wins.
    require_same(maximum(f({kNan, 1}, t), f({1, kNan}, t)), {kNan, kNan});
    require_same(minimum(f({kNan, 1}, t), f({1, kNan}, t)), {kNan, kNan});
  }
  Tensor x = f({kNan, 5, -5}, DType::Float32);
  x.clamp_(-1, 1);
  require_same(x, {kNan, 1, -1});
  x.clamp_(1, -1);  // PyTorch: hi everywhere, no error
  require_same(x, {kNan, -1, -1});
}

TEST_CASE("integer and bool tensors with scalars promote as PyTorch's Python scalars", "[elementwise][parity]") {
  for (DType t : kInts) {
    INFO(t);
    const Tensor a = ints_as({1, 2}, t);
    // torch.add(int_tensor, 0.5): float32 (the default dtype), not float64.
    REQUIRE(add(a, 0.5).dtype() == DType::Float32);
    REQUIRE(v(add(a, 0.5)) == std::vector<double>{1.5, 2.5});
    REQUIRE(mul(a, 0.5).dtype() == DType::Float32);
    REQUIRE(sub(a, 0.5).dtype() == DType::Float32);
    REQUIRE(rsub(a, 0.5).dtype() == DType::Float32);
    REQUIRE(v(rsub(a, 0.5)) == std::vector<double>{-0.5, -1.5});
    REQUIRE(div(a, 2.0).dtype() == DType::Float32);
    REQUIRE(pow(a, 0.5).dtype() == DType::Float32);
    // An integral scalar is a Python int: the dtype stays (torch.add(t, 2), pow(t, 2)).
    REQUIRE(add(a, 2.0).dtype() == t);
    REQUIRE(v(pow(a, 2.0)) == std::vector<double>{1, 4});
    REQUIRE(pow(a, 2.0).dtype() == t);
    REQUIRE_THROWS_WITH(pow(a, -1.0), Catch::Contains("pow: integers to negative integer powers"));
    // torch.clamp(int_tensor, 1.5, 3.5) = float32 [1.5, 3.5, 2.]; inf bounds give float32 too.
    const Tensor c = ints_as({1, 5, 2}, t);
    REQUIRE(clamp(c, 1.5, 3.5).dtype() == DType::Float32);
    REQUIRE(v(clamp(c, 1.5, 3.5)) == std::vector<double>{1.5, 3.5, 2});
    REQUIRE(v(clamp(c, -kInf, kInf)) == std::vector<double>{1, 5, 2});
    REQUIRE(clamp(c, -kInf, kInf).dtype() == DType::Float32);
    REQUIRE(v(clamp(c, std::nullopt, 3.5)) == std::vector<double>{1, 3.5, 2});
    REQUIRE(v(clamp(c, -kInf, std::nullopt)) == std::vector<double>{1, 5, 2});
    require_same(clamp(c, kNan, 3.0), {kNan, kNan, kNan});
    REQUIRE(clamp(c, 2.0, 3.0).dtype() == t);
    REQUIRE(v(clamp(c, 2.0, 3.0)) == std::vector<double>{2, 3, 2});
    REQUIRE(v(clamp(c, 4.0, 2.0)) == std::vector<double>{2, 2, 2});
    REQUIRE(v(clamp(c, 2.0, std::nullopt)) == std::vector<double>{2, 5, 2});
    // In place, a float result cannot be written into an integer tensor.
    REQUIRE_THROWS_WITH(c.clone().clamp_(1.5, 3.5), Catch::Contains("can't be cast to the desired output type"));
    REQUIRE_THROWS_WITH(c.clone().add_(0.5), Catch::Contains("add_: result type float32 can't be cast"));
    REQUIRE_THROWS_WITH(c.clone().mul_(0.5), Catch::Contains("mul_: result type float32"));
    REQUIRE_THROWS_WITH(c.clone().add_(f({0.5, 0.5, 0.5}, DType::Float32)), Catch::Contains("add_: result type"));
    Tensor d = c.clone();
    d.mul_(2.0);
    REQUIRE(v(d) == std::vector<double>{2, 10, 4});
  }
  // uint8 wraps a Python int as PyTorch: uint8 + 300 adds 44, * -1 negates mod 256.
  REQUIRE(v(add(ints_as({1, 2}, DType::UInt8), 300.0)) == std::vector<double>{45, 46});
  REQUIRE(v(mul(ints_as({1, 2}, DType::UInt8), -1.0)) == std::vector<double>{255, 254});
  // A uint8 bound may be negative down to -255 and wraps, as c10::checked_convert
  // (torch.clamp(uint8 [0, 5, 200], -1, 1) = [1, 1, 1], min=-1 all 255, max=-56 keeps x).
  const Tensor u = ints_as({0, 5, 200}, DType::UInt8);
  REQUIRE(v(clamp(u, -1.0, 1.0)) == std::vector<double>{1, 1, 1});
  REQUIRE(v(clamp(u, 1.0, -1.0)) == std::vector<double>{1, 5, 200});
  REQUIRE(v(clamp(u, -255.0, 3.0)) == std::vector<double>{1, 3, 3});
  REQUIRE(v(clamp(u, -1.0, std::nullopt)) == std::vector<double>{255, 255, 255});
  REQUIRE(v(clamp(u, std::nullopt, -56.0)) == std::vector<double>{0, 5, 200});
  REQUIRE_THROWS_WITH(clamp(u, -1.0, 300.0), Catch::Contains("clamp: bound 300 cannot be"));
  REQUIRE_THROWS_WITH(clamp(u, -256.0, 3.0), Catch::Contains("clamp: bound -256 cannot be"));
  // Integer pow is exact and wraps (torch: int64 3 ** 39 = 4052555153018976267, uint8 3 ** 255 = 171);
  // an exponent the dtype cannot hold is refused (torch: uint8 ** 300).
  REQUIRE(to_vector<int64_t>(pow(ints_as({3}, DType::Int64), 39.0)) == std::vector<int64_t>{4052555153018976267});
  REQUIRE(v(pow(ints_as({0, 1, 3}, DType::UInt8), 255.0)) == std::vector<double>{0, 1, 171});
  REQUIRE_THROWS_WITH(pow(ints_as({3}, DType::UInt8), 300.0), Catch::Contains("pow: exponent 300 cannot be converted"));
  // int64 beyond 2^53 stays exact against an integral scalar.
  const int64_t big = (int64_t{1} << 62) + 1;
  REQUIRE(to_vector<int64_t>(add(ints_as({big}, DType::Int64), 2.0)) == std::vector<int64_t>{big + 2});
  REQUIRE(to_vector<uint8_t>(lt(ints_as({big}, DType::Int64), static_cast<double>(int64_t{1} << 62))) ==
          std::vector<uint8_t>{0});
  // bool with scalars: + 0.5 is float32, * 2 is int64 (torch: B * 2 -> int64).
  const Tensor b = bools({1, 0});
  REQUIRE(add(b, 0.5).dtype() == DType::Float32);
  REQUIRE(v(add(b, 0.5)) == std::vector<double>{1.5, 0.5});
  REQUIRE(mul(b, 2.0).dtype() == DType::Int64);
  REQUIRE(v(clamp(b, 0.0, 1.0)) == std::vector<double>{1, 0});
  REQUIRE(clamp(b, 0.0, 1.0).dtype() == DType::Int64);
  REQUIRE(pow(b, 2.0).dtype() == DType::Int64);
  REQUIRE(exp(b).dtype() == DType::Float32);
}

TEST_CASE("bool tensors: add, mul, maximum, minimum give bool; sub and neg refuse", "[elementwise][parity]") {
  const Tensor p = bools({1, 0, 0}), q = bools({1, 1, 0});
  // torch: p + q = [T, T, F] (bool), p * q = [T, F, F]
  REQUIRE(add(p, q).dtype() == DType::Bool);
  REQUIRE(to_vector<uint8_t>(add(p, q)) == std::vector<uint8_t>{1, 1, 0});
  REQUIRE(to_vector<uint8_t>(mul(p, q)) == std::vector<uint8_t>{1, 0, 0});
  REQUIRE(to_vector<uint8_t>(maximum(p, q)) == std::vector<uint8_t>{1, 1, 0});
  REQUIRE(to_vector<uint8_t>(minimum(p, q)) == std::vector<uint8_t>{1, 0, 0});
  REQUIRE(minimum(p, q).dtype() == DType::Bool);
  REQUIRE(div(p, q).dtype() == DType::Float32);
  REQUIRE(sign(p).dtype() == DType::Bool);
  REQUIRE(add(ints_as({1, 2, 3}, DType::Int64), p).dtype() == DType::Int64);
  Tensor r = p.clone();
  r.add_(q);
  REQUIRE(to_vector<uint8_t>(r) == std::vector<uint8_t>{1, 1, 0});
  r.mul_(p);
  REQUIRE(to_vector<uint8_t>(r) == std::vector<uint8_t>{1, 0, 0});
  REQUIRE_THROWS_WITH(p.clone().add_(ints_as({1, 1, 1}, DType::Int64)),
                      Catch::Contains("add_: result type int64 can't be cast to the desired output type bool"));
  REQUIRE_THROWS_WITH(sub(p, q), Catch::Contains("sub: subtraction with a bool tensor is not supported"));
  REQUIRE_THROWS_WITH(sub(ints_as({1, 2, 3}, DType::Int64), p), Catch::Contains("sub: subtraction with a bool"));
  REQUIRE_THROWS_WITH(sub(p, 1.0), Catch::Contains("sub: subtraction with a bool"));
  REQUIRE_THROWS_WITH(1.0 - p, Catch::Contains("subtraction with a bool"));
  REQUIRE_THROWS_WITH(neg(p), Catch::Contains("neg: not supported for a bool tensor"));
  REQUIRE_THROWS_WITH(abs(p), Catch::Contains("abs: not supported for a bool tensor"));
  REQUIRE_THROWS_WITH(relu(p), Catch::Contains("relu: not supported for a bool tensor"));
}

TEST_CASE("allclose: infinities, broadcasting and errors as torch.allclose", "[elementwise][parity]") {
  const auto d = [](std::vector<double> x) { return from_vector<double>(x); };
  REQUIRE(allclose(d({kInf}), d({kInf})));  // torch: True
  REQUIRE(allclose(d({-kInf}), d({-kInf})));
  REQUIRE_FALSE(allclose(d({kInf}), d({-kInf})));  // torch: False
  REQUIRE_FALSE(allclose(d({kInf}), d({1})));
  REQUIRE_FALSE(allclose(d({1e308}), d({-1e308}), 10.0));  // |a - b| overflows: not finite
  REQUIRE_FALSE(allclose(d({kNan}), d({kNan})));
  REQUIRE(allclose(d({kNan, 1}), d({kNan, 1}), 1e-5, 1e-8, /*equal_nan=*/true));
  REQUIRE(allclose(d({1, 1}), d({1})));  // broadcasts
  REQUIRE(allclose(from_vector<double>({1, 1}, {1, 2}), d({1, 1})));
  REQUIRE(allclose(from_vector<double>({}, {0}), d({1})));
  REQUIRE_THROWS_WITH(allclose(d({1, 1}), d({1, 1, 1})), Catch::Contains("allclose: shapes [2] and [3] cannot be"));
  REQUIRE_THROWS_WITH(allclose(d({1}), d({1}), -1.0), Catch::Contains("allclose: rtol and atol must be >= 0"));
  REQUIRE(allclose(ints_as({1, 2}, DType::Int64), ints_as({1, 2}, DType::Int64)));
  // torch.allclose(float32, float64): "Float did not match Double".
  REQUIRE_THROWS_WITH(allclose(d({1}), f({1}, DType::Float32)), Catch::Contains("allclose: float64[1] and float32[1]"));
  REQUIRE_THROWS_WITH(allclose(ints_as({1}, DType::Int32), ints_as({1}, DType::Int64)),
                      Catch::Contains("different dtypes"));
}

TEST_CASE("where wants a bool condition; masked_fill errors name masked_fill", "[elementwise][parity]") {
  const Tensor a = f({1, 2}, DType::Float32), b = f({3, 4}, DType::Float32);
  // torch.where(float_cond, ...): "where expected condition to be a boolean tensor"
  REQUIRE_THROWS_WITH(where(f({1, 0}, DType::Float32), a, b), Catch::Contains("where: expected a bool condition"));
  REQUIRE_THROWS_WITH(where(ints_as({1, 0}, DType::Int64), a, b), Catch::Contains("where: expected a bool condition"));
  REQUIRE(v(where(ints_as({1, 0}, DType::UInt8), a, b)) == std::vector<double>{1, 4});  // 1.13: deprecated, taken
  const Tensor mask = bools({1, 0, 1});
  REQUIRE_THROWS_WITH(masked_fill(a, mask, 0.0), Catch::StartsWith("masked_fill:"));
  REQUIRE_THROWS_WITH(masked_fill(a, f({1, 0}, DType::Float32), 0.0), Catch::StartsWith("masked_fill:"));
  // torch: masked_fill of an int tensor with 0.5 casts the value; a [1, 2] mask broadcasts the result.
  REQUIRE(v(masked_fill(ints_as({1, 2}, DType::Int64), bools({1, 0}), 0.5)) == std::vector<double>{0, 2});
  REQUIRE(masked_fill(a, bools({1, 0}, {1, 2}), 0.0).shape() == Shape({1, 2}));
  // A value an integer tensor cannot hold is refused (torch: "value cannot be converted to type
  // int64_t without overflow"); uint8 takes -1 as 255; bool takes anything nonzero as true.
  const Tensor m = bools({1, 0});
  REQUIRE_THROWS_WITH(masked_fill(ints_as({1, 2}, DType::Int64), m, kNan), Catch::Contains("masked_fill: value nan"));
  REQUIRE_THROWS_WITH(masked_fill(ints_as({1, 2}, DType::Int32), m, 2147483648.0), Catch::Contains("without overflow"));
  REQUIRE_THROWS_WITH(masked_fill_(ints_as({1, 2}, DType::UInt8), m, 300.0),
                      Catch::StartsWith("masked_fill_: value 300"));
  REQUIRE_THROWS_WITH(masked_fill_(ints_as({1, 2}, DType::UInt8), f({1, 0}, DType::Float32), 1.0),
                      Catch::StartsWith("masked_fill_: expected a bool mask"));
  REQUIRE(v(masked_fill(ints_as({1, 2}, DType::UInt8), m, -1.0)) == std::vector<double>{255, 2});
  REQUIRE(v(masked_fill(ints_as({1, 2}, DType::Int64), m, -1.5)) == std::vector<double>{-1, 2});
  REQUIRE(v(masked_fill(bools({0, 0}), m, kInf)) == std::vector<double>{1, 0});
}

TEST_CASE("errors name the op the user called", "[elementwise][parity]") {
  const Tensor u;
  REQUIRE_THROWS_WITH(exp(u), Catch::StartsWith("exp:"));
  REQUIRE_THROWS_WITH(clamp(u, 0.0, 1.0), Catch::StartsWith("clamp:"));
  REQUIRE_THROWS_WITH(sub(u, 1.0), Catch::StartsWith("sub:"));
  REQUIRE_THROWS_WITH(lt(u, 1.0), Catch::StartsWith("lt:"));
  REQUIRE_THROWS_WITH(pow(u, 2.0), Catch::StartsWith("pow:"));
  REQUIRE_THROWS_WITH(relu(u), Catch::StartsWith("relu:"));
  // In-place forms name themselves: torch refuses sub_ of bools and div_ of an integer tensor.
  const Tensor p = bools({1, 0});
  REQUIRE_THROWS_WITH(p.clone().sub_(p), Catch::StartsWith("sub_: subtraction with a bool tensor"));
  REQUIRE_THROWS_WITH(ints_as({1, 2}, DType::Int64).div_(2.0), Catch::StartsWith("div_: result type float32"));
  REQUIRE_THROWS_WITH(ones({3}).add_(ones({2})), Catch::StartsWith("add_: shapes [3] and [2]"));
  REQUIRE_THROWS_WITH(ones({3}).sub_(ones({2})), Catch::StartsWith("sub_:"));
  Tensor x = ones({2});
  x.sub_(from_vector<float>({0.5, 2}));
  x.div_(2.0);
  REQUIRE(v(x) == std::vector<double>{0.25, -0.5});
}

TEST_CASE("a 0-d tensor operand counts only when its category is higher, as torch.result_type",
          "[elementwise][parity]") {
  const Tensor f32 = f({1, 2}, DType::Float32), i32 = ints_as({1, 2}, DType::Int32), b = bools({1, 0});
  const auto zero_d = [](double x, DType t) { return scalar_tensor(x, TensorOptions(t)); };
  // torch.result_type(torch.ones(2, dtype=A), torch.ones((), dtype=B))
  REQUIRE(add(f32, zero_d(1, DType::Float64)).dtype() == DType::Float32);
  REQUIRE(add(zero_d(1, DType::Float64), f32).dtype() == DType::Float32);
  REQUIRE(sub(f({1, 2}, DType::BFloat16), zero_d(1, DType::Float16)).dtype() == DType::BFloat16);
  REQUIRE(mul(f({1, 2}, DType::Float16), zero_d(1, DType::Float32)).dtype() == DType::Float16);
  REQUIRE(add(i32, zero_d(1, DType::Int64)).dtype() == DType::Int32);
  REQUIRE(maximum(ints_as({1, 2}, DType::UInt8), zero_d(1, DType::Int64)).dtype() == DType::UInt8);
  REQUIRE(minimum(i32, zero_d(1, DType::Float64)).dtype() == DType::Float64);  // higher category
  REQUIRE(add(b, zero_d(1, DType::Int32)).dtype() == DType::Int32);
  REQUIRE(div(f32, zero_d(2, DType::Float64)).dtype() == DType::Float32);
  REQUIRE(div(i32, zero_d(2, DType::Int64)).dtype() == DType::Float32);
  // Two 0-d tensors promote as usual: result_type(f32[], f64[]) is float64.
  REQUIRE(add(zero_d(1, DType::Float32), zero_d(1, DType::Float64)).dtype() == DType::Float64);
  require_same(add(f32, zero_d(0.5, DType::Float64)), {1.5, 2.5});
  // In place, the same rule decides what may be written: f32.add_(f64[]) is fine,
  // i32.add_(f64[]) is a float result for an int tensor.
  Tensor g = f32.clone();
  g.add_(zero_d(1, DType::Float64));
  require_same(g, {2, 3});
  REQUIRE_THROWS_WITH(i32.clone().add_(zero_d(1, DType::Float64)),
                      Catch::Contains("add_: result type float64 can't be cast to the desired output type int32"));
}

TEST_CASE("leaky_relu, sigmoid_backward and tanh_backward refuse integer results, as PyTorch",
          "[elementwise][parity]") {
  // torch: "leaky_relu_cpu" / "sigmoid_backward_cpu" not implemented for 'Long'; a float
  // operand with an integer one is fine (tanh_backward(f32, i64) is float32).
  const Tensor i = ints_as({1, 2}, DType::Int64), x = f({0.5, 0.25}, DType::Float32);
  REQUIRE_THROWS_WITH(leaky_relu(Variable(i), 0.01), Catch::Contains("leaky_relu: expected a floating input"));
  REQUIRE_THROWS_WITH(leaky_relu(Variable(bools({1, 0})), 0.01), Catch::Contains("leaky_relu:"));
  REQUIRE_THROWS_WITH(sigmoid_backward(i, i), Catch::Contains("sigmoid_backward: expected a floating"));
  REQUIRE_THROWS_WITH(tanh_backward(i, ints_as({1, 2}, DType::Int32)), Catch::Contains("tanh_backward: expected"));
  REQUIRE(tanh_backward(x, i).dtype() == DType::Float32);
  require_same(sigmoid_backward(x, x), {0.125, 0.046875});  // g y (1 - y)
}

TEST_CASE("add's alpha must be integral for an integer or bool result, as torch.add", "[elementwise][parity]") {
  // torch.add(i, i, alpha=-2.5): "For integral input tensors, argument alpha must not be a
  // floating point number."; torch.add(i, i, alpha=-2) = [-1, -2]; a float result takes any alpha.
  const Tensor i = ints_as({1, 2}, DType::Int32);
  REQUIRE_THROWS_WITH(add(i, i, -2.5), Catch::Contains("add: for integral input tensors, argument alpha"));
  REQUIRE_THROWS_WITH(add(bools({1, 0}), bools({1, 1}), 0.5), Catch::Contains("add: for integral"));
  REQUIRE_THROWS_WITH(i.clone().add_(i, 0.5), Catch::Contains("add_: for integral"));
  require_same(add(i, i, -2.0), {-1, -2});
  require_same(add(i, f({1, 1}, DType::Float32), -2.5), {-1.5, -0.5});
}
