// ddl's version of pytorch/examples' cpp/autograd, the tour of the autograd API: basic
// operations and the graph they record, a vector-Jacobian product, grad mode,
// higher-order gradients (a gradient penalty through autograd::grad with create_graph)
// and custom functions (autograd::CustomFunction). Where the original only prints, this
// version also checks each result against its closed form and exits 1 on a mismatch,
// so its test has something to assert.
#include <cmath>
#include <cstdio>
#include <iostream>

#include <ddl/ddl.h>

using namespace ddl;

namespace {

int failures = 0;

void check(const char* what, const Tensor& got, const Tensor& want, double tol = 1e-5) {
  const bool ok = got.shape() == want.shape() && allclose(got, want, tol, tol);
  std::cout << "check " << what << ": " << (ok ? "ok" : "MISMATCH") << "\n";
  if (!ok) std::cout << "got\n" << got << "\nwant\n" << want << "\n", ++failures;
}

void basic_autograd_operations() {
  std::cout << "====== Basic autograd operations ======\n";
  Variable x(ones({2, 2}), /*requires_grad=*/true);
  std::cout << x << "\n";
  Variable y = x + 2.0;
  std::cout << y << "\n" << y.grad_fn()->name() << "\n";  // the node that made y

  Variable z = y * y * 3.0;
  Variable out = z.mean();
  std::cout << z << "\n" << z.grad_fn()->name() << "\n" << out << "\n" << out.grad_fn()->name() << "\n";

  // requires_grad_ switches a leaf's flag in place.
  Variable a((randn({2, 2}) * 3.0) / (randn({2, 2}) - 1.0));
  std::cout << std::boolalpha << a.requires_grad() << "\n";
  a.requires_grad_(true);
  std::cout << a.requires_grad() << "\n" << (a * a).sum().grad_fn()->name() << "\n";

  out.backward();  // out is one number: the same as out.backward(ones)
  std::cout << x.grad() << "\n";
  check("d mean(3 (x + 2)^2) / dx = 6 (x + 2) / 4 = 4.5", x.grad(), full({2, 2}, 4.5));

  // A vector-Jacobian product: y = x * 2^k, so backward(v) gives v * 2^k.
  x = Variable(randn({3}), true);
  y = x * 2.0;
  int k = 1;
  while (norm(y).item() < 1000) y = y * 2.0, ++k;
  std::cout << y << "\n" << y.grad_fn()->name() << "\n";
  const Tensor v = from_vector<float>({0.1f, 1.0f, 0.0001f}, {3});
  y.backward(v);
  std::cout << x.grad() << "\n";
  check("vector-Jacobian product v * 2^k", x.grad(), v * std::pow(2.0, k));

  // Grad mode: nothing is recorded inside a NoGradGuard; detach() cuts a value loose.
  std::cout << x.requires_grad() << "\n" << x.pow(2).requires_grad() << "\n";
  {
    NoGradGuard no_grad;
    std::cout << x.pow(2).requires_grad() << "\n";
  }
  y = x.detach();
  std::cout << x.requires_grad() << "\n" << y.requires_grad() << "\n" << equal(x.data(), y.data()) << "\n";
}

void higher_order_gradients() {
  std::cout << "====== Higher-order gradients ======\n";
  nn::Linear model(4, 3);
  Variable input(randn({3, 4}), true);
  Variable output = model.forward(input);
  const Tensor target = randn({3, 3});
  Variable loss = mse_loss(output, Variable(target));

  // A gradient penalty: the norm of d output / d input, kept differentiable (create_graph).
  Variable gradient = autograd::grad({output}, {input}, {Variable(ones_like(output.data()))}, std::nullopt,
                                     /*create_graph=*/true)[0];
  Variable penalty = pow(norm(gradient, 2.0, {1}) - 1.0, 2.0).mean();
  (loss + penalty).backward();
  std::cout << input.grad() << "\n";
  // The penalty depends on the weight only (gradient = ones @ W), so input's gradient
  // is the MSE's alone: 2 / numel * (output - target) @ W.
  const Tensor want = matmul((output.data() - target) * (2.0 / 9.0), model.weight.data());
  check("input.grad of MSE + gradient penalty", input.grad(), want);
  check("the penalty reached the weight", full({}, sum(abs(model.weight.grad())).item() > 0), full({}, 1.0));
}

// y = x W^T + b, forward and backward written by hand (the original's LinearFunction).
const autograd::CustomFunction kLinearFunction{
    "LinearFunction",
    [](autograd::FunctionCtx& ctx, const std::vector<Tensor>& in) -> std::vector<Tensor> {
      ctx.save_for_backward({in[0], in[1]});
      return {matmul(in[0], in[1].t()) + in[2]};
    },
    [](autograd::FunctionCtx& ctx, const std::vector<Tensor>& grads) -> std::vector<Tensor> {
      const Tensor &x = ctx.saved_tensors()[0], &w = ctx.saved_tensors()[1], &g = grads[0];
      return {matmul(g, w), matmul(g.t(), x), g.sum({0})};
    }};

// y = x * constant: the constant lives in the closure, not in the inputs.
autograd::CustomFunction mul_constant(double constant) {
  return {"MulConstant",
          [constant](autograd::FunctionCtx&, const std::vector<Tensor>& in) -> std::vector<Tensor> {
            return {in[0] * constant};
          },
          [constant](autograd::FunctionCtx&, const std::vector<Tensor>& grads) -> std::vector<Tensor> {
            return {grads[0] * constant};
          }};
}

void custom_autograd_function() {
  std::cout << "====== Custom autograd functions ======\n";
  Variable x(randn({2, 3}), true), weight(randn({4, 3}), true), bias(randn({4}), true);
  kLinearFunction.apply({x, weight, bias})[0].sum().backward();
  std::cout << x.grad() << "\n" << weight.grad() << "\n";
  // The same op from built-in pieces must give the same gradients.
  Variable x2(x.data(), true), w2(weight.data(), true), b2(bias.data(), true);
  (matmul(x2, w2.t()) + b2).sum().backward();
  check("LinearFunction's d/dx equals the built-in ops'", x.grad(), x2.grad());
  check("LinearFunction's d/dweight equals the built-in ops'", weight.grad(), w2.grad());
  check("LinearFunction's d/dbias equals the built-in ops'", bias.grad(), b2.grad());

  Variable y(randn({2}), true);
  mul_constant(5.5).apply({y})[0].sum().backward();
  std::cout << y.grad() << "\n";
  check("MulConstant(5.5)'s gradient is 5.5", y.grad(), full({2}, 5.5));
}

}  // namespace

int main() try {
  manual_seed(0);
  basic_autograd_operations();
  std::cout << "\n";
  higher_order_gradients();
  std::cout << "\n";
  custom_autograd_function();
  std::cout << (failures == 0 ? "all checks ok" : "checks FAILED") << "\n";
  return failures == 0 ? 0 : 1;
} catch (const std::exception& e) {
  std::cerr << "autograd: error: " << e.what() << "\n";
  return 1;
}
