// The rest of CUDA autocast's op lists (torch.amp docs, "CUDA Ops that can
// autocast to float16/float32"): conv_transpose2d, the LSTM/GRU layers and
// einsum run in the low dtype when they meet float32 weights; sum, cumsum, exp,
// log, pow, rsqrt, group_norm and the elementwise losses widen 16-bit inputs to
// float32; binary_cross_entropy is refused. Each case runs forward and backward
// and is compared with the same computation in float32.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>

#include "tests/common/golden_case.h"
#include <ddl/ddl.h>

using namespace ddl;
using test::seq;

namespace {

using Fn = std::function<Variable(const std::vector<Variable>&)>;

// max |a - b| <= tol * max(1, max |b|): agreement to `tol` of the reference's scale.
void require_close(const Tensor& got, const Tensor& ref, double tol) {
  REQUIRE(got.shape() == ref.shape());
  const std::vector<double> g = to_vector<double>(got.to(DType::Float64)), r = to_vector<double>(ref);
  double scale = 1, err = 0;
  for (size_t i = 0; i < r.size(); ++i) scale = std::max(scale, std::abs(r[i]));
  for (size_t i = 0; i < r.size(); ++i) err = std::max(err, std::abs(g[i] - r[i]));
  INFO("max error " << err << " at scale " << scale);
  REQUIRE(err <= tol * scale);
}

// f on float32 leaves seq(shape_k, 0.3 + 0.2 k, 0.1 k) in float32, then under autocast to `low`;
// the autocast output has dtype `out`, and it and every (float32) gradient match the float32 run.
void check_against_float32(const Fn& f, const std::vector<Shape>& shapes, DType low, DType out, double tol) {
  auto leaves = [&] {
    std::vector<Variable> xs;
    for (size_t k = 0; k < shapes.size(); ++k)
      xs.emplace_back(seq(shapes[k], 0.3 + 0.2 * double(k), 0.1 * double(k)).to(DType::Float32), true);
    return xs;
  };
  std::vector<Variable> ref = leaves(), xs = leaves();
  const Variable y_ref = f(ref);
  REQUIRE(y_ref.dtype() == DType::Float32);
  y_ref.backward(seq(y_ref.shape(), 0.9, 0.1).to(DType::Float32));
  Variable y;
  {
    autocast::Guard guard(low);
    y = f(xs);
  }
  REQUIRE(y.dtype() == out);
  require_close(y.data(), y_ref.data().to(DType::Float64), tol);
  y.backward(seq(y.shape(), 0.9, 0.1).to(y.dtype()));
  for (size_t k = 0; k < xs.size(); ++k) {
    INFO("gradient of input " << k);
    REQUIRE(xs[k].grad().dtype() == DType::Float32);
    require_close(xs[k].grad(), ref[k].grad().to(DType::Float64), tol);
  }
}

// bfloat16 keeps 8 significant bits, float16 11; a few roundings in a chain cost a few of them.
constexpr double kBf16Tol = 5e-2, kFp16Tol = 1e-2;

}  // namespace

TEST_CASE("conv2d then conv_transpose2d runs in the low dtype with float32 weights", "[autocast]") {
  Conv2dParams p1, p2;
  p1.padding = {1, 1};
  p2.stride = {2, 2};
  const Fn f = [&](const std::vector<Variable>& v) {
    return conv_transpose2d(conv2d(v[0], v[1], v[2], p1), v[3], v[4], p2);
  };
  const std::vector<Shape> shapes{{2, 3, 8, 8}, {8, 3, 3, 3}, {8}, {8, 4, 2, 2}, {4}};
  check_against_float32(f, shapes, DType::BFloat16, DType::BFloat16, kBf16Tol);
  check_against_float32(f, shapes, DType::Float16, DType::Float16, kFp16Tol);
}

TEST_CASE("linear then an LSTM or GRU layer runs in the low dtype with float32 weights", "[autocast]") {
  // x: [T=3, B=2, 5] -> linear to 6 features -> hidden size 5.
  const Fn lstm = [](const std::vector<Variable>& v) {
    const LstmLayerResult r = lstm_layer(linear(v[0], v[1], v[2]), v[3], v[4], v[5], v[6], v[7], v[8]);
    return r.output;
  };
  const std::vector<Shape> lstm_shapes{{3, 2, 5}, {6, 5}, {6}, {2, 5}, {2, 5}, {20, 6}, {20, 5}, {20}, {20}};
  check_against_float32(lstm, lstm_shapes, DType::BFloat16, DType::BFloat16, kBf16Tol);
  check_against_float32(lstm, lstm_shapes, DType::Float16, DType::Float16, kFp16Tol);
  const Fn gru = [](const std::vector<Variable>& v) {
    return gru_layer(linear(v[0], v[1], v[2]), v[3], v[4], v[5], v[6], v[7], /*reverse=*/true).output;
  };
  const std::vector<Shape> gru_shapes{{3, 2, 5}, {6, 5}, {6}, {2, 5}, {15, 6}, {15, 5}, {15}, {15}};
  check_against_float32(gru, gru_shapes, DType::BFloat16, DType::BFloat16, kBf16Tol);
  // The module as a user would run it: Linear -> nn::LSTM under bf16 autocast.
  nn::LSTM rnn(6, 4);
  autocast::Guard guard(DType::BFloat16);
  const Variable x(seq({3, 2, 6}, 0.4, 0.2).to(DType::BFloat16));
  REQUIRE(rnn.forward(x).dtype() == DType::BFloat16);
}

TEST_CASE("einsum runs in the low dtype, its inner sums included", "[autocast]") {
  const Fn f = [](const std::vector<Variable>& v) { return einsum("bij,jk->bik", {linear(v[0], v[1], v[2]), v[3]}); };
  check_against_float32(f, {{2, 3, 4}, {5, 4}, {5}, {5, 6}}, DType::BFloat16, DType::BFloat16, kBf16Tol);
  // A trace sums without a matmul; it stays in the low dtype too (not on the float32 list through sum).
  const Fn trace = [](const std::vector<Variable>& v) { return einsum("ii->", {v[0]}); };
  check_against_float32(trace, {{6, 6}}, DType::BFloat16, DType::BFloat16, kBf16Tol);
}

TEST_CASE("a float16 sum is float32: 1e5 ones out of a linear sum to 100000", "[autocast]") {
  const Variable x(ones({100000, 1}), true), w(ones({1, 1}));
  Variable total, running;
  {
    autocast::Guard guard(DType::Float16);
    const Variable h = linear(x, w, Variable());
    REQUIRE(h.dtype() == DType::Float16);
    total = sum(h);
    running = cumsum(h.reshape({-1}), 0);
  }
  REQUIRE(total.dtype() == DType::Float32);
  REQUIRE(total.data().item() == 100000.0);  // float16 stops at 65504 (inf)
  REQUIRE(running.dtype() == DType::Float32);
  REQUIRE(running.data().select(0, 99999).item() == 100000.0);
  total.backward();
  REQUIRE(x.grad().dtype() == DType::Float32);
  REQUIRE(amin(x.grad()).item() == 1.0);
  REQUIRE(amax(x.grad()).item() == 1.0);
}

TEST_CASE("exp, log, pow, rsqrt, sum and cumsum widen 16-bit inputs to float32", "[autocast]") {
  // exp(12) = 162755 and 12^6 = 2985984 overflow float16; in float32 they are finite.
  const Fn f = [](const std::vector<Variable>& v) {
    const Variable h = add(mul(linear(v[0], v[1], v[2]), 3.0), 12.0);  // float16 near 12
    return add(add(mul(exp(h), 1e-5), mul(pow(h, 6.0), 1e-6)), add(log(h), rsqrt(h)));
  };
  check_against_float32(f, {{4, 3}, {5, 3}, {5}}, DType::Float16, DType::Float32, kFp16Tol);
  const Fn g = [](const std::vector<Variable>& v) {
    const Variable h = linear(v[0], v[1], v[2]);
    return add(cumsum(h, 1), sum(h, {1}, true));
  };
  check_against_float32(g, {{4, 3}, {5, 3}, {5}}, DType::BFloat16, DType::Float32, kBf16Tol);
}

TEST_CASE("group_norm and layer_norm after a bf16 conv run in float32", "[autocast]") {
  Conv2dParams p;
  p.padding = {1, 1};
  const Fn gn = [&](const std::vector<Variable>& v) {
    return group_norm(conv2d(v[0], v[1], Variable(), p), 2, v[2], v[3]);
  };
  check_against_float32(gn, {{2, 3, 5, 5}, {4, 3, 3, 3}, {4}, {4}}, DType::BFloat16, DType::Float32, kBf16Tol);
  const Fn ln = [](const std::vector<Variable>& v) { return layer_norm(linear(v[0], v[1], v[2]), {5}, v[3], v[4]); };
  check_against_float32(ln, {{4, 3}, {5, 3}, {5}, {5}, {5}}, DType::BFloat16, DType::Float32, kBf16Tol);
  // Without affine parameters nothing else promotes: the widening alone makes it float32.
  autocast::Guard guard(DType::BFloat16);
  const Variable h(seq({2, 4, 3}, 0.3, 0.1).to(DType::BFloat16), true);
  REQUIRE(group_norm(h, 2, Variable(), Variable()).dtype() == DType::Float32);
  // 16-bit affine parameters are widened too; their gradients come back in their dtype.
  const Variable x(seq({4, 5}, 0.3, 0.1).to(DType::Float32), true);
  const Variable w(full({5}, 1.5).to(DType::BFloat16), true), b(full({5}, 0.25).to(DType::BFloat16), true);
  const Variable y = layer_norm(x, {5}, w, b);
  REQUIRE(y.dtype() == DType::Float32);
  sum(y).backward();
  REQUIRE(w.grad().dtype() == DType::BFloat16);
  REQUIRE(b.grad().dtype() == DType::BFloat16);
  REQUIRE(to_vector<float>(b.grad().to(DType::Float32)) == std::vector<float>(5, 4.0f));
}

TEST_CASE("the elementwise losses take a float16 input and a float32 target in float32", "[autocast]") {
  using L = std::function<Variable(const Variable&, const Variable&)>;
  const std::vector<std::pair<const char*, L>> losses{
      {"l1_loss", [](const Variable& a, const Variable& b) { return l1_loss(a, b); }},
      {"smooth_l1_loss", [](const Variable& a, const Variable& b) { return smooth_l1_loss(a, b, Reduction::Sum); }},
      {"huber_loss", [](const Variable& a, const Variable& b) { return huber_loss(a, b, Reduction::None, 0.5); }},
      {"kl_div", [](const Variable& a, const Variable& b) { return kl_div(a, b, KLDivReduction::BatchMean, true); }},
      {"binary_cross_entropy_with_logits",
       [](const Variable& a, const Variable& b) { return binary_cross_entropy_with_logits(a, b); }},
  };
  for (const auto& entry : losses) {
    const L& loss = entry.second;  // a named reference: clang 14 cannot capture a structured binding
    INFO(entry.first);
    // [64, 10] logits out of a linear (float16 under autocast) against a float32 target in (0, 1).
    const Fn f = [&](const std::vector<Variable>& v) {
      return loss(linear(v[0], v[1], v[2]), add(mul(sigmoid(v[3]), 0.98), 0.01));
    };
    check_against_float32(f, {{64, 8}, {10, 8}, {10}, {64, 10}}, DType::Float16, DType::Float32, kFp16Tol);
  }
}

TEST_CASE("binary_cross_entropy is refused under autocast, as PyTorch", "[autocast]") {
  const Variable p(full({4}, 0.25)), y(full({4}, 1.0));
  {
    autocast::Guard guard(DType::BFloat16);
    REQUIRE_THROWS_WITH(binary_cross_entropy(p, y),
                        Catch::Contains("unsafe to autocast") && Catch::Contains("binary_cross_entropy_with_logits"));
    autocast::Guard off(DType::BFloat16, false);  // allowed where autocast is turned off
    REQUIRE(binary_cross_entropy(p, y).dtype() == DType::Float32);
  }
  REQUIRE(binary_cross_entropy(p, y).data().item() == Approx(-std::log(0.25)));
}

TEST_CASE("float32-list ops on float32 inputs and ops on no list record no cast", "[autocast]") {
  autocast::Guard guard(DType::Float16);
  const Variable x(full({3}, 2.0), true);
  for (const Variable& y : {exp(x), log(x), pow(x, 2.0), rsqrt(x), sum(x), cumsum(x, 0)}) {
    INFO(y.grad_fn()->name());
    REQUIRE(y.dtype() == DType::Float32);
    REQUIRE(y.grad_fn()->next_edges()[0].leaf);  // straight to x, no ToBackward in between
  }
  // gelu is one op in PyTorch, on no list: its tanh form's inner pow does not widen a float16 input.
  const Variable h(full({3}, 0.5).to(DType::Float16), true);
  REQUIRE(gelu(h, "tanh").dtype() == DType::Float16);
  REQUIRE(autocast::is_enabled());
}

TEST_CASE("tanh-gelu of large float16 inputs has finite gradients", "[autocast]") {
  // In float16, x^3 overflows for |x| > 40 and 0 * 3x^2 is NaN beyond 148: computed in float32.
  const Variable h(from_vector<float>({50, 150, 300, -200, 0.5}).to(DType::Float16), true);
  const Variable y = gelu(h, "tanh");
  REQUIRE(y.dtype() == DType::Float16);
  sum(y).backward();
  const std::vector<float> g = to_vector<float>(h.grad().to(DType::Float32));
  const std::vector<float> v = to_vector<float>(y.data().to(DType::Float32));
  REQUIRE(g[0] == 1.0f);
  REQUIRE(g[1] == 1.0f);
  REQUIRE(g[2] == 1.0f);
  REQUIRE(g[3] == 0.0f);
  REQUIRE(std::abs(g[4] - 0.8674f) < 2e-3);  // d/dx tanh-gelu at 0.5 (PyTorch 1.13: 0.8674)
  REQUIRE(v[2] == 300.0f);
  REQUIRE(v[3] == 0.0f);
}

TEST_CASE("an integer or bool result of a Variable op carries no gradient", "[autocast]") {
  const Variable x(full({3}, 0.5), true), w(full({3}, 0.3), true);
  const Variable b = x.to(DType::Bool), i = x.to(DType::Int64);
  REQUIRE_FALSE(b.requires_grad());
  REQUIRE_FALSE(i.requires_grad());
  sum(mul(b.to(DType::Float32), w)).backward();
  REQUIRE_FALSE(x.grad().defined());
  REQUIRE(to_vector<float>(w.grad()) == std::vector<float>(3, 1.0f));
}
