// In-place writes and autograd: every in-place op bumps its storage's version, and a
// backward that would read a saved tensor changed since it was saved throws, as PyTorch's
// "Autograd mechanics: In-place correctness checks" (Note [Saved tensor versions]).
#include <catch2/catch.hpp>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "tests/common/values.h"
#include <ddl/autograd/grad.h>
#include <ddl/ddl.h>
#include <ddl/tensor/ops/sgd_update.h>

using namespace ddl;
using ddl::test::kModified;
using ddl::test::param;
using ddl::test::v;

TEST_CASE("writing into a saved input between forward and backward throws", "[autograd][inplace]") {
  // Unchecked, backward would read w = 30 and give x.grad = 30 instead of 3 (PyTorch raises).
  Variable x = param({1});
  Tensor w = from_vector<double>({3});
  Variable y = sum(x * Variable(w));
  const uint64_t saw = w.version();
  w.mul_(10.0);
  REQUIRE(w.version() == saw + 1);
  REQUIRE_THROWS_WITH(y.backward(), Catch::Contains(kModified) && Catch::Contains("[MulBackward, input 1") &&
                                        Catch::Contains("is at version " + std::to_string(saw + 1) +
                                                        "; expected version " + std::to_string(saw) + " instead"));
  REQUIRE_FALSE(x.grad().defined());
}

TEST_CASE("the error names a named leaf and a saved output", "[autograd][inplace]") {
  Variable x = param({1, 2});
  x.set_name("x");
  Variable y = sum(x * x);
  x.data().add_(1.0);  // as a hand-written update of a parameter's values would
  REQUIRE_THROWS_WITH(y.backward(), Catch::Contains("[MulBackward, input 0 of shape [2] 'x']"));

  Variable z = param({0.5});
  Variable e = exp(z);  // ExpBackward saves its output
  e.data().fill_(7.0);
  REQUIRE_THROWS_WITH(sum(e).backward(), Catch::Contains("[ExpBackward, output 0]"));
}

TEST_CASE("an input the op did not save may change", "[autograd][inplace]") {
  // add saves nothing: PyTorch accepts this too, and the gradient is still exact.
  Variable x = param({1, 2});
  Tensor c = from_vector<double>({5, 5});
  Variable y = sum(x + Variable(c));
  c.add_(1.0);
  y.backward();
  REQUIRE(v(x.grad()) == std::vector<double>{1, 1});
}

TEST_CASE("views share the version: a write through any view counts", "[autograd][inplace]") {
  Variable x = param({1, 2});
  Tensor w = from_vector<double>({3, 4, 5, 6}).view({2, 2});
  Variable y = sum(x * Variable(w.select(0, 1)));  // saves a view of row 1
  w.select(0, 0).fill_(0.0);                       // writes row 0 of the same storage
  REQUIRE_THROWS_WITH(y.backward(), Catch::Contains(kModified));
}

TEST_CASE("every in-place op bumps the version", "[autograd][inplace]") {
  // One row per in-place entry point; a missing bump leaves a silently wrong gradient.
  const std::vector<std::pair<const char*, std::function<void(const Tensor&)>>> ops = {
      {"copy_",
       [](const Tensor& t) {
         t.copy_(from_vector<double>({1, 2, 3, 4}));
       }},
      {"fill_", [](const Tensor& t) { t.fill_(1.0); }},
      {"zero_", [](const Tensor& t) { t.zero_(); }},
      {"add_(tensor)", [](const Tensor& t) { t.add_(ones({4}, DType::Float64)); }},
      {"sub_", [](const Tensor& t) { t.sub_(ones({4}, DType::Float64)); }},
      {"mul_(tensor)", [](const Tensor& t) { t.mul_(ones({4}, DType::Float64)); }},
      {"div_(tensor)", [](const Tensor& t) { t.div_(ones({4}, DType::Float64)); }},
      {"add_(scalar)", [](const Tensor& t) { t.add_(1.0); }},
      {"mul_(scalar)", [](const Tensor& t) { t.mul_(2.0); }},
      {"div_(scalar)", [](const Tensor& t) { t.div_(2.0); }},
      {"clamp_", [](const Tensor& t) { t.clamp_(0.0, 1.0); }},
      {"index_put_(basic)", [](const Tensor& t) { t.index_put_({Slice(0, 2)}, 5.0); }},
      {"index_put_(advanced)",
       [](const Tensor& t) {
         t.index_put_({from_vector<int64_t>({0, 3})}, 5.0);
       }},
      {"masked_fill_",
       [](const Tensor& t) {
         masked_fill_(t, from_vector<double>({1, 0, 1, 0}).ne(0.0), 9.0);
       }},
      {"scatter_", [](const Tensor& t) { scatter_(t, 0, from_vector<int64_t>({1}), 4.0); }},
      {"scatter_add_",
       [](const Tensor& t) { scatter_add_(t, 0, from_vector<int64_t>({1}), from_vector<double>({4})); }},
      {"uniform_", [](const Tensor& t) { uniform_(t, 0.0, 1.0, default_generator()); }},
      {"normal_", [](const Tensor& t) { normal_(t, 0.0, 1.0, default_generator()); }},
      {"sgd_update_",
       [](const Tensor& t) {
         Tensor no_momentum;
         sgd_update_(t, ones({4}, DType::Float64), no_momentum, SgdUpdate{});
       }},
  };
  for (const auto& [name, op] : ops) {
    INFO(name);
    const Tensor t = from_vector<double>({1, 2, 3, 4});
    const Tensor view = t.view({2, 2});
    const uint64_t before = view.version();
    op(t);
    CHECK(view.version() > before);
  }
  // Out-of-place ops and views write nothing into their source.
  const Tensor t = from_vector<double>({1, 2});
  const uint64_t before = t.version();
  (void)add(t, t).clone();
  (void)t.view({2, 1}).contiguous();
  REQUIRE(t.version() == before);
}

TEST_CASE("an optimizer step after backward is fine; before a retained second backward it is not",
          "[autograd][inplace]") {
  Variable w = param({1, 2});
  optim::SGD opt({w}, optim::SGDOptions{0.1});
  for (int step = 0; step < 2; ++step) {
    opt.zero_grad();
    Variable y = sum(w * w);
    y.backward();
    opt.step();  // the graph is gone: nothing saved w any more
  }
  // w: 1 -> 0.8 -> 0.64, 2 -> 1.6 -> 1.28
  REQUIRE(v(w.data())[0] == Approx(0.64));
  REQUIRE(v(w.data())[1] == Approx(1.28));

  // As PyTorch: a graph kept with retain_graph still holds the old w, so after the step
  // a second backward through it would mix old saved values with new ones.
  Variable y = sum(w * w);
  y.backward({}, /*retain_graph=*/true);
  opt.step();
  REQUIRE_THROWS_WITH(y.backward(), Catch::Contains(kModified) && Catch::Contains("MulBackward"));
}

TEST_CASE("grad() and create_graph check saved versions too", "[autograd][inplace]") {
  Variable x = param({1, 2});
  Tensor c = from_vector<double>({3, 4});
  Variable y = sum(x * Variable(c));
  c.fill_(0.0);
  REQUIRE_THROWS_WITH(autograd::grad({y}, {x}), Catch::Contains(kModified));

  Variable x2 = param({1, 2});
  Variable y2 = sum(exp(x2));
  x2.data().mul_(3.0);
  REQUIRE_THROWS_WITH(autograd::grad({y2}, {x2}, {}, std::nullopt, /*create_graph=*/true),
                      Catch::Contains(kModified) && Catch::Contains("ExpBackward"));
}

TEST_CASE("a custom function's saved tensors are checked at backward", "[autograd][inplace]") {
  autograd::CustomFunction square{"MySquare",
                                  [](autograd::FunctionCtx& ctx, const std::vector<Tensor>& in) {
                                    ctx.save_for_backward({in[0]});
                                    return std::vector<Tensor>{mul(in[0], in[0])};
                                  },
                                  [](autograd::FunctionCtx& ctx, const std::vector<Tensor>& g) {
                                    return std::vector<Tensor>{mul(mul(g[0], ctx.saved_tensors()[0]), 2.0)};
                                  }};
  Variable x = param({1, 2});
  Variable y = sum(square.apply({x})[0]);
  x.data().add_(1.0);
  REQUIRE_THROWS_WITH(y.backward(), Catch::Contains(kModified) && Catch::Contains("[MySquare, saved tensor 0]"));

  Variable x2 = param({1, 2});
  sum(square.apply({x2})[0]).backward();  // unchanged: runs
  REQUIRE(v(x2.grad()) == std::vector<double>{2, 4});
}
