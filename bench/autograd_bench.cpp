// ddl-bench autograd: the engine's own cost per recorded op, where the tensors are too small
// for the arithmetic to matter: a chain of elementwise ops on 4 floats, recorded and
// backpropagated (backward), the same through grad(), through grad(create_graph) followed by
// a second backward (double backward), and with anomaly detection on; and what passing a
// differentiable backward to make_result costs (the same mul recorded with and without one,
// Note [Double backward]). Medians of repeats; --clock cpu on a busy machine. It does not
// time kernels: see train-step for whole training steps.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <vector>

#include "bench/bench_util.h"
#include <ddl/autograd/anomaly.h>
#include <ddl/autograd/grad.h>
#include <ddl/ddl.h>

namespace {

constexpr int kLinks = 10;  // each link records mul, add, tanh: 3 nodes

ddl::Variable chain(const ddl::Variable& x, const ddl::Variable& w) {
  ddl::Variable h = x;
  for (int k = 0; k < kLinks; ++k) h = ddl::tanh(ddl::add(ddl::mul(h, w), x));
  return ddl::sum(h);
}

// Microseconds per recorded op (3 kLinks + 1 nodes per iteration), median of 7 repeats.
double us_per_op(const std::function<void()>& iteration) {
  constexpr int kIters = 2000;
  std::vector<double> us;
  for (int rep = 0; rep < 7; ++rep) {
    const double t0 = ddl::bench::now_seconds();
    for (int i = 0; i < kIters; ++i) iteration();
    us.push_back((ddl::bench::now_seconds() - t0) * 1e6 / (kIters * (3 * kLinks + 1)));
  }
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

using Grads = std::vector<ddl::Tensor>;
using VGrads = std::vector<ddl::Variable>;
using Needs = std::vector<bool>;

ddl::Variable mul_tensor_form(const ddl::Variable& a, const ddl::Variable& b) {
  const ddl::Tensor ad = a.data(), bd = b.data();
  return ddl::autograd::make_result(
      ddl::mul(ad, bd), "MulBackward", {&a, &b}, [ad, bd](const ddl::Tensor& g, const Needs& n) -> Grads {
        return {n[0] ? ddl::mul(g, bd) : ddl::Tensor(), n[1] ? ddl::mul(g, ad) : ddl::Tensor()};
      });
}

ddl::Variable mul_both_forms(const ddl::Variable& a, const ddl::Variable& b) {
  const ddl::Tensor ad = a.data(), bd = b.data();
  return ddl::autograd::make_result(
      ddl::mul(ad, bd), "MulBackward", {&a, &b},
      [ad, bd](const ddl::Tensor& g, const Needs& n) -> Grads {
        return {n[0] ? ddl::mul(g, bd) : ddl::Tensor(), n[1] ? ddl::mul(g, ad) : ddl::Tensor()};
      },
      [a, b](const ddl::Variable& g, const Needs& n) -> VGrads {
        return {n[0] ? ddl::mul(g, b) : ddl::Variable(), n[1] ? ddl::mul(g, a) : ddl::Variable()};
      });
}

// A chain of 3 kLinks muls and a sum, recorded and backpropagated.
template <typename Mul>
void mul_chain(const ddl::Variable& x, const ddl::Variable& w, Mul mul) {
  ddl::Variable h = x;
  for (int k = 0; k < 3 * kLinks; ++k) h = mul(h, w);
  ddl::sum(h).backward();
}

}  // namespace

int autograd_bench_main(int argc, char** argv) {
  ddl::set_num_threads(ddl::bench::threads_arg(argc, argv, 1));
  ddl::Variable x(ddl::ones({4}), true), w(ddl::full({4}, 0.5), true);
  const double backward = us_per_op([&] { chain(x, w).backward(); });
  const double grad = us_per_op([&] { ddl::autograd::grad({chain(x, w)}, {x, w}); });
  const double double_backward = us_per_op([&] {
    const ddl::Variable g = ddl::autograd::grad({chain(x, w)}, {x}, {}, std::nullopt, true)[0];
    ddl::sum(g).backward();
  });
  double anomaly = 0;
  {
    ddl::autograd::DetectAnomalyGuard on;
    anomaly = us_per_op([&] { chain(x, w).backward(); });
  }
  // Alternated, so that drift and other load hit both alike.
  std::vector<double> tensor_form, both_forms;
  for (int rep = 0; rep < 5; ++rep) {
    tensor_form.push_back(us_per_op([&] { mul_chain(x, w, mul_tensor_form); }));
    both_forms.push_back(us_per_op([&] { mul_chain(x, w, mul_both_forms); }));
  }
  std::sort(tensor_form.begin(), tensor_form.end());
  std::sort(both_forms.begin(), both_forms.end());
  std::printf(
      "{\"bench\":\"autograd\",\"us_per_op_backward\":%.3f,\"us_per_op_grad\":%.3f,"
      "\"us_per_op_double_backward\":%.3f,\"us_per_op_anomaly\":%.3f,"
      "\"us_per_mul_tensor_form\":%.3f,\"us_per_mul_both_forms\":%.3f}\n",
      backward, grad, double_backward, anomaly, tensor_form[2], both_forms[2]);
  return 0;
}
