// Differentiable activations beyond elementwise.h's relu/sigmoid/tanh, as
// torch.nn.functional: gelu (exact or tanh approximation), silu, leaky_relu.
#pragma once

#include <string>

#include <ddl/autograd/variable.h>

namespace ddl {

// approximate: "none" (x * Phi(x), with the erf) or "tanh" (Hendrycks & Gimpel 2016, eq. 2).
Variable gelu(const Variable& x, const std::string& approximate = "none");
// x * sigmoid(x) (Elfwing et al. 2017; a.k.a. swish).
Variable silu(const Variable& x);
// x where x > 0, negative_slope * x elsewhere.
Variable leaky_relu(const Variable& x, double negative_slope = 0.01);

}  // namespace ddl
