// sgd_update_: one SGD step on one parameter, torch.optim.SGD's rule. On CUDA,
// contiguous operands of one float dtype take a single fused kernel; everything
// else (and the CPU) runs the composite of elementwise ops optim::SGD used to
// run, so CPU results are those ops' bits. No autograd here: w changes in place.
#pragma once

#include <ddl/tensor/core/dispatch.h>
#include <ddl/tensor/core/tensor.h>

namespace ddl {

// Hyper-parameters of one step; the same meaning as torch.optim.SGD's.
struct SgdUpdate {
  double lr = 0.01, momentum = 0, dampening = 0, weight_decay = 0;
  bool nesterov = false;
};

// d = grad + weight_decay * w;
// momentum 0: w -= lr * d, and momentum_buffer must be undefined;
// else buf = d (first step: momentum_buffer undefined, set to a new tensor) or
//      buf = momentum * buf + (1 - dampening) * d (in place), then
//      w -= lr * (nesterov ? d + momentum * buf : buf).
// Requires: w and grad of one shape and device; a defined buffer has w's shape and device.
void sgd_update_(const Tensor& w, const Tensor& grad, Tensor& momentum_buffer, const SgdUpdate& o);

namespace detail {
// The step as elementwise ops (add, clone, mul_, add_) on any device, dtypes and strides.
void sgd_update_composite(const Tensor& w, const Tensor& grad, Tensor& momentum_buffer, const SgdUpdate& o);
}  // namespace detail

}  // namespace ddl

namespace ddl::kernels {

// The frontend's contract, after its checks. The CUDA kernel is called only with w, grad
// and a defined buffer contiguous and of one float dtype; it allocates a first-step buffer.
using SgdUpdateFn = void(const Tensor& w, const Tensor& grad, Tensor& momentum_buffer, const SgdUpdate& o);
DDL_DECLARE_KERNEL(sgd_update_kernel, SgdUpdateFn);

}  // namespace ddl::kernels
