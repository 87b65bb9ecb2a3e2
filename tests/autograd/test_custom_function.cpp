// CustomFunction and make_result as a user's API: a multi-input op and a two-output op
// grad-checked by finite differences, saved tensors, needs_input_grad, non-differentiable
// outputs, errors that name the user's op, and a user op with its own double backward.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "tests/common/gradcheck.h"
#include <ddl/autograd/custom_function.h>
#include <ddl/autograd/functions.h>
#include <ddl/autograd/grad.h>
#include <ddl/tensor/ops.h>

using namespace ddl;
using autograd::CustomFunction;
using autograd::FunctionCtx;
using test::random_double;

namespace {

// f(x, w) = x * exp(w) + x^2 with w broadcast along rows: x [N, C], w [C].
CustomFunction scaled_square() {
  CustomFunction f;
  f.name = "scaled_square";
  f.forward = [](FunctionCtx& ctx, const std::vector<Tensor>& in) -> std::vector<Tensor> {
    const Tensor e = exp(in[1]);
    ctx.save_for_backward({in[0], e});
    return {add(mul(in[0], e), mul(in[0], in[0]))};
  };
  f.backward = [](FunctionCtx& ctx, const std::vector<Tensor>& g) -> std::vector<Tensor> {
    const Tensor &x = ctx.saved_tensors()[0], &e = ctx.saved_tensors()[1];
    std::vector<Tensor> out(2);
    if (ctx.needs_input_grad(0)) out[0] = mul(g[0], add(e, mul(x, 2.0)));
    if (ctx.needs_input_grad(1)) out[1] = sum(mul(mul(g[0], x), e), {0});
    return out;
  };
  return f;
}

// Two outputs (a * b, a + b): each gets its own node over the same inputs.
CustomFunction product_and_sum() {
  CustomFunction f;
  f.name = "product_and_sum";
  f.forward = [](FunctionCtx& ctx, const std::vector<Tensor>& in) -> std::vector<Tensor> {
    ctx.save_for_backward({in[0], in[1]});
    return {mul(in[0], in[1]), add(in[0], in[1])};
  };
  f.backward = [](FunctionCtx& ctx, const std::vector<Tensor>& g) -> std::vector<Tensor> {
    const Tensor &a = ctx.saved_tensors()[0], &b = ctx.saved_tensors()[1];
    return {add(mul(g[0], b), g[1]), add(mul(g[0], a), g[1])};
  };
  return f;
}

}  // namespace

TEST_CASE("custom function: a multi-input op passes gradcheck", "[custom_function]") {
  const CustomFunction f = scaled_square();
  auto op = [&f](const std::vector<Variable>& v) { return f.apply(v)[0]; };
  REQUIRE_GRADCHECK(op, {random_double({3, 4}, 1), random_double({4}, 2)});
  // Values: the forward is what the user wrote.
  Variable x(from_vector<double>({1, 2}, {1, 2}), true);
  Variable w(from_vector<double>({0, 0}), true);
  const Variable y = f.apply({x, w})[0];
  REQUIRE(y.grad_fn()->name() == "scaled_square");
  REQUIRE(to_vector<double>(y.data()) == std::vector<double>{2, 6});
}

TEST_CASE("custom function: several outputs, needs_input_grad, non-differentiable outputs", "[custom_function]") {
  const CustomFunction f = product_and_sum();
  auto combined = [&f](const std::vector<Variable>& v) {
    const auto out = f.apply(v);
    return add(mul(out[0], out[1]), mul(out[1], 3.0));
  };
  REQUIRE_GRADCHECK(combined, {random_double({2, 3}, 3), random_double({2, 3}, 4)});

  // Only the input that requires grad is asked for.
  std::vector<bool> seen;
  CustomFunction g = scaled_square();
  const auto inner = g.backward;
  g.backward = [&seen, inner](FunctionCtx& ctx, const std::vector<Tensor>& go) {
    seen = {ctx.needs_input_grad(0), ctx.needs_input_grad(1)};
    return inner(ctx, go);
  };
  Variable x(random_double({2, 3}, 5), true);
  Variable w(random_double({3}, 6));
  sum(g.apply({x, w})[0]).backward();
  REQUIRE(seen == std::vector<bool>{true, false});
  REQUIRE(x.grad().defined());

  // An index output is a constant; the value output is differentiable.
  CustomFunction argmax_and_max;
  argmax_and_max.name = "argmax_and_max";
  argmax_and_max.forward = [](FunctionCtx& ctx, const std::vector<Tensor>& in) -> std::vector<Tensor> {
    ctx.mark_non_differentiable({0});
    const Tensor m = amax(in[0], {1}, true);
    ctx.save_for_backward({eq(in[0], m).to(in[0].dtype())});
    return {eq(in[0], m).to(DType::Float64), m};
  };
  argmax_and_max.backward = [](FunctionCtx& ctx, const std::vector<Tensor>& go) -> std::vector<Tensor> {
    return {mul(go[1], ctx.saved_tensors()[0])};
  };
  Variable s(from_vector<double>({1, 5, 2, 7, 3, 0}, {2, 3}), true);
  const auto out = argmax_and_max.apply({s});
  REQUIRE_FALSE(out[0].requires_grad());
  REQUIRE(out[1].requires_grad());
  sum(out[1]).backward();
  REQUIRE(to_vector<double>(s.grad()) == std::vector<double>{0, 1, 0, 1, 0, 0});
}

TEST_CASE("custom function: a wrong gradient blames the user's op by name", "[custom_function]") {
  CustomFunction bad;
  bad.name = "my_op";
  bad.forward = [](FunctionCtx&, const std::vector<Tensor>& in) -> std::vector<Tensor> { return {mul(in[0], 2.0)}; };
  bad.backward = [](FunctionCtx&, const std::vector<Tensor>& g) -> std::vector<Tensor> { return {sum(g[0], {0})}; };
  Variable x(random_double({2, 3}, 7), true);
  REQUIRE_THROWS_WITH(sum(bad.apply({x})[0]).backward(),
                      Catch::Contains("backward of custom op 'my_op' returned a gradient of shape [3] for input 0 "
                                      "of shape [2, 3]"));
  bad.backward = [](FunctionCtx&, const std::vector<Tensor>& g) -> std::vector<Tensor> { return {g[0], g[0]}; };
  REQUIRE_THROWS_WITH(sum(bad.apply({x})[0]).backward(),
                      Catch::Contains("backward of custom op 'my_op' returned 2 gradients for 1 inputs"));
  // Not a "bug in ddl".
  try {
    bad.backward = [](FunctionCtx&, const std::vector<Tensor>&) -> std::vector<Tensor> {
      return {zeros({5}, DType::Float64)};
    };
    sum(bad.apply({x})[0]).backward();
    FAIL("no error");
  } catch (const Error& e) {
    REQUIRE(std::string(e.what()).find("bug in ddl") == std::string::npos);
  }
}

TEST_CASE("custom function: no double backward, and make_result with a DiffBackwardFn has one", "[custom_function]") {
  const CustomFunction f = scaled_square();
  Variable x(random_double({2, 2}, 8), true);
  Variable w(random_double({2}, 9), true);
  const Variable g = autograd::grad({sum(f.apply({x, w})[0])}, {x}, {}, std::nullopt, true)[0];
  REQUIRE_THROWS_WITH(sum(g).backward(), Catch::Contains("double backward through scaled_square is not supported"));

  // softplus(x) = log(1 + e^x) recorded by hand with both backward forms.
  auto softplus = [](const Variable& v) {
    const Tensor vd = v.data();
    return autograd::make_result(
        log(add(exp(vd), 1.0)), "MySoftplusBackward", {&v},
        [vd](const Tensor& g, const std::vector<bool>&) -> std::vector<Tensor> { return {mul(g, sigmoid(vd))}; },
        [v](const Variable& g, const std::vector<bool>&) -> std::vector<Variable> { return {mul(g, sigmoid(v))}; });
  };
  auto first = [&](const std::vector<Variable>& v) {
    GradModeGuard on(true);
    Variable in = v[0].requires_grad() ? v[0] : Variable(v[0].data(), true);
    return autograd::grad({sum(mul(softplus(in), in))}, {in}, {}, std::nullopt, v[0].requires_grad())[0];
  };
  REQUIRE_GRADCHECK(first, {random_double({5}, 10)});
}
