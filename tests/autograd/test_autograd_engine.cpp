// The engine: accumulation, retain_graph, no_grad, detach, hooks, callbacks, order.
#include <catch2/catch.hpp>
#include <cmath>
#include <numeric>

#include "tests/common/gradcheck.h"
#include "tests/common/values.h"
#include <ddl/ddl.h>

using namespace ddl;
using ddl::test::param;
using ddl::test::v;

TEST_CASE("backward of a scalar fills leaf gradients", "[autograd]") {
  Variable x = param({1, 2, 3});
  Variable y = sum(x * x);  // dy/dx = 2x
  REQUIRE(y.grad_fn() != nullptr);
  REQUIRE_FALSE(y.is_leaf());
  y.backward();
  REQUIRE(v(x.grad()) == std::vector<double>{2, 4, 6});
}

TEST_CASE("gradients accumulate across backward calls until zeroed", "[autograd]") {
  Variable x = param({1, 2});
  sum(x * 3.0).backward();
  sum(x * 3.0).backward();
  REQUIRE(v(x.grad()) == std::vector<double>{6, 6});
  x.zero_grad(false);
  REQUIRE(v(x.grad()) == std::vector<double>{0, 0});
  x.zero_grad();
  REQUIRE_FALSE(x.grad().defined());
}

TEST_CASE("a variable used twice gets the sum of both paths", "[autograd]") {
  Variable x = param({2});
  Variable y = x * x + x * 3.0 + exp(x) * 0.0;  // 2x + 3
  y.backward(ones({1}, DType::Float64));
  REQUIRE(v(x.grad()) == std::vector<double>{7});
}

TEST_CASE("the graph is freed after backward unless retained", "[autograd]") {
  Variable x = param({1, 2});
  Variable y = sum(exp(x));
  y.backward({}, true);
  y.backward();
  REQUIRE(x.grad().defined());
  REQUIRE_THROWS_WITH(y.backward(), Catch::Contains("backward through the graph a second time"));
}

TEST_CASE("non-scalar roots need an explicit gradient", "[autograd]") {
  Variable x = param({1, 2});
  Variable y = x * 2.0;
  REQUIRE_THROWS_WITH(y.backward(), Catch::Contains("one-element output"));
  y.backward(from_vector<double>({1, 10}));
  REQUIRE(v(x.grad()) == std::vector<double>{2, 20});
}

TEST_CASE("NoGradGuard and detach stop recording", "[autograd]") {
  Variable x = param({1, 2});
  {
    NoGradGuard guard;
    Variable y = x * 2.0;
    REQUIRE_FALSE(y.requires_grad());
    REQUIRE(y.grad_fn() == nullptr);
  }
  REQUIRE(is_grad_enabled());
  Variable d = x.detach();
  REQUIRE_FALSE(d.requires_grad());
  REQUIRE(d.data().shares_storage(x.data()));
  Variable y = sum(x * d);  // d is a constant: dy/dx = d
  y.backward();
  REQUIRE(v(x.grad()) == std::vector<double>{1, 2});
  REQUIRE_THROWS_WITH(sum(d).backward(), Catch::Contains("does not require grad"));
}

TEST_CASE("only float leaves may require grad", "[autograd]") {
  REQUIRE_THROWS_WITH(Variable(from_vector<int64_t>({1}), true), Catch::Contains("only float tensors"));
}

TEST_CASE("post-accumulate hooks fire once per leaf with the final gradient", "[autograd][hooks]") {
  Variable w = param({1, 2}), b = param({3});
  std::vector<std::string> fired;
  std::vector<double> seen;
  w.register_post_accumulate_grad_hook([&](Variable& p) {
    fired.push_back("w");
    seen = v(p.grad());
  });
  const int id = b.register_post_accumulate_grad_hook([&](Variable&) { fired.push_back("b"); });
  // w feeds two paths: the hook must see their sum, once.
  Variable y = sum(w * 2.0) + sum(w * w) + sum(b);
  y.backward();
  REQUIRE(std::count(fired.begin(), fired.end(), "w") == 1);
  REQUIRE(std::count(fired.begin(), fired.end(), "b") == 1);
  REQUIRE(seen == std::vector<double>{4, 6});
  b.remove_hook(id);
  fired.clear();
  sum(b * 2.0).backward();
  REQUIRE(fired.empty());
}

TEST_CASE("parameters near the loss finish first", "[autograd][hooks]") {
  Variable w1 = param({1, 1}), w2 = param({1, 1});
  std::vector<int> order;
  w1.register_post_accumulate_grad_hook([&](Variable&) { order.push_back(1); });
  w2.register_post_accumulate_grad_hook([&](Variable&) { order.push_back(2); });
  Variable h = tanh(w1 * 2.0);
  Variable y = sum(h * w2);
  y.backward();
  REQUIRE(order == std::vector<int>{2, 1});
}

TEST_CASE("end-of-backward callbacks run after every gradient is in place", "[autograd][hooks]") {
  Variable w = param({1, 2});
  bool saw_grad = false;
  int runs = 0;
  w.register_post_accumulate_grad_hook([&](Variable& p) {
    autograd::queue_callback([&, p] {
      saw_grad = p.grad().defined();
      ++runs;
    });
  });
  int persistent = 0;
  const int id = autograd::add_backward_end_callback([&] { ++persistent; });
  sum(w * w).backward();
  sum(w * w).backward();
  autograd::remove_backward_end_callback(id);
  sum(w * w).backward();
  REQUIRE(saw_grad);
  REQUIRE(runs == 3);
  REQUIRE(persistent == 2);
  REQUIRE_THROWS_WITH(autograd::queue_callback([] {}), Catch::Contains("only valid while a backward pass runs"));
}

TEST_CASE("a branch with no gradient does not block the rest", "[autograd]") {
  Variable x = param({1, 2});
  Variable c = Variable(from_vector<double>({5, 5}));  // constant
  Variable y = sum(x * 2.0) + sum(c * 3.0);
  y.backward();
  REQUIRE(v(x.grad()) == std::vector<double>{2, 2});
}

TEST_CASE("gradcheck itself catches a wrong backward", "[autograd][gradcheck]") {
  // f(x) = x^2 with a deliberately wrong derivative (x instead of 2x).
  auto wrong_square = [](const std::vector<Variable>& in) {
    const Tensor x = in[0].data();
    return autograd::make_result(
        mul(x, x), "WrongSquareBackward", {&in[0]},
        [x](const Tensor& g, const std::vector<bool>&) -> std::vector<Tensor> { return {mul(g, x)}; });
  };
  const std::string msg = test::gradcheck(wrong_square, {test::random_double({3}, 1)});
  REQUIRE_FALSE(msg.empty());
  REQUIRE(msg.find("analytic") != std::string::npos);
}

TEST_CASE("a callback queued by a callback runs too", "[autograd][hooks]") {
  // PyTorch's engine runs callbacks queued while its final callbacks run. Queuing many
  // from inside a running callback makes the list reallocate under it (a use-after-free
  // when the engine iterated the vector; ASan reports it, and the later ones never ran).
  Variable w = param({1, 2});
  std::vector<int> ran;
  w.register_post_accumulate_grad_hook([&](Variable&) {
    autograd::queue_callback([&] {
      ran.push_back(0);
      for (int i = 1; i <= 40; ++i) autograd::queue_callback([&ran, i] { ran.push_back(i); });
    });
  });
  int from_persistent = 0;
  const int id = autograd::add_backward_end_callback([&] { autograd::queue_callback([&] { ++from_persistent; }); });
  sum(w * w).backward();
  autograd::remove_backward_end_callback(id);
  std::vector<int> expected(41);
  std::iota(expected.begin(), expected.end(), 0);
  REQUIRE(ran == expected);
  REQUIRE(from_persistent == 1);
}

TEST_CASE("independent branches run most recent first, as PyTorch", "[autograd][hooks]") {
  // Three branches meet in two adds. Ready nodes run newest first (Note [Backward order]):
  // the last branch written, nearest the loss, finishes first. PyTorch 1.13 fires the
  // leaf hooks of the same graph in the order 3, 2, 1; oldest-first would give 1, 2, 3.
  Variable w1 = param({1, 1}), w2 = param({1, 1}), w3 = param({1, 1});
  std::vector<int> order;
  w1.register_post_accumulate_grad_hook([&](Variable&) { order.push_back(1); });
  w2.register_post_accumulate_grad_hook([&](Variable&) { order.push_back(2); });
  w3.register_post_accumulate_grad_hook([&](Variable&) { order.push_back(3); });
  // One statement per branch: C++ leaves the evaluation order of a + b's operands open.
  Variable b1 = sum(w1 * 2.0);
  Variable b2 = sum(w2 * 3.0);
  Variable b3 = sum(w3 * 4.0);
  Variable y = b1 + b2;
  y = y + b3;
  y.backward();
  REQUIRE(order == std::vector<int>{3, 2, 1});

  // A skip connection: w1 feeds the chain and the loss directly; its hook still waits for
  // both paths (PyTorch: 3, 2, 1) and sees their sum.
  order.clear();
  w1.zero_grad();
  Variable h1 = tanh(w1 * 2.0);
  Variable h2 = tanh(h1 * w2);
  Variable main_path = sum(h2 * w3);
  Variable skip = sum(w1 * 3.0);
  Variable z = main_path + skip;
  z.backward();
  REQUIRE(order == std::vector<int>{3, 2, 1});
}

TEST_CASE("several roots over a shared subexpression", "[autograd][hooks]") {
  // h = tanh(x * w0) feeds two outputs; w0 must wait for both and get the sum.
  // Values and order (2, 1, 0) from PyTorch 1.13: torch.autograd.backward([y1, y2]).
  Variable w0 = param({0.5, 1.5}), w1 = param({0.5, 1.5}), w2 = param({0.5, 1.5});
  std::vector<int> order;
  int i = 0;
  for (Variable* w : {&w0, &w1, &w2})
    w->register_post_accumulate_grad_hook([&order, k = i++](Variable&) { order.push_back(k); });
  Variable x(from_vector<double>({0.3, 0.7}));
  Variable h = tanh(x * w0);
  Variable y1 = sum(h * w1), y2 = sum(h * w2);
  autograd::backward({y1, y2});
  REQUIRE(order == std::vector<int>{2, 1, 0});
  // d/dw0 = x (1 - h^2) (w1 + w2)
  const std::vector<double> g = v(w0.grad());
  for (int k = 0; k < 2; ++k) {
    const double xk = k ? 0.7 : 0.3, wk = k ? 1.5 : 0.5, hk = std::tanh(xk * wk);
    REQUIRE(g[k] == Approx(xk * (1 - hk * hk) * 2 * wk).epsilon(1e-12));
  }
}

TEST_CASE("a diamond: a node runs only after all its consumers delivered", "[autograd]") {
  // a = 2x feeds exp(a) and a * a: d/dx sum(exp(a) + a^2) = 2 exp(2x) + 8x. A node run
  // before both contributions arrived would pass on only part of its gradient.
  Variable x = param({0.3, 0.7});
  Variable a = x * 2.0;
  Variable y = sum(exp(a)) + sum(a * a);
  y.backward();
  const std::vector<double> g = v(x.grad());
  REQUIRE(g[0] == Approx(2 * std::exp(0.6) + 8 * 0.3).epsilon(1e-12));
  REQUIRE(g[1] == Approx(2 * std::exp(1.4) + 8 * 0.7).epsilon(1e-12));
}

TEST_CASE("leaves given one gradient tensor do not share its memory", "[autograd]") {
  // add's backward hands the same gradient tensor to both inputs. Each .grad must be its
  // own buffer: an in-place change to one, or the next accumulation, must leave the other.
  Variable a = param({1, 2, 3}), b = param({1, 2, 3});
  sum(a + b).backward();
  REQUIRE_FALSE(a.grad().shares_storage(b.grad()));
  a.grad().mul_(10.0);
  REQUIRE(v(b.grad()) == std::vector<double>{1, 1, 1});
  sum(a + b).backward();  // accumulates in place
  REQUIRE(v(a.grad()) == std::vector<double>{11, 11, 11});
  REQUIRE(v(b.grad()) == std::vector<double>{2, 2, 2});

  // Roots that are leaves, seeded with one tensor the caller keeps.
  Variable c = param({1, 2}), d = param({1, 2});
  Tensor seed = from_vector<double>({5, 6});
  autograd::backward({c, d}, {seed, seed});
  c.grad().add_(1.0);
  REQUIRE(v(d.grad()) == std::vector<double>{5, 6});
  REQUIRE(v(seed) == std::vector<double>{5, 6});
  autograd::backward({c, d}, {seed, seed});
  REQUIRE(v(c.grad()) == std::vector<double>{11, 13});
  REQUIRE(v(d.grad()) == std::vector<double>{10, 12});
}
