// Reductions, sorting and products against PyTorch 1.13 on integer, bool, 16-bit
// and NaN inputs, and the gradients that could not be computed: the values were
// printed by tests/golden/reduce_parity.py.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "tests/common/values.h"
#include <ddl/ddl.h>

using namespace ddl;
using ddl::test::v;

namespace {
const double kNaN = std::numeric_limits<double>::quiet_NaN();
}  // namespace

TEST_CASE("integer and bool sums accumulate in int64 and return int64", "[parity][reduce]") {
  // torch.tensor([200, 100, 7], dtype=uint8).sum() -> tensor(307) int64; it wrapped to 51 as uint8.
  for (DType t : {DType::UInt8, DType::Int32, DType::Int64}) {
    const Tensor x = from_vector<int64_t>({200, 100, 7}).to(t);
    INFO(dtype_name(t));
    REQUIRE(sum(x).dtype() == DType::Int64);
    REQUIRE(sum(x).item() == 307);
    REQUIRE(sum(x.reshape({1, 3}), {1}).dtype() == DType::Int64);
    REQUIRE(cumsum(x, 0).dtype() == DType::Int64);
    REQUIRE(v(cumsum(x, 0)) == std::vector<double>{200, 300, 307});
  }
  const Tensor big = full({3}, 2e9, DType::Int32);  // 6e9 does not fit int32
  REQUIRE(sum(big).item<int64_t>() == 6000000000);
  REQUIRE(sum(full({2, 3, 4}, 1.0, DType::Int32), {0, 2}).dtype() == DType::Int64);  // the in-place middle sum
  const Tensor b = from_vector<uint8_t>({1, 1, 0}).to(DType::Bool);
  REQUIRE(sum(b).dtype() == DType::Int64);
  REQUIRE(sum(b).item() == 2);
}

TEST_CASE("mean and var refuse integer tensors, naming the op called", "[parity][reduce][errors]") {
  // torch: "mean(): could not infer output dtype", "std and var only support floating point".
  const Tensor i = from_vector<int64_t>({1, 2, 3});
  REQUIRE_THROWS_WITH(mean(i), Catch::StartsWith("mean: expected a floating-point tensor"));
  REQUIRE_THROWS_WITH(var(i), Catch::StartsWith("var: expected a floating-point tensor"));
  REQUIRE_THROWS_WITH(mean(i.to(DType::Bool)), Catch::StartsWith("mean: "));
  // var's dims are var's, not the mean's it is built from.
  REQUIRE_THROWS_WITH(var(zeros({2, 3}), {2}), Catch::StartsWith("var: dimension 2"));
  REQUIRE_THROWS_WITH(var(zeros({2, 3}), {1, 1}), Catch::StartsWith("var: "));
  REQUIRE_THROWS_WITH(zeros({0}).max(), Catch::StartsWith("max: "));
  REQUIRE_THROWS_WITH(zeros({2, 0}).min(1), Catch::StartsWith("min: "));
  REQUIRE_THROWS_WITH(linear(zeros({2, 3}), zeros({4, 3}, DType::Float64), Tensor()), Catch::StartsWith("linear: "));
}

TEST_CASE("float32 var of data with a large mean is exact", "[parity][reduce]") {
  // Deviations -6, 2, 2, 2 from the mean 1e8 + 6: 48 / 3 = 16. A float32 mean
  // (1e8 + 8) gave 21.3; PyTorch 1.13's float32 Welford gives 64.
  const Tensor x = from_vector<float>({1e8f, 1e8f + 8, 1e8f + 8, 1e8f + 8});
  REQUIRE(var(x).dtype() == DType::Float32);
  REQUIRE(var(x).item() == 16.0);
  REQUIRE(var(x, {0}, 0).item() == 12.0);
  REQUIRE(v(var(x.reshape({2, 2}), {1}, 0)) == std::vector<double>{16, 0});  // rows [1e8, 1e8 + 8], [1e8 + 8] * 2
  Variable xv(x, true);
  var(xv).backward();  // 2 (x - mean) / 3 with the exact mean: -4, 4/3, 4/3, 4/3
  const std::vector<double> g = v(xv.grad());
  REQUIRE(g[0] == -4);
  for (int i = 1; i < 4; ++i) REQUIRE(g[i] == Approx(4.0 / 3).epsilon(1e-6));
}

TEST_CASE("max and min of bool stay bool; argmax, topk, kthvalue of bool refuse; sort takes bool", "[parity][bool]") {
  const Tensor b = from_vector<uint8_t>({0, 1, 1}).to(DType::Bool);
  REQUIRE(b.max().dtype() == DType::Bool);
  REQUIRE(b.max().item() == 1);
  REQUIRE(amin(b).dtype() == DType::Bool);
  auto [mv, mi] = b.max(0);
  REQUIRE((mv.dtype() == DType::Bool && mi.item() == 1));
  REQUIRE_THROWS_WITH(argmax(b, 0), Catch::StartsWith("argmax: "));
  REQUIRE_THROWS_WITH(b.argmin(), Catch::StartsWith("argmin: "));
  REQUIRE_THROWS_WITH(topk(b, 1), Catch::StartsWith("topk: "));
  REQUIRE_THROWS_WITH(kthvalue(b, 1), Catch::StartsWith("kthvalue: "));
  auto [sv, si] = sort(from_vector<uint8_t>({1, 1, 0}).to(DType::Bool));
  REQUIRE(sv.dtype() == DType::Bool);
  REQUIRE(v(sv) == std::vector<double>{0, 1, 1});
  REQUIRE(to_vector<int64_t>(si) == std::vector<int64_t>{2, 0, 1});
}

TEST_CASE("16-bit floats sort, and max along a dim differentiates", "[parity][half]") {
  for (DType t : {DType::BFloat16, DType::Float16}) {
    INFO(dtype_name(t));
    const Tensor x = from_vector<float>({200, 100, 7}).to(t);
    auto [sv, si] = sort(x);
    REQUIRE(sv.dtype() == t);
    REQUIRE(v(sv) == std::vector<double>{7, 100, 200});
    REQUIRE(to_vector<int64_t>(topk(x, 2).indices) == std::vector<int64_t>{0, 1});
    // torch.cumsum in bfloat16: [200, 300, 308] (307 has no bfloat16; float16 holds it).
    REQUIRE(cumsum(x, 0).dtype() == t);
    REQUIRE(v(cumsum(x, 0)) == std::vector<double>{200, 300, t == DType::BFloat16 ? 308.0 : 307.0});
    // torch: values [5, 6], indices [1, 2], grad one-hot, in the input's dtype.
    Variable m(from_vector<float>({1, 5, 3, 4, 2, 6}, {2, 3}).to(t), true);
    auto [val, idx] = m.max(1);
    sum(val).backward();
    REQUIRE(m.grad().dtype() == t);
    REQUIRE(v(m.grad()) == std::vector<double>{0, 1, 0, 0, 0, 1});
    Variable n(from_vector<float>({1, 5, 3, 4, 2, 6}, {2, 3}).to(t), true);
    sum(n.min(0).values).backward();
    REQUIRE(v(n.grad()) == std::vector<double>{1, 0, 1, 0, 1, 0});
    // The differentiable backward (create_graph) scatters too: it failed, scatter has no 16-bit kernels.
    Variable k(from_vector<float>({1, 5, 3, 4, 2, 6}, {2, 3}).to(t), true);
    const std::vector<Variable> gk = autograd::grad({sum(k.max(1).values)}, {k}, {}, true, true);
    REQUIRE(gk[0].dtype() == t);
    REQUIRE(v(gk[0].data()) == std::vector<double>{0, 1, 0, 0, 0, 1});
    sum(mul(gk[0], k)).backward();  // d/dk of sum(onehot * k) = onehot
    REQUIRE(v(k.grad()) == std::vector<double>{0, 1, 0, 0, 0, 1});
  }
}

TEST_CASE("NaN: max is NaN and the gradient goes to the NaNs", "[parity][nan]") {
  const std::vector<double> data{1, kNaN, 3, kNaN};
  // torch.max(): value NaN, grad [0, 0.5, 0, 0.5] (all NaN before).
  for (bool is_max : {true, false}) {
    Variable x(from_vector<double>(data), true);
    Variable y = is_max ? x.max() : x.min();
    REQUIRE(std::isnan(y.data().item()));
    y.backward();
    REQUIRE(v(x.grad()) == std::vector<double>{0, 0.5, 0, 0.5});
  }
  Variable a(from_vector<double>(data, {2, 2}), true);
  sum(amax(a, {1})).backward();  // rows [1, NaN], [3, NaN]
  REQUIRE(v(a.grad()) == std::vector<double>{0, 1, 0, 1});
  // max along a dim: the first NaN, its index, the gradient there.
  Variable d(from_vector<double>(data), true);
  auto [val, idx] = d.max(0);
  REQUIRE((std::isnan(val.data().item()) && idx.item() == 1));
  val.backward();
  REQUIRE(v(d.grad()) == std::vector<double>{0, 1, 0, 0});
  REQUIRE(d.data().min(0).indices.item() == 1);
  REQUIRE(argmax(d.data(), 0).item() == 1);
  REQUIRE(d.data().argmin().item() == 1);
  // Sorting: NaN is the largest value.
  REQUIRE(to_vector<int64_t>(sort(d.data()).indices) == std::vector<int64_t>{0, 2, 1, 3});
  REQUIRE(to_vector<int64_t>(sort(d.data(), 0, true).indices) == std::vector<int64_t>{1, 3, 2, 0});
  REQUIRE(to_vector<int64_t>(topk(d.data(), 2).indices) == std::vector<int64_t>{1, 3});
  REQUIRE(to_vector<int64_t>(topk(d.data(), 2, 0, false).indices) == std::vector<int64_t>{0, 2});
  REQUIRE(kthvalue(d.data(), 4).indices.item() == 3);
  // Ties without NaN still split evenly (torch.max(): [0.5, 0, 0.5]).
  Variable t(from_vector<double>({3, 1, 3}), true);
  t.max().backward();
  REQUIRE(v(t.grad()) == std::vector<double>{0.5, 0, 0.5});
}

TEST_CASE("matmul of two vectors and linear with no features differentiate", "[parity][grad][matmul]") {
  Variable a(from_vector<double>({1, 2, 3}), true), b(from_vector<double>({4, 5, 6}), true);
  Variable d = matmul(a, b);
  REQUIRE(d.data().item() == 32);
  d.backward();
  REQUIRE(v(a.grad()) == std::vector<double>{4, 5, 6});
  REQUIRE(v(b.grad()) == std::vector<double>{1, 2, 3});
  // torch: y = zeros [5, 3]; grads zeros [5, 0], zeros [3, 0], bias [5, 5, 5].
  Variable x(zeros({5, 0}), true), w(zeros({3, 0}), true), bias(zeros({3}), true);
  Variable y = linear(x, w, bias);
  REQUIRE(y.shape() == Shape{5, 3});
  sum(y).backward();
  REQUIRE(x.grad().shape() == Shape{5, 0});
  REQUIRE(w.grad().shape() == Shape{3, 0});
  REQUIRE(v(bias.grad()) == std::vector<double>{5, 5, 5});
  Variable x2(zeros({2, 4, 3}), true), w2(zeros({0, 3}), true);  // no output features
  sum(linear(x2, w2, Variable())).backward();
  REQUIRE((x2.grad().shape() == Shape{2, 4, 3} && w2.grad().shape() == Shape{0, 3}));
}

TEST_CASE("integer matmul computes in the operands' dtype, wrapping as PyTorch", "[parity][matmul]") {
  const Tensor a = from_vector<int64_t>({1, 2, 3, 4}, {2, 2}), b = from_vector<int64_t>({5, 6}, {2, 1});
  REQUIRE(matmul(a, b).dtype() == DType::Int64);
  REQUIRE(to_vector<int64_t>(matmul(a, b)) == std::vector<int64_t>{17, 39});
  REQUIRE(to_vector<int64_t>(matmul(a.to(DType::Int32), b.to(DType::Int32))) == std::vector<int64_t>{17, 39});
  REQUIRE(matmul(ones({3}, DType::Int64), ones({3}, DType::Int64)).item() == 3);  // dot
  REQUIRE(to_vector<int64_t>(matmul(ones({2, 3}, DType::Int64), ones({3}, DType::Int64))) ==
          std::vector<int64_t>{3, 3});
  REQUIRE(matmul(ones({2, 2, 3}, DType::Int64), ones({3, 2}, DType::Int64)).shape() == Shape{2, 2, 2});
  REQUIRE(to_vector<int64_t>(matmul(a.t(), b)) == std::vector<int64_t>{23, 34});  // a transposed view
  // uint8: [200, 100, 7] . [1, 1, 1] = 307 = 51 (mod 256); torch gives 129 for [200,100,7].[200,100,7].
  const Tensor u = from_vector<uint8_t>({200, 100, 7});
  REQUIRE(matmul(u, u).item() == 129);
  REQUIRE(matmul(u, u).dtype() == DType::UInt8);
  REQUIRE(to_vector<int64_t>(linear(ones({2, 3}, DType::Int64), ones({4, 3}, DType::Int64), Tensor())) ==
          std::vector<int64_t>(8, 3));
  REQUIRE(matmul(zeros({2, 0}, DType::Int64), zeros({0, 3}, DType::Int64)).shape() == Shape{2, 3});
  REQUIRE_THROWS_WITH(matmul(a, b.to(DType::Float32)), Catch::StartsWith("matmul: "));
  REQUIRE_THROWS_WITH(matmul(a.to(DType::Bool), b.to(DType::Bool)), Catch::StartsWith("matmul: "));
}

TEST_CASE("reflect and replicate pads follow torch.nn.functional.pad's rules", "[parity][pad]") {
  const Tensor x = arange(0.0, 3.0, 1.0, DType::Float32).reshape({1, 1, 3});
  // Negative pads crop (torch: reflect (-1, 2) -> [1, 2, 1, 0], replicate (1, -1) -> [0, 0, 1]).
  REQUIRE(v(pad(x, {-1, 2}, PadMode::Reflect)) == std::vector<double>{1, 2, 1, 0});
  REQUIRE(v(pad(x, {2, -3}, PadMode::Reflect)) == std::vector<double>{2, 1});
  REQUIRE(v(pad(x, {1, -1}, PadMode::Replicate)) == std::vector<double>{0, 0, 1});
  REQUIRE(v(pad(x, {-5, 4}, PadMode::Replicate)) == std::vector<double>{2, 2});
  // Reflect pads must be below the size; neither mode may empty or start from an empty dim.
  REQUIRE_THROWS_WITH(pad(x, {3, 0}, PadMode::Reflect), Catch::StartsWith("pad: ") && Catch::Contains("less than"));
  REQUIRE_THROWS_WITH(pad(x, {-5, 4}, PadMode::Reflect), Catch::StartsWith("pad: "));
  REQUIRE_THROWS_WITH(pad(x, {-3, 0}, PadMode::Reflect), Catch::Contains("empty"));
  REQUIRE_THROWS_WITH(pad(x, {-2, -1}, PadMode::Replicate), Catch::Contains("empty"));
  REQUIRE_THROWS_WITH(pad(zeros({1, 1, 0}), {0, 0}, PadMode::Replicate), Catch::Contains("non-empty"));
  REQUIRE(pad(zeros({0, 1, 3}), {1, 1}, PadMode::Reflect).shape() == Shape{0, 1, 5});  // an empty batch is fine
  Variable xv(x.to(DType::Float64), true);
  sum(pad(xv, {-1, 2}, PadMode::Reflect)).backward();  // picks x1, x2, x1, x0
  REQUIRE(v(xv.grad()) == std::vector<double>{1, 2, 1});
}
