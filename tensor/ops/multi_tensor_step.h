// Multi-tensor optimizer steps on the CPU (PyTorch's foreach / _multi_tensor_sgd and
// _multi_tensor_adam): one pass over flat lists of float32 parameters, threaded over
// the total element count, so many small tensors cost one parallel region, not one
// each. Each element takes exactly the float32 operations of the per-tensor steps
// (tensor/ops/sgd_update.h's composite, optim/adam.cpp), so the results are bit-identical.
// The optimizers (optim/multi_tensor.cpp) decide which parameters qualify.
#pragma once

#include <cstdint>
#include <vector>

namespace ddl::detail {

// One parameter of an SGD step; constants already rounded to float as the elementwise ops
// round their scalars. buf is null when momentum is 0.
struct SgdSlice {
  float* w;
  const float* g;
  float* buf;
  int64_t n;
  bool first;  // the buffer is new: it takes d (PyTorch's clone on the first step)
  float weight_decay, momentum, one_minus_dampening, neg_lr;
  bool has_weight_decay, nesterov;
};
// w -= lr * d with d, buf as sgd_update_ (tensor/ops/sgd_update.h), for every slice.
void sgd_step_multi(const std::vector<SgdSlice>& slices);

// One parameter of an Adam/AdamW step, with its own step count in bias_scale and step_size.
// vmax is null without amsgrad.
struct AdamSlice {
  float* w;
  const float* g;
  float *m, *v, *vmax;
  int64_t n;
  float beta1, one_minus_beta1, beta2, one_minus_beta2, eps;
  float weight_decay;  // Adam: g += weight_decay * w (0: none)
  float decay_scale;   // AdamW: w *= decay_scale (1 - lr * weight_decay) first
  bool decoupled, has_weight_decay;
  float inv_sqrt_bc2;  // 1 / sqrt(1 - beta2^t): div by a scalar multiplies by its inverse
  float neg_step;      // -lr / (1 - beta1^t)
};
void adam_step_multi(const std::vector<AdamSlice>& slices);

}  // namespace ddl::detail
