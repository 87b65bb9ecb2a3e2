// LibTorch's autograd spellings on Variable: in-place ops recorded in the graph (with the
// leaf and saved-tensor checks PyTorch makes), writes through views (`out[i] = f(x)`) and
// the views of the same base taken before such a write,
// operator[], register_hook and retain_grad on any variable, backward(gradient,
// retain_graph, create_graph), and a backward started inside a custom function's backward
// (reentrant, as activation checkpointing does). Expected values are PyTorch 1.13's.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "tests/common/gradcheck.h"
#include "tests/common/values.h"
#include <ddl/ddl.h>

using namespace ddl;
using ddl::test::kModified;
using ddl::test::param;
using ddl::test::v;

TEST_CASE("in-place ops on a non-leaf are recorded", "[autograd][spelling][inplace]") {
  // a, b = tensor([1,2,3], rg), tensor([4,5,6], rg); y = a * 1; y.mul_(b); y.div_(b * 0 + 2);
  // y.sub_(a, alpha=2); y.clamp_(-10, 4); y.sum().backward() -> a.grad [0, .5, 1], b.grad [.5, 1, 1.5]
  Variable a = param({1, 2, 3}), b = param({4, 5, 6});
  Variable y = a * 1.0;
  y.mul_(b);
  y.div_(b * 0.0 + 2.0);
  y.sub_(a, 2.0);
  y.clamp_(-10.0, 4.0);
  REQUIRE(v(y.data()) == std::vector<double>{0, 1, 3});
  REQUIRE(y.grad_fn() != nullptr);
  y.sum().backward();
  REQUIRE(v(a.grad()) == std::vector<double>{0, 0.5, 1});
  REQUIRE(v(b.grad()) == std::vector<double>{0.5, 1, 1.5});
}

TEST_CASE("in-place ops match finite differences", "[autograd][spelling][inplace]") {
  using VS = std::vector<Variable>;
  const Tensor x = test::random_double({3, 4}, 1), w = test::random_double({4}, 2, 0.5, 1.5);
  REQUIRE_GRADCHECK([](const VS& in) { return (in[0] * 1.0).add_(in[1], 0.5); }, {x, w});
  REQUIRE_GRADCHECK([](const VS& in) { return (in[0] * 1.0).sub_(in[1]); }, {x, w});
  REQUIRE_GRADCHECK([](const VS& in) { return (in[0] * 1.0).mul_(in[1]); }, {x, w});
  REQUIRE_GRADCHECK([](const VS& in) { return (in[0] * 1.0).div_(in[1]); }, {x, w});
  REQUIRE_GRADCHECK([](const VS& in) { return (in[0] * 3.0).add_(2.0).mul_(3.0).div_(4.0).sub_(1.0); }, {x});
  REQUIRE_GRADCHECK([](const VS& in) { return (in[0] * 1.0).clamp_(-0.5, 0.5); }, {x});
  REQUIRE_GRADCHECK([](const VS& in) { return (in[0] * 1.0).copy_(in[1]); }, {x, w});
  REQUIRE_GRADCHECK([](const VS& in) { return (in[0] * 2.0).fill_(3.0) + in[0]; }, {x});
  REQUIRE_GRADCHECK([](const VS& in) { return (in[0] * 2.0).zero_() + in[0]; }, {x});
  // Into a constant: the result takes the other operand's history (PyTorch: grad_fn=AddBackward0).
  REQUIRE_GRADCHECK(
      [](const VS& in) {
        Variable acc(zeros({4}, kFloat64));
        acc.add_(in[0]);
        return acc.mul_(in[0]);
      },
      {w});
}

TEST_CASE("an in-place op on a leaf that requires grad is refused; under no_grad it writes", "[autograd][spelling]") {
  Variable x = param({1, 2, 3});
  REQUIRE_THROWS_WITH(x.add_(1.0), Catch::StartsWith("add_: a leaf Variable that requires grad is being used in an "
                                                     "in-place operation"));
  REQUIRE_THROWS_WITH(x.mul_(x), Catch::StartsWith("mul_: a leaf Variable"));
  REQUIRE_THROWS_WITH(x[0].add_(1.0), Catch::StartsWith("add_: a view of a leaf Variable that requires grad"));
  REQUIRE_THROWS_WITH(x[0] = 5, Catch::StartsWith("fill_: a view of a leaf Variable that requires grad"));
  REQUIRE(v(x.data()) == std::vector<double>{1, 2, 3});
  {
    NoGradGuard no_grad;  // torch::NoGradGuard: an optimizer-style update
    x.sub_(x.data(), 0.5);
    x[0] = 7;
  }
  REQUIRE(v(x.data()) == std::vector<double>{7, 1, 1.5});
  REQUIRE(x.is_leaf());
}

TEST_CASE("writing in place a value some op saved raises at backward", "[autograd][spelling][inplace]") {
  // x.exp() saves its output; y.mul_(2) then changes it (PyTorch: "... modified by an inplace operation").
  Variable x = param({1, 2});
  Variable y = x.exp();
  y.mul_(2.0);
  REQUIRE_THROWS_WITH(y.sum().backward(), Catch::Contains(kModified) && Catch::Contains("ExpBackward"));
  // An op that did not save the value is unaffected.
  Variable z = x + 1.0;
  Variable s = z * 3.0;
  z.add_(1.0);
  s.sum().backward();
  REQUIRE(v(x.grad()) == std::vector<double>{3, 3});
}

TEST_CASE("out[i] = f(x) into a zeros tensor carries x's gradient", "[autograd][spelling][views]") {
  // out = torch.zeros(2, 3); out[1] = w * 2; out.sum().backward() -> w.grad [2, 2, 2]
  Variable w = param({1, 2, 3});
  Variable out(zeros({2, 3}, kFloat64));
  out[1] = w * 2.0;
  REQUIRE(v(out.data()) == std::vector<double>{0, 0, 0, 2, 4, 6});
  REQUIRE(out.requires_grad());
  REQUIRE(out.grad_fn() != nullptr);
  REQUIRE(out.grad_fn()->name() == "CopySlices");
  (out * out).sum().backward();  // d/dw sum((2w)^2) = 8w
  REQUIRE(v(w.grad()) == std::vector<double>{8, 16, 24});
  // LibTorch's index_put_-style element writes, t[0][1] = 5, on a variable.
  Variable u = param({1, 2, 3, 4});
  Variable t = u.view({2, 2}) * 1.0;
  t[0][1] = 5;
  REQUIRE(v(t.data()) == std::vector<double>{1, 5, 3, 4});
  (t * t).sum().backward();  // the overwritten element passes no gradient
  REQUIRE(v(u.grad()) == std::vector<double>{2, 0, 6, 8});
}

TEST_CASE("an in-place op on a view of a non-leaf updates the base's history", "[autograd][spelling][views]") {
  // x = tensor([1., 2, 3], rg); y = x * 1; y[0].mul_(3); y.sum().backward() -> x.grad [3, 1, 1]
  Variable x = param({1, 2, 3});
  Variable y = x * 1.0;
  y[0].mul_(3.0);
  REQUIRE(v(y.data()) == std::vector<double>{3, 2, 3});
  y.sum().backward();
  REQUIRE(v(x.grad()) == std::vector<double>{3, 1, 1});
  // A view of a view, written with another variable: gradients to both.
  using VS = std::vector<Variable>;
  REQUIRE_GRADCHECK(
      [](const VS& in) {
        Variable y = in[0] * 1.0;
        y.slice(1, 1, 3).select(0, 1).mul_(in[1]);
        return y * y;
      },
      {test::random_double({3, 4}, 3), test::random_double({2}, 4)});
  REQUIRE_GRADCHECK(
      [](const VS& in) {
        Variable y = in[0] * 1.0;
        Variable row = y[2];
        row.copy_(in[1]);
        return y * row.sum();
      },
      {test::random_double({3, 2}, 5), test::random_double({2}, 6)});
}

TEST_CASE("operator[] on a Variable is differentiable", "[autograd][spelling]") {
  Variable x = param({1, 2, 3, 4, 5, 6});
  Variable m = x.view({2, 3});
  Variable e = m[1][2];  // x[1][2]
  REQUIRE(e.item() == 6);
  Variable g = m[ddl::tensor({1, 1})];  // x[torch::tensor({1, 1})]
  (e * 2.0 + g.sum()).backward();
  REQUIRE(v(x.grad()) == std::vector<double>{0, 0, 0, 2, 2, 4});
  REQUIRE(m[1].data().shares_storage(x.data()));
}

TEST_CASE("register_hook on a non-leaf and on a leaf; a hook may replace the gradient", "[autograd][spelling][hooks]") {
  // y = x * 2; y.register_hook(lambda g: g * 10); y.sum().backward() -> x.grad [20, 20]
  Variable x = param({1, 2});
  Variable y = x * 2.0;
  std::vector<double> seen;
  y.register_hook([&](Tensor grad) { seen = v(grad); });  // a void hook only looks
  y.register_hook([](Tensor grad) { return grad * 10.0; });
  y.sum().backward();
  REQUIRE(seen == std::vector<double>{1, 1});
  REQUIRE(v(x.grad()) == std::vector<double>{20, 20});

  Variable z = param({1, 2});
  const int id = z.register_hook([](const Tensor& g) { return g * 3.0; });  // on a leaf: before accumulation
  (z * z).sum().backward();
  REQUIRE(v(z.grad()) == std::vector<double>{6, 12});
  z.remove_hook(id);
  z.zero_grad();
  (z * z).sum().backward();
  REQUIRE(v(z.grad()) == std::vector<double>{2, 4});

  REQUIRE_THROWS_WITH(Variable(ones({1})).register_hook([](const Tensor& g) { return g; }),
                      Catch::Contains("cannot register a hook on a variable that doesn't require gradient"));
  Variable q = x * 1.0;
  q.register_hook([](const Tensor&) { return zeros({5}); });
  REQUIRE_THROWS_WITH(q.sum().backward(), Catch::Contains("register_hook: the hook on the output of"));
}

TEST_CASE("retain_grad keeps a non-leaf's gradient", "[autograd][spelling][hooks]") {
  Variable x = param({1, 2, 3});
  Variable y = x * x;
  REQUIRE_FALSE(y.retains_grad());
  y.retain_grad();  // y.retain_grad();
  REQUIRE(y.retains_grad());
  Variable z = y * 3.0;
  z.sum().backward({}, true);
  REQUIRE(v(y.grad()) == std::vector<double>{3, 3, 3});
  REQUIRE_FALSE(z.grad().defined());  // not asked
  z.sum().backward();                 // accumulates, as .grad does
  REQUIRE(v(y.grad()) == std::vector<double>{6, 6, 6});
  // After the hooks: the retained gradient is the replaced one.
  Variable a = param({1});
  Variable b = a * 2.0;
  b.retain_grad();
  b.register_hook([](const Tensor& g) { return g * 5.0; });
  b.backward();
  REQUIRE(v(b.grad()) == std::vector<double>{5});
  REQUIRE(v(a.grad()) == std::vector<double>{10});
}

TEST_CASE("backward(gradient, retain_graph, create_graph)", "[autograd][spelling]") {
  Variable x = param({1, 2});
  Variable y = x * x;
  y.backward(ones({2}, kFloat64), /*retain_graph=*/true);  // y.backward(torch::ones({2}), true)
  y.backward(ones({2}, kFloat64));
  REQUIRE(v(x.grad()) == std::vector<double>{4, 8});
  REQUIRE_THROWS_WITH(y.backward(ones({2}, kFloat64)), Catch::Contains("second time"));
  Variable w = x * 3.0;
  REQUIRE_THROWS_WITH(w.sum().backward({}, std::nullopt, /*create_graph=*/true),
                      Catch::Contains("create_graph=true is not supported here") && Catch::Contains("autograd::grad"));
}

TEST_CASE("backward inside a custom function's backward (reentrant)", "[autograd][spelling][custom]") {
  // A checkpoint-like op: forward computes sin(x) * x without recording; backward recomputes it
  // with grad on and backpropagates through the recomputation (PyTorch allows this).
  autograd::CustomFunction recompute{"Recompute",
                                     [](autograd::FunctionCtx& ctx, const std::vector<Tensor>& in) {
                                       ctx.save_for_backward({in[0]});
                                       return std::vector<Tensor>{mul(sin(in[0]), in[0])};
                                     },
                                     [](autograd::FunctionCtx& ctx, const std::vector<Tensor>& g) {
                                       Variable x(ctx.saved_tensors()[0].clone(), true);
                                       GradModeGuard grad_on(true);
                                       Variable y = sin(x) * x;
                                       y.backward(g[0]);  // a backward pass inside this one
                                       return std::vector<Tensor>{x.grad()};
                                     }};
  Variable x = param({0.5, 1.0, 2.0});
  Variable out = recompute.apply({x})[0];
  int end_calls = 0;
  const int cb = autograd::add_backward_end_callback([&] { ++end_calls; });
  (out * 2.0).sum().backward();
  autograd::remove_backward_end_callback(cb);
  REQUIRE(end_calls == 1);  // the end-of-backward callbacks run once, for the outer pass
  const std::vector<double> xs = {0.5, 1.0, 2.0};
  for (size_t i = 0; i < xs.size(); ++i)
    REQUIRE(v(x.grad())[i] == Approx(2 * (std::cos(xs[i]) * xs[i] + std::sin(xs[i]))));
}

TEST_CASE("views taken before an in-place write of their base get the base's new history",
          "[autograd][spelling][views]") {
  // x = tensor([[1., 2, 3], [4, 5, 6]], rg); y = tensor([1., 2, 3], rg); b = x * 1
  // v1 = b[0]; v2 = b.t(); w = b[1]; v1.mul_(y); c = tensor([[1., 2], [3, 4], [5, 6]])
  // ((v2 * c).sum() + (w * 3).sum()).backward() -> x.grad [[1, 6, 15], [5, 7, 9]],
  // y.grad [1, 6, 15]; v2 and w are regenerated as AsStridedBackward0 of b's new history.
  Variable x(from_vector<double>({1, 2, 3, 4, 5, 6}).view({2, 3}), true);
  Variable y = param({1, 2, 3});
  Variable b = x * 1.0;
  Variable v1 = b[0], v2 = b.t(), w = b[1];
  v1.mul_(y);
  Variable c(from_vector<double>({1, 2, 3, 4, 5, 6}).view({3, 2}));
  ((v2 * c).sum() + (w * 3.0).sum()).backward();
  REQUIRE(v(x.grad()) == std::vector<double>{1, 6, 15, 5, 7, 9});
  REQUIRE(v(y.grad()) == std::vector<double>{1, 6, 15});
  // The base written directly, and a view that overlaps itself (expand):
  // x = tensor([1., 2, 3], rg); b = x * 1; e = b.expand(2, 3); b.mul_(2)
  // (e * tensor([[1., 2, 3], [4, 5, 6]])).sum().backward() -> x.grad [10, 14, 18]
  Variable x2 = param({1, 2, 3});
  Variable b2 = x2 * 1.0;
  Variable e = b2.expand({2, 3});
  b2.mul_(2.0);
  (e * Variable(from_vector<double>({1, 2, 3, 4, 5, 6}).view({2, 3}))).sum().backward();
  REQUIRE(v(x2.grad()) == std::vector<double>{10, 14, 18});
  // retain_grad asked before the write still holds: x = tensor([1., 2, 3], rg); b = x * 1
  // v1 = b[0]; v2 = b[1:]; s0 = b[2]; v2.retain_grad(); v1.mul_(2)
  // ((v2 * 3).sum() + s0 * 5).backward() -> x.grad [0, 3, 8], v2.grad [3, 3]
  Variable x3 = param({1, 2, 3});
  Variable b3 = x3 * 1.0;
  Variable s1 = b3[0], s2 = b3.slice(0, 1, 3), s0 = b3[2];
  s2.retain_grad();
  s1.mul_(2.0);
  ((s2 * 3.0).sum() + s0 * 5.0).backward();
  REQUIRE(v(x3.grad()) == std::vector<double>{0, 3, 8});
  REQUIRE(s2.grad().defined());
  REQUIRE(v(s2.grad()) == std::vector<double>{3, 3});
}

TEST_CASE("writes that change no history leave older views alone", "[autograd][spelling][views]") {
  // An optimizer-style write into a leaf, under no_grad, between two uses of a view of it.
  Variable x = param({1, 2, 3, 4});
  Variable xt = x.view({2, 2}).t();
  (xt * 2.0).sum().backward({}, true);
  {
    NoGradGuard no_grad;
    x.sub_(1.0);
    x.data().mul_(2.0);
  }
  const std::string name = xt.grad_fn()->name();
  x.zero_grad();
  (xt * xt).sum().backward();  // xt is now [[0, 4], [2, 6]]
  REQUIRE(v(x.grad()) == std::vector<double>{0, 4, 8, 12});
  REQUIRE(xt.grad_fn()->name() == name);
  // A view taken after the write is current.
  Variable x2 = param({1, 2});
  Variable b = x2 * 1.0;
  b.mul_(3.0);
  Variable late = b[1];
  REQUIRE(late.grad_fn()->name() != "AsStridedBackward");
  (late * 1.0).sum().backward();
  REQUIRE(v(x2.grad()) == std::vector<double>{0, 3});
}

TEST_CASE("a view taken under no_grad whose base is then written with grad on is refused",
          "[autograd][spelling][views]") {
  // As PyTorch: "A view was created in no_grad mode and its base or another view of its base has
  // been modified inplace with grad mode enabled".
  Variable x = param({1, 2, 3});
  Variable b = x * 1.0;
  Variable quiet;
  {
    NoGradGuard no_grad;
    quiet = b[1];
  }
  b[0].mul_(2.0);
  REQUIRE_THROWS_WITH((quiet * 3.0).sum(), Catch::Contains("created in no_grad mode"));
}
