// Instance normalisation and local response normalisation on Variables, as
// torch.nn.functional.instance_norm and local_response_norm. Both are compositions
// of differentiable ops (batch_norm, pad-by-cat, narrow, pow), so their gradients
// and double backward come with them (autograd/ops/norm_more.cpp).
#pragma once

#include <ddl/autograd/variable.h>

namespace ddl {

// x: [N, C, *] with at least one spatial dim; weight, bias: [C] or undefined;
// running_mean, running_var: [C] or undefined, updated in place (the mean over the
// batch of each sample's update) when use_input_stats. Each (sample, channel) is
// normalised over its spatial elements with its own statistics when use_input_stats,
// with the running statistics otherwise. Refuses a single spatial element when
// use_input_stats, as PyTorch ("Expected more than 1 spatial element").
Variable instance_norm(const Variable& x, Tensor running_mean = Tensor(), Tensor running_var = Tensor(),
                       const Variable& weight = Variable(), const Variable& bias = Variable(),
                       bool use_input_stats = true, double momentum = 0.1, double eps = 1e-5);

// x: [N, C, *] floating, at least 3-D. y = x / (k + alpha / size * sum of x^2 over the
// `size` channels around each channel, zeros beyond the edges)^beta. size > 0.
Variable local_response_norm(const Variable& x, int64_t size, double alpha = 1e-4, double beta = 0.75, double k = 1.0);

}  // namespace ddl
