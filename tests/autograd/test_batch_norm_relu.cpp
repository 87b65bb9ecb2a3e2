// Batch norm + ReLU fused (detail::batch_norm_relu, and nn::Sequential's fusion of a
// BatchNorm followed by a ReLU): bit-identical to relu(batch_norm(x)) in values, all
// three gradients and running statistics, in training and eval, with short and long
// channel rows, float32 and float64, NaN/inf inputs; finite-difference gradients;
// double backward; Sequential fuses only when nothing observes the BatchNorm alone.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include "tests/common/gradcheck.h"
#include <ddl/autograd/ops/norm_relu.h>
#include <ddl/ddl.h>
#include <ddl/nn/forward_hooks.h>

using namespace ddl;

namespace {

// Bitwise equality of values, NaN equal to NaN (and -0.0 unequal to 0.0).
void require_same(const Tensor& a, const Tensor& b) {
  REQUIRE(a.shape() == b.shape());
  const Tensor ad = a.to(DType::Float64).contiguous(), bd = b.to(DType::Float64).contiguous();
  const double* pa = ad.data<double>();
  const double* pb = bd.data<double>();
  for (int64_t i = 0; i < a.numel(); ++i) {
    INFO("element " << i << ": " << pa[i] << " vs " << pb[i]);
    const bool both_nan = std::isnan(pa[i]) && std::isnan(pb[i]);
    REQUIRE((both_nan || (pa[i] == pb[i] && std::signbit(pa[i]) == std::signbit(pb[i]))));
  }
}

struct Setup {
  Tensor x, cot, w, b, rm, rv;
};

Setup make_setup(const Shape& shape, DType dt, uint64_t seed) {
  Generator gen(seed);
  const int64_t c = shape[1];
  const TensorOptions o(dt);
  return {add(mul(randn(shape, gen, o), 2.0), 0.3),
          randn(shape, gen, o),
          add(rand({c}, gen, o), 0.5),
          sub(rand({c}, gen, o), 0.5),
          mul(randn({c}, gen, o), 0.1),
          add(rand({c}, gen, o), 0.5)};
}

// Runs fused or unfused on copies of s, backward with s.cot; returns {y, dx, dw, db, rm, rv}.
std::vector<Tensor> run(const Setup& s, bool fused, bool training, bool affine, bool track) {
  Variable x(s.x.clone(), true);
  Variable w = affine ? Variable(s.w.clone(), true) : Variable();
  Variable b = affine ? Variable(s.b.clone(), true) : Variable();
  Tensor rm = track ? s.rm.clone() : Tensor(), rv = track ? s.rv.clone() : Tensor();
  Variable y = fused ? detail::batch_norm_relu(x, w, b, rm, rv, training, 0.1, 1e-5)
                     : relu(batch_norm(x, w, b, rm, rv, training, 0.1, 1e-5));
  if (fused) REQUIRE(y.grad_fn()->name() == "BatchNormReluBackward");
  y.backward(s.cot);
  return {y.data(), x.grad(), affine ? w.grad() : Tensor(), affine ? b.grad() : Tensor(), rm, rv};
}

void require_matches_pair(const Setup& s, bool training, bool affine, bool track) {
  const std::vector<Tensor> f = run(s, true, training, affine, track), u = run(s, false, training, affine, track);
  for (size_t k = 0; k < f.size(); ++k) {
    INFO("output " << k << " (y, dx, dw, db, running_mean, running_var)");
    REQUIRE(f[k].defined() == u[k].defined());
    if (f[k].defined()) require_same(f[k], u[k]);
  }
}

}  // namespace

TEST_CASE("batch_norm_relu: bit-identical to relu(batch_norm) in training and eval", "[batch_norm_relu]") {
  // S = 25 takes the short-row sums, S = 81 and S = 256 the long-row SIMD runs with a tail.
  for (const Shape& shape : {Shape{4, 3, 5, 5}, Shape{2, 3, 9, 9}, Shape{3, 5, 16, 16}, Shape{6, 4}})
    for (DType dt : {DType::Float32, DType::Float64}) {
      INFO("shape " << shape << " dtype " << dt);
      const Setup s = make_setup(shape, dt, 7);
      require_matches_pair(s, true, true, true);
      require_matches_pair(s, false, true, true);
      require_matches_pair(s, true, false, true);
      require_matches_pair(s, true, true, false);
      require_matches_pair(s, false, false, false);  // no running stats: batch stats even in eval
    }
}

TEST_CASE("batch_norm_relu: NaN and inf behave as the unfused pair", "[batch_norm_relu]") {
  Setup s = make_setup({2, 3, 8, 10}, DType::Float32, 11);
  float* xp = s.x.data<float>();
  xp[5] = std::numeric_limits<float>::quiet_NaN();                        // channel 0 becomes NaN
  xp[80 + 7] = std::numeric_limits<float>::infinity();                    // channel 1: inf mean
  s.cot.data<float>()[160 + 3] = std::numeric_limits<float>::infinity();  // channel 2: an inf gradient
  for (bool training : {true, false}) require_matches_pair(s, training, true, true);
  // Eval with finite stats: only the NaN element is NaN, and its gradient passes (threshold_backward).
  Setup e = make_setup({2, 3, 8, 10}, DType::Float32, 12);
  e.x.data<float>()[9] = std::numeric_limits<float>::quiet_NaN();
  e.x.data<float>()[90] = -std::numeric_limits<float>::infinity();
  require_matches_pair(e, false, true, true);
}

TEST_CASE("batch_norm_relu: finite-difference gradients", "[batch_norm_relu]") {
  const Shape shape{3, 2, 4, 5};
  Tensor rm = zeros({2}, DType::Float64), rv = ones({2}, DType::Float64);
  for (bool training : {true, false}) {
    INFO("training " << training);
    REQUIRE_GRADCHECK(
        [&](const std::vector<Variable>& in) {
          Tensor m = rm.clone(), v = rv.clone();
          return detail::batch_norm_relu(in[0], in[1], in[2], m, v, training, 0.1, 1e-5);
        },
        {test::random_double(shape, 3, -2.0, 2.0), test::random_double({2}, 4, 0.5, 1.5),
         test::random_double({2}, 5, -0.5, 0.5)});
  }
}

TEST_CASE("batch_norm_relu: double backward equals the unfused pair's", "[batch_norm_relu]") {
  const Setup s = make_setup({2, 3, 4, 4}, DType::Float64, 13);
  std::vector<Tensor> results[2];
  for (int fused = 0; fused < 2; ++fused) {
    Variable x(s.x.clone(), true), w(s.w.clone(), true), b(s.b.clone(), true);
    Tensor rm = s.rm.clone(), rv = s.rv.clone();
    Variable y = fused ? detail::batch_norm_relu(x, w, b, rm, rv, true) : relu(batch_norm(x, w, b, rm, rv, true));
    std::vector<Variable> g = autograd::grad({mul(y, Variable(s.cot)).sum()}, {x, w}, {}, true, true);
    add(mul(g[0], g[0]).sum(), g[1].sum()).backward();
    results[fused] = {g[0].data(), x.grad(), w.grad(), b.grad()};
  }
  for (size_t k = 0; k < 4; ++k) {
    REQUIRE(results[0][k].defined() == results[1][k].defined());  // b gets none: neither dx nor dw depends on it
    if (results[0][k].defined()) REQUIRE(allclose(results[0][k], results[1][k], 1e-10, 1e-12));
  }
}

TEST_CASE("Sequential fuses BatchNorm2d + ReLU unless a hook observes them", "[batch_norm_relu]") {
  auto seq = std::make_shared<nn::Sequential>(nn::BatchNorm2d(3), nn::ReLU());
  auto ref = std::make_shared<nn::Sequential>(nn::BatchNorm2d(3));
  const Setup s = make_setup({4, 3, 6, 6}, DType::Float32, 17);
  for (bool training : {true, false, true}) {
    seq->train(training), ref->train(training);
    Variable xa(s.x.clone(), true), xb(s.x.clone(), true);
    Variable ya = seq->forward(xa), yb = relu(ref->forward(xb));
    REQUIRE(ya.grad_fn()->name() == "BatchNormReluBackward");
    ya.backward(s.cot), yb.backward(s.cot);
    require_same(ya.data(), yb.data());
    require_same(xa.grad(), xb.grad());
    const auto pa = seq->named_parameters(), pb = ref->named_parameters();
    for (size_t k = 0; k < pa.size(); ++k) require_same(pa[k].second.grad(), pb[k].second.grad());
    const auto ba = seq->named_buffers(), bb = ref->named_buffers();
    for (size_t k = 0; k < ba.size(); ++k) require_same(ba[k].second.data(), bb[k].second.data());
  }
  // A hook on the ReLU must see it run on its own.
  int calls = 0;
  const int id = nn::add_forward_hook((*seq)[1], {.pre = [&](nn::Module&) { ++calls; }});
  Variable y = seq->forward(Variable(s.x.clone(), true));
  nn::remove_forward_hook(id);
  REQUIRE(calls == 1);
  REQUIRE(y.grad_fn()->name() != "BatchNormReluBackward");
}
