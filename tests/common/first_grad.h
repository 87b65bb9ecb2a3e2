// first_grad(f, k): the gradient of <f(xs), c> w.r.t. input k as a function of all the
// inputs, for grad-checking second derivatives (double backward) with gradcheck(): with
// create_graph when the input requires grad (gradcheck's analytic pass, which then
// differentiates it), a plain first-order autograd::grad otherwise (its finite differences).
#pragma once

#include <vector>

#include "tests/common/gradcheck.h"
#include <ddl/autograd/functions.h>
#include <ddl/autograd/grad.h>

namespace ddl::test {

inline VariableFn first_grad(const VariableFn& f, size_t k) {
  return [f, k](const std::vector<Variable>& xs) {
    GradModeGuard grad_on(true);
    std::vector<Variable> in = xs;
    const bool create = xs[k].requires_grad();
    if (!create) in[k] = Variable(xs[k].data(), true);
    const Variable y = f(in);
    Generator gen(77);
    const Tensor c = rand(y.shape(), gen, DType::Float64) - 0.5;
    const Variable l = sum(mul(y, Variable(c)));
    return autograd::grad({l}, {in[k]}, {}, std::nullopt, /*create_graph=*/create)[0];
  };
}

}  // namespace ddl::test
