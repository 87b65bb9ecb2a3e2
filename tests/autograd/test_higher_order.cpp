// autograd::grad and double backward: grad()'s contract (no .grad writes, unreachable
// inputs, retain_graph), second derivatives of every op family grad-checked by central
// differences of the first gradient, Hessian-vector products, a WGAN-GP gradient penalty,
// values against PyTorch 1.13 (tests/golden/higher_order.py), and the error for an op
// without a differentiable backward.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <vector>

#include "tests/common/gradcheck.h"
#include <ddl/autograd/functions.h>
#include <ddl/autograd/grad.h>
#include <ddl/tensor/ops.h>

using namespace ddl;
using autograd::grad;
using test::random_double;

namespace {

Tensor formula(const Shape& shape, const std::function<double(int64_t)>& f) {
  std::vector<double> v(static_cast<size_t>(shape.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = f(static_cast<int64_t>(i));
  return from_vector(v, shape);
}

void require_close(const Tensor& t, const std::vector<double>& expected, double tol) {
  const std::vector<double> got = to_vector<double>(t.contiguous());
  REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    REQUIRE(got[i] == Approx(expected[i]).margin(tol).epsilon(tol));
  }
}

// The gradient of <f(xs), c> w.r.t. input k, as a function of all inputs, for gradcheck:
// with create_graph when the inputs require grad (gradcheck's analytic pass, which then
// differentiates it), a plain first-order grad() otherwise (its finite differences).
test::VariableFn first_grad(const test::VariableFn& f, size_t k) {
  return [f, k](const std::vector<Variable>& xs) {
    GradModeGuard grad_on(true);
    std::vector<Variable> in = xs;
    const bool create = xs[k].requires_grad();
    if (!create) in[k] = Variable(xs[k].data(), true);
    const Variable y = f(in);
    Generator gen(77);
    const Tensor c = rand(y.shape(), gen, DType::Float64) - 0.5;
    const Variable l = sum(mul(y, Variable(c)));
    return grad({l}, {in[k]}, {}, std::nullopt, /*create_graph=*/create)[0];
  };
}

}  // namespace

TEST_CASE("grad: values without touching .grad", "[grad]") {
  Variable x(from_vector<double>({1, 2, 3}), true);
  Variable w(from_vector<double>({0.5, -1, 2}), true);
  int hook_calls = 0;
  x.register_post_accumulate_grad_hook([&](Variable&) { ++hook_calls; });
  const Variable y = sum(mul(mul(x, x), w));
  const auto g = grad({y}, {x});
  REQUIRE(g.size() == 1);
  require_close(g[0].data(), {1, -4, 12}, 1e-12);  // 2 x w
  REQUIRE_FALSE(g[0].requires_grad());
  REQUIRE_FALSE(x.grad().defined());
  REQUIRE_FALSE(w.grad().defined());
  REQUIRE(hook_calls == 0);
}

TEST_CASE("grad: intermediate inputs and several outputs", "[grad]") {
  Variable x(from_vector<double>({1, -2}), true);
  const Variable h = mul(x, 3.0);
  const Variable y1 = sum(mul(h, h));  // dy1/dh = 2h
  const Variable y2 = sum(x);          // dy2/dx = 1
  const auto g = grad({y1, y2}, {h, x});
  require_close(g[0].data(), {6, -12}, 1e-12);
  require_close(g[1].data(), {1 + 18, 1 - 36}, 1e-12);  // 1 + 2h·3
  // grad_outputs weight the outputs; a non-scalar output needs one.
  const Variable z = mul(x, x);
  REQUIRE_THROWS_WITH(grad({z}, {x}, {}, true), Catch::Contains("one-element output"));
  REQUIRE_THROWS_WITH(grad({z}, {x}, {Variable(ones({3}, DType::Float64))}, true),
                      Catch::Contains("grad_outputs[0] has shape [3]"));
  require_close(grad({z}, {x}, {Variable(from_vector<double>({2, 3}))})[0].data(), {4, -12}, 1e-12);
}

TEST_CASE("grad: unreachable and non-differentiable inputs", "[grad]") {
  Variable x(from_vector<double>({1, 2}), true);
  Variable unused(from_vector<double>({5}), true);
  unused.set_name("unused_bias");
  Variable constant(from_vector<double>({1, 1}));
  const Variable y = sum(mul(x, x));
  REQUIRE_THROWS_WITH(grad({y}, {x, unused}, {}, true),
                      Catch::Contains("input 1 'unused_bias'") && Catch::Contains("not reachable"));
  const auto g = grad({y}, {x, unused}, {}, true, false, /*allow_unused=*/true);
  require_close(g[0].data(), {2, 4}, 1e-12);
  REQUIRE_FALSE(g[1].defined());
  REQUIRE_THROWS_WITH(grad({y}, {constant}, {}, true), Catch::Contains("does not require grad"));
  // Detached values cut the path.
  const Variable y2 = sum(mul(x.detach(), x.detach()));
  REQUIRE_THROWS_WITH(grad({y2}, {x}), Catch::Contains("output 0") && Catch::Contains("does not require grad"));
}

TEST_CASE("grad: retain_graph defaults to create_graph", "[grad]") {
  Variable x(from_vector<double>({1, 2}), true);
  const Variable y = sum(exp(x));
  grad({y}, {x});
  REQUIRE_THROWS_WITH(grad({y}, {x}), Catch::Contains("second time"));
  const Variable y2 = sum(exp(x));
  grad({y2}, {x}, {}, /*retain_graph=*/true);
  require_close(grad({y2}, {x})[0].data(), {std::exp(1.0), std::exp(2.0)}, 1e-12);
  const Variable y3 = sum(exp(x));
  grad({y3}, {x}, {}, std::nullopt, /*create_graph=*/true);
  REQUIRE_NOTHROW(grad({y3}, {x}));
}

TEST_CASE("double backward: x^3", "[double_backward]") {
  Variable x(from_vector<double>({-1, 0.5, 2}), true);
  const Variable y = sum(pow(x, 3.0));
  const Variable g = grad({y}, {x}, {}, std::nullopt, true)[0];  // 3x^2
  REQUIRE(g.requires_grad());
  require_close(g.data(), {3, 0.75, 12}, 1e-12);
  const Variable gg = grad({sum(g)}, {x}, {}, std::nullopt, true)[0];  // 6x
  require_close(gg.data(), {-6, 3, 12}, 1e-12);
  const Variable ggg = grad({sum(gg)}, {x})[0];  // 6
  require_close(ggg.data(), {6, 6, 6}, 1e-12);
  // backward() through a gradient accumulates into .grad as usual.
  const Variable g2 = grad({sum(pow(x, 3.0))}, {x}, {}, std::nullopt, true)[0];
  sum(mul(g2, g2)).backward();  // d/dx sum(9x^4) = 36x^3
  require_close(x.grad(), {-36, 4.5, 288}, 1e-12);
}

TEST_CASE("double backward: elementwise ops", "[double_backward]") {
  const Tensor a = random_double({3, 4}, 1, 0.5, 1.5);
  const Tensor b = random_double({4}, 2, 0.5, 1.5);
  const Tensor s = random_double({3, 4}, 3, -1.0, 1.0);
  auto binary = [](const std::vector<Variable>& v) {
    const Variable &a = v[0], &b = v[1];
    return add(mul(add(a, b), sub(a, b)), div(mul(a, b), add(b, 2.0)));
  };
  REQUIRE_GRADCHECK(first_grad(binary, 0), {a, b});
  REQUIRE_GRADCHECK(first_grad(binary, 1), {a, b});
  auto unary = [](const std::vector<Variable>& v) {
    const Variable& x = v[0];
    return add(add(mul(pow(x, 3.0), sqrt(x)), div(exp(neg(x)), log(add(x, 1.0)))), rsqrt(x));
  };
  REQUIRE_GRADCHECK(first_grad(unary, 0), {a});
  auto activations = [](const std::vector<Variable>& v) {
    const Variable& x = v[0];
    // relu and abs are piecewise linear: their x·f(x) forms have a nonzero second derivative.
    return add(add(mul(tanh(x), sigmoid(x)), mul(relu(x), x)), mul(abs(x), mul(x, x)));
  };
  REQUIRE_GRADCHECK(first_grad(activations, 0), {s});
  auto selections = [](const std::vector<Variable>& v) {
    const Variable& x = v[0];
    return add(add(mul(maximum(x, mul(x, 0.3)), x), mul(clamp(x, -0.5, 0.5), mul(x, x))),
               mul(clamp(x, std::nullopt, 0.2), minimum(x, mul(x, x))));
  };
  REQUIRE_GRADCHECK(first_grad(selections, 0), {s});
}

TEST_CASE("double backward: reductions, matmul, linear", "[double_backward]") {
  const Tensor a = random_double({3, 4}, 4);
  const Tensor b = random_double({4, 2}, 5);
  const Tensor bias = random_double({2}, 6);
  auto reductions = [](const std::vector<Variable>& v) {
    const Variable& x = v[0];
    // [3, 4] + [4] + [3, 1]
    return add(add(mul(sum(x, {1}, true), x), mul(mean(mul(x, x), {0}), var(x, {0}))),
               mul(amax(x, {1}, true), sum(x, {1}, true)));
  };
  REQUIRE_GRADCHECK(first_grad(reductions, 0), {a});
  auto product = [](const std::vector<Variable>& v) { return tanh(matmul(v[0], v[1])); };
  REQUIRE_GRADCHECK(first_grad(product, 0), {a, b});
  REQUIRE_GRADCHECK(first_grad(product, 1), {a, b});
  auto vecmat = [](const std::vector<Variable>& v) { return tanh(matmul(v[0].select(0, 1), v[1])); };
  REQUIRE_GRADCHECK(first_grad(vecmat, 1), {a, b});
  auto lin = [](const std::vector<Variable>& v) { return tanh(linear(v[0], v[1].t(), v[2])); };
  REQUIRE_GRADCHECK(first_grad(lin, 0), {a, b, bias});
  REQUIRE_GRADCHECK(first_grad(lin, 1), {a, b, bias});
}

TEST_CASE("double backward: softmax and log_softmax", "[double_backward]") {
  const Tensor x = random_double({3, 5}, 7, -2.0, 2.0);
  auto f = [](const std::vector<Variable>& v) { return add(softmax(v[0], 1), mul(log_softmax(v[0], 0), 0.5)); };
  REQUIRE_GRADCHECK(first_grad(f, 0), {x});
}

TEST_CASE("double backward: views", "[double_backward]") {
  const Tensor x = random_double({2, 3, 4}, 8);
  auto f = [](const std::vector<Variable>& v) {
    const Variable& x = v[0];
    const Variable p = x.permute({2, 0, 1}).reshape({4, 6}).transpose(0, 1);  // [6, 4]
    const Variable s = x.slice(2, 0, 4, 2).narrow(1, 1, 2).flatten();         // [8]
    const Variable e = x.select(1, 0).unsqueeze(1).expand({2, 3, 4}).contiguous();
    return add(mul(sum(mul(p, p)), s), sum(sum(mul(e, x), {2}).view({6}).to(DType::Float64)));
  };
  REQUIRE_GRADCHECK(first_grad(f, 0), {x});
}

TEST_CASE("double backward: conv2d, cross_entropy, mse_loss", "[double_backward]") {
  const Tensor x = random_double({2, 2, 5, 5}, 9);
  const Tensor w = random_double({3, 2, 3, 3}, 10);
  const Tensor b = random_double({3}, 11);
  Conv2dParams p;
  p.stride = {2, 1};
  p.padding = {1, 0};
  auto conv = [p](const std::vector<Variable>& v) { return tanh(conv2d(v[0], v[1], v[2], p)); };
  REQUIRE_GRADCHECK(first_grad(conv, 0), {x, w, b});
  REQUIRE_GRADCHECK(first_grad(conv, 1), {x, w, b});
  Conv2dParams grouped;
  grouped.groups = 2;
  grouped.dilation = {2, 1};
  const Tensor wg = random_double({4, 1, 2, 2}, 12);
  auto conv_g = [grouped](const std::vector<Variable>& v) {
    const Variable y = conv2d(v[0], v[1], Variable(), grouped);
    return mul(y, y);
  };
  REQUIRE_GRADCHECK(first_grad(conv_g, 0), {x, wg});
  REQUIRE_GRADCHECK(first_grad(conv_g, 1), {x, wg});

  const Tensor z = random_double({4, 3}, 13, -2.0, 2.0);
  const Tensor target = from_vector<int64_t>({0, 2, -100, 1});
  for (Reduction r : {Reduction::Mean, Reduction::Sum, Reduction::None}) {
    CrossEntropyOptions opts;
    opts.reduction = r;
    opts.label_smoothing = 0.2;
    auto ce = [target, opts](const std::vector<Variable>& v) { return cross_entropy(v[0], target, opts); };
    REQUIRE_GRADCHECK(first_grad(ce, 0), {z});
  }
  const Tensor t2 = random_double({4, 3}, 14);
  for (Reduction r : {Reduction::Mean, Reduction::Sum, Reduction::None}) {
    auto mse = [r](const std::vector<Variable>& v) { return mse_loss(mul(v[0], v[0]), v[1], r); };
    REQUIRE_GRADCHECK(first_grad(mse, 0), {z, t2});
    REQUIRE_GRADCHECK(first_grad(mse, 1), {z, t2});
  }
}

TEST_CASE("double backward: batch_norm, layer_norm, group_norm", "[double_backward]") {
  const Tensor x = random_double({3, 2, 2, 2}, 20, -2.0, 2.0);
  const Tensor w = random_double({2}, 21, 0.5, 1.5);
  const Tensor b = random_double({2}, 22);
  auto bn_train = [](const std::vector<Variable>& v) {
    const Variable y = batch_norm(v[0], v[1], v[2], Tensor(), Tensor(), /*training=*/true);
    return mul(y, y);  // the normalised values' own second derivative is zero in w and b
  };
  REQUIRE_GRADCHECK(first_grad(bn_train, 0), {x, w, b});
  REQUIRE_GRADCHECK(first_grad(bn_train, 1), {x, w, b});
  auto bn_plain = [](const std::vector<Variable>& v) {
    return tanh(batch_norm(v[0], Variable(), Variable(), Tensor(), Tensor(), true));
  };
  REQUIRE_GRADCHECK(first_grad(bn_plain, 0), {x});
  const Tensor running_mean = from_vector<double>({0.1, -0.2}), running_var = from_vector<double>({0.8, 1.3});
  auto bn_eval = [&](const std::vector<Variable>& v) {
    const Variable y = batch_norm(v[0], v[1], v[2], running_mean.clone(), running_var.clone(), /*training=*/false);
    return mul(y, y);
  };
  REQUIRE_GRADCHECK(first_grad(bn_eval, 0), {x, w, b});
  REQUIRE_GRADCHECK(first_grad(bn_eval, 1), {x, w, b});
  const Tensor lw = random_double({2, 2}, 23, 0.5, 1.5), lb = random_double({2, 2}, 24);
  auto ln = [](const std::vector<Variable>& v) { return tanh(layer_norm(v[0], {2, 2}, v[1], v[2])); };
  REQUIRE_GRADCHECK(first_grad(ln, 0), {x, lw, lb});
  REQUIRE_GRADCHECK(first_grad(ln, 1), {x, lw, lb});
  auto gn = [](const std::vector<Variable>& v) { return tanh(group_norm(v[0], 2, v[1], v[2])); };
  REQUIRE_GRADCHECK(first_grad(gn, 0), {x, w, b});
}

TEST_CASE("double backward: conv_transpose2d, weighted and soft-target cross_entropy", "[double_backward]") {
  const Tensor x = random_double({2, 3, 3, 3}, 30);
  const Tensor w = random_double({3, 2, 3, 3}, 31);  // [C_in, C_out / groups, R, S]
  const Tensor b = random_double({2}, 32);
  Conv2dParams p;
  p.stride = {2, 2};
  p.padding = {1, 0};
  auto convt = [p](const std::vector<Variable>& v) { return tanh(conv_transpose2d(v[0], v[1], v[2], p, {1, 0})); };
  REQUIRE_GRADCHECK(first_grad(convt, 0), {x, w, b});
  REQUIRE_GRADCHECK(first_grad(convt, 1), {x, w, b});

  const Tensor z = random_double({4, 3}, 33, -2.0, 2.0);
  const Tensor target = from_vector<int64_t>({0, 2, -100, 1});
  const Tensor class_weight = from_vector<double>({0.5, 2.0, 1.0});
  const Tensor soft = softmax(random_double({4, 3}, 34), 1);
  for (Reduction r : {Reduction::Mean, Reduction::Sum, Reduction::None}) {
    CrossEntropyOptions opts;
    opts.reduction = r;
    opts.label_smoothing = 0.1;
    auto weighted = [&](const std::vector<Variable>& v) { return cross_entropy(v[0], target, class_weight, opts); };
    REQUIRE_GRADCHECK(first_grad(weighted, 0), {z});
    auto probabilities = [&](const std::vector<Variable>& v) { return cross_entropy(v[0], soft, Tensor(), opts); };
    REQUIRE_GRADCHECK(first_grad(probabilities, 0), {z});
  }
}

TEST_CASE("double backward: pooling and gelu", "[double_backward]") {
  // Distinct, spread-out values keep the max-pool argmax away from ties, where max is not differentiable.
  const Tensor x = add(mul(arange(0.0, 50.0, 1.0, DType::Float64).reshape({1, 2, 5, 5}), 0.037),
                       random_double({1, 2, 5, 5}, 40, 0.0, 0.01));
  Pool2dParams p;
  p.kernel = {3, 2};
  p.stride = {2, 2};
  p.padding = {1, 1};
  auto pools = [p](const std::vector<Variable>& v) {
    const Variable& x = v[0];
    const Variable a = avg_pool2d(mul(x, x), p);                // [1, 2, 3, 3]
    const Variable m = max_pool2d(mul(x, x), p);                // [1, 2, 3, 3]
    const Variable q = adaptive_avg_pool2d(tanh(x), {2, 3});    // [1, 2, 2, 3]
    const Variable r = adaptive_max_pool2d(mul(x, x), {3, 2});  // [1, 2, 3, 2]
    return add(add(sum(mul(a, m)), sum(mul(q, q))), sum(mul(r, r)));
  };
  REQUIRE_GRADCHECK(first_grad(pools, 0), {x});
  auto g = [](const std::vector<Variable>& v) { return mul(gelu(v[0]), v[0]); };
  REQUIRE_GRADCHECK(first_grad(g, 0), {random_double({3, 4}, 42, -2.0, 2.0)});
  // Third order: gelu'' = phi(x) (2 - x^2) is itself differentiable; checked by central differences.
  Variable z(from_vector<double>({-1.0, 0.3, 1.7}), true);
  const Variable d1 = grad({sum(gelu(z))}, {z}, {}, std::nullopt, true)[0];
  const Variable d2 = grad({sum(d1)}, {z}, {}, std::nullopt, true)[0];
  const std::vector<double> d3 = to_vector<double>(grad({sum(d2)}, {z})[0].data());
  auto second = [](double u) { return std::exp(-u * u / 2) / std::sqrt(2 * M_PI) * (2 - u * u); };
  const std::vector<double> zs{-1.0, 0.3, 1.7};
  for (size_t i = 0; i < zs.size(); ++i)
    REQUIRE(d3[i] == Approx((second(zs[i] + 1e-5) - second(zs[i] - 1e-5)) / 2e-5).margin(1e-7));
}

TEST_CASE("double backward: joining, indexing and shape ops", "[double_backward]") {
  const Tensor x = random_double({3, 4}, 50);
  const Tensor idx = from_vector<int64_t>({2, 0, 3, 1, 1, 0, 0, 3, 2}, {3, 3});
  const Tensor rows = from_vector<int64_t>({2, 0, 2});
  auto f = [&](const std::vector<Variable>& v) {
    const Variable& x = v[0];
    const Variable sq = mul(x, x);
    const Variable joined = cat({x, sq}, 1);                                                    // [3, 8]
    const Variable stacked = sum(stack({x, tanh(x)}, 0), {0});                                  // [3, 4]
    const Variable picked = mul(gather(sq, 1, idx), index_select(x, 0, rows).narrow(1, 0, 3));  // [3, 3]
    const Variable padded = pad(flip(repeat(sq, {1, 2}), {1}), {1, 0});                         // [3, 9]
    return add(add(sum(mul(joined, joined)), sum(mul(stacked, x))), add(sum(picked), sum(mul(padded, padded))));
  };
  REQUIRE_GRADCHECK(first_grad(f, 0), {x});
}

TEST_CASE("Hessian-vector products match finite differences of the gradient", "[double_backward]") {
  const Tensor w = random_double({4, 3}, 15);
  const Tensor x0 = random_double({2, 4}, 16);
  const Tensor v = random_double({2, 4}, 17);
  auto f = [&](const Variable& x) {
    const Variable h = matmul(x, Variable(w));
    return add(sum(mul(tanh(h), softmax(h, 1))), sum(mul(softmax(x, 1), x)));
  };
  auto gradient = [&](const Tensor& at) {
    Variable x(at, true);
    return grad({f(x)}, {x})[0].data();
  };
  Variable x(x0, true);
  const Variable g = grad({f(x)}, {x}, {}, std::nullopt, true)[0];
  const Tensor hv = grad({sum(mul(g, Variable(v)))}, {x})[0].data();
  const double eps = 1e-6;
  const Tensor fd = div(sub(gradient(add(x0, mul(v, eps))), gradient(sub(x0, mul(v, eps)))), 2 * eps);
  require_close(hv, to_vector<double>(fd), 1e-7);
}

TEST_CASE("gradient penalty (WGAN-GP) reaches the critic's weights", "[double_backward]") {
  // D(x) = linear(tanh(linear(x, w1, b1)), w2, b2); gp = mean((|grad_x sum D| - 1)^2).
  auto penalty = [](const std::vector<Variable>& v) {
    GradModeGuard grad_on(true);
    Variable x = v[0].requires_grad() ? v[0] : Variable(v[0].data(), true);
    const bool create = v[1].requires_grad();
    const Variable d = linear(tanh(linear(x, v[1], v[2])), v[3], v[4]);
    const Variable gx = grad({sum(d)}, {x}, {}, std::nullopt, create)[0];
    const Variable norm = sqrt(add(sum(mul(gx, gx), {1}), 1e-12));
    return mean(pow(sub(norm, 1.0), 2.0));
  };
  const std::vector<Tensor> in{
      formula({4, 3}, [](int64_t i) { return std::sin(0.3 * i + 0.1); }),
      formula({5, 3}, [](int64_t i) { return 0.5 * std::cos(0.7 * i); }),
      formula({5}, [](int64_t i) { return 0.1 * i - 0.2; }),
      formula({1, 5}, [](int64_t i) { return 0.3 * std::sin(1.1 * i + 0.5); }),
      from_vector<double>({0.05}),
  };
  std::vector<Variable> vars;
  for (const Tensor& t : in) vars.emplace_back(t, true);
  const Variable gp = penalty(vars);
  gp.backward();
  // PyTorch 1.13 (tests/golden/higher_order.py).
  require_close(gp.data(), {0.848544071019}, 1e-10);
  require_close(vars[1].grad(),
                {0.0987839214518, -0.0449878733762, -0.160389572032, 0.234669763973, 0.0291271181578, -0.150530354764,
                 0.083548925944, -0.0537483549627, -0.15859881277, -0.105998309348, 0.0402123773244, 0.159637948669,
                 -0.259262022334, -0.00865781739375, 0.200766787333},
                1e-10);
  require_close(vars[2].grad(), {0.0235163528513, 0.150992427995, 0.0191550578343, -0.0112203977378, -0.153000989109},
                1e-10);
  require_close(vars[3].grad(), {0.000907128009257, 0.399586186165, -0.743421353827, 0.0447569150218, 0.548043018902},
                1e-10);
  REQUIRE_FALSE(vars[4].grad().defined());  // the penalty does not depend on b2
  // And by central differences in every input (b2 included: its gradient is zero).
  REQUIRE_GRADCHECK(penalty, in);
}

TEST_CASE("double backward: values against PyTorch", "[double_backward][golden]") {
  auto hvp = [](const std::function<Variable(const Variable&)>& f, const Tensor& at, const Tensor& v) {
    Variable x(at, true);
    const Variable g = grad({f(x)}, {x}, {}, std::nullopt, true)[0];
    return grad({sum(mul(g, Variable(v)))}, {x})[0].data();
  };
  const Tensor x = formula({2, 3}, [](int64_t i) { return 0.4 * std::sin(0.9 * i + 0.2) + 0.8; });
  const Tensor v = formula({2, 3}, [](int64_t i) { return std::cos(0.5 * i); });
  auto elementwise = [](const Variable& x) {
    return sum(add(add(div(mul(pow(x, 3.0), sqrt(add(x, 2.0))), add(exp(neg(x)), 1.0)), mul(abs(x), relu(x))),
                   mul(tanh(x), log(x))));
  };
  require_close(hvp(elementwise, x, v),
                {11.2043307614, 13.5253056821, 8.39351497104, 0.80784836167, -3.29962516949, -5.82491917823}, 1e-9);
  const Tensor c = formula({2, 3}, [](int64_t i) { return 0.3 * i - 0.5; });
  auto soft = [&](const Variable& x) {
    const Variable s = softmax(x, 1);
    return add(sum(mul(log_softmax(x, 1), Variable(c))), sum(mul(s, s)));
  };
  require_close(hvp(soft, x, v),
                {0.0649855486479, 0.0519057000922, -0.11689124874, -0.219694284833, 0.0205192222148, 0.199175062619},
                1e-10);
  const Tensor a = formula({3, 4}, [](int64_t i) { return 0.2 * std::cos(0.3 * i) + 0.1; });
  const Tensor b = formula({4, 2}, [](int64_t i) { return 0.25 * std::sin(0.8 * i + 0.4); });
  const Tensor va = formula({3, 4}, [](int64_t i) { return std::sin(0.21 * i + 1.0); });
  auto mm = [&](const Variable& a) {
    const Variable t = mean(tanh(matmul(a, Variable(b))), {0});
    return add(sum(mul(t, t)), mean(mul(sum(a, {1}, true), a)));
  };
  require_close(hvp(mm, a, va),
                {0.639689071454, 0.639030709335, 0.614289924939, 0.616393125229, 0.553203142503, 0.552547169769,
                 0.527893202029, 0.529988942925, 0.107055822852, 0.106399948788, 0.0816916684652, 0.0837904824939},
                1e-10);
  // conv2d: the mixed derivative d/dw <grad_x loss, v>.
  Variable xc(formula({1, 2, 4, 4}, [](int64_t i) { return std::sin(0.37 * i); }), true);
  Variable wc(formula({3, 2, 3, 3}, [](int64_t i) { return 0.2 * std::cos(0.13 * i + 0.3); }), true);
  Variable bc(formula({3}, [](int64_t i) { return 0.1 * i - 0.1; }), true);
  const Tensor cc = formula({1, 3, 2, 2}, [](int64_t i) { return std::cos(0.7 * i); });
  const Tensor vc = formula({1, 2, 4, 4}, [](int64_t i) { return std::cos(0.29 * i + 0.5); });
  Conv2dParams p;
  p.stride = {2, 2};
  p.padding = {1, 1};
  const Variable loss = sum(mul(tanh(conv2d(xc, wc, bc, p)), Variable(cc)));
  const Variable gx = grad({loss}, {xc}, {}, std::nullopt, true)[0];
  const auto gwb = grad({sum(mul(gx, Variable(vc)))}, {wc, bc});
  require_close(
      gwb[0].data(),
      {0.0697285058248, 0.201012438495,  0.268484726199,   0.931441786657,   1.43830811879,   0.973067979764,
       -0.108501594655, -0.70026596641,  -1.19189611645,   -0.507290525826,  -0.275314604012, -0.180059023862,
       0.426414679723,  1.18230432013,   1.53438501455,    1.05964535919,    1.77438971343,   1.56507136535,
       -0.066525352032, -0.178119020932, -0.0894873267625, -0.491652207233,  -0.679249925819, -0.249404316264,
       0.17658702871,   0.955175218174,  1.20635804807,    0.180384839941,   -0.373164286572, -0.399833309311,
       -0.293309015344, -1.02695992149,  -1.09433569083,   -0.534172965849,  -0.796990512142, -0.574378492279,
       -0.108386468196, -0.130277153481, -0.348179746109,  -0.0559722846254, -0.420806564877, -0.781400009301,
       -0.324994208437, -1.26032585878,  -1.1601415579,    0.0656376007358,  0.843705408527,  0.80040232978,
       0.149113081797,  0.726207364424,  0.418097332361,   -0.0974183984493, -0.525609375639, -0.734080864302},
      1e-9);
  require_close(gwb[1].data(), {-0.277574111153, 0.141047183284, -0.606449232108}, 1e-10);
  // cross_entropy with label smoothing.
  const Tensor z = formula({3, 4}, [](int64_t i) { return std::sin(1.3 * i + 0.2); });
  const Tensor vz = formula({3, 4}, [](int64_t i) { return 0.5 - 0.1 * i; });
  CrossEntropyOptions opts;
  opts.label_smoothing = 0.1;
  const Tensor t = from_vector<int64_t>({0, 2, 3});
  require_close(
      hvp([&](const Variable& z) { return cross_entropy(z, t, opts); }, z, vz),
      {0.0083412241767, 0.00287871883954, -0.00659114775926, -0.00462879525698, 0.00472931456124, 0.00671334920622,
       -0.0034583025003, -0.00798436126717, 0.00558145492479, 0.00417385679616, 0.00261127293717, -0.0123665846581},
      1e-11);
}

TEST_CASE("double backward through an op without a differentiable form is an error", "[double_backward]") {
  // A user op recorded with only the Tensor form of its backward.
  auto cube = [](const Variable& x) {
    const Tensor xd = x.data();
    return autograd::make_result(mul(mul(xd, xd), xd), "MyCubeBackward", {&x},
                                 [xd](const Tensor& g, const std::vector<bool>&) -> std::vector<Tensor> {
                                   return {mul(g, mul(mul(xd, xd), 3.0))};
                                 });
  };
  Variable x(from_vector<double>({1, 2}), true);
  const Variable g = grad({sum(cube(x))}, {x}, {}, std::nullopt, true)[0];
  require_close(g.data(), {3, 12}, 1e-12);  // the first gradient is fine
  REQUIRE(g.requires_grad());               // and is not a silent constant
  REQUIRE_THROWS_WITH(grad({sum(g)}, {x}), Catch::Contains("double backward through MyCubeBackward is not supported"));
  const Variable g2 = grad({sum(cube(x))}, {x}, {}, std::nullopt, true)[0];
  REQUIRE_THROWS_WITH(sum(g2).backward(), Catch::Contains("double backward through MyCubeBackward"));
}

// Each input goes through a nonlinear map first (a², sigmoid, exp), so the second
// derivative has a chain term even where the loss's own one is zero (l1's sign).
TEST_CASE("double backward: l1, smooth_l1, huber, binary cross-entropy (both), kl_div", "[double_backward]") {
  const Tensor a = random_double({3, 4}, 30, -1.5, 1.5), b = random_double({3, 4}, 31, -1.5, 1.5);
  const Tensor w = random_double({4}, 33, 0.5, 1.5);
  const Tensor pw = random_double({4}, 34, 0.5, 2.0);
  for (Reduction r : {Reduction::Mean, Reduction::Sum, Reduction::None}) {
    std::vector<test::VariableFn> losses = {
        [r](const std::vector<Variable>& v) { return l1_loss(mul(v[0], v[0]), mul(v[1], v[1]), r); },
        [r](const std::vector<Variable>& v) { return smooth_l1_loss(mul(v[0], v[0]), mul(v[1], v[1]), r, 0.7); },
        [r](const std::vector<Variable>& v) { return huber_loss(mul(v[0], v[0]), mul(v[1], v[1]), r, 0.9); },
        [r, w](const std::vector<Variable>& v) { return binary_cross_entropy(sigmoid(v[0]), sigmoid(v[1]), w, r); },
        [r, w, pw](const std::vector<Variable>& v) {
          return binary_cross_entropy_with_logits(mul(v[0], v[0]), sigmoid(v[1]), w, pw, r);
        },
        [r](const std::vector<Variable>& v) {
          return binary_cross_entropy_with_logits(v[0], sigmoid(v[1]), Tensor(), Tensor(), r);
        },
    };
    for (size_t i = 0; i < losses.size(); ++i) {
      INFO("loss " << i << ", reduction " << static_cast<int>(r));
      REQUIRE_GRADCHECK(first_grad(losses[i], 0), {a, b});
      REQUIRE_GRADCHECK(first_grad(losses[i], 1), {a, b});
    }
  }
  for (KLDivReduction r : {KLDivReduction::BatchMean, KLDivReduction::Sum, KLDivReduction::None}) {
    for (bool log_target : {false, true}) {
      auto kl = [r, log_target](const std::vector<Variable>& v) {
        return kl_div(mul(v[0], v[0]), log_target ? v[1] : exp(v[1]), r, log_target);
      };
      INFO("kl_div, log_target " << log_target);
      REQUIRE_GRADCHECK(first_grad(kl, 0), {a, b});
      REQUIRE_GRADCHECK(first_grad(kl, 1), {a, b});
    }
  }
}
