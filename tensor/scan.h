// Inclusive scans along one dim: cumsum and cumprod. Float inputs keep their
// dtype and accumulate in double (as PyTorch's CPU kernels); integral and bool
// inputs give int64, as torch.cumsum. CPU only: CUDA tensors are refused.
#pragma once

#include <cstdint>

#include "tensor/tensor.h"

namespace ddl {

// y[..., i, ...] = x[..., 0, ...] + ... + x[..., i, ...] along `dim`.
Tensor cumsum(const Tensor& x, int64_t dim);
// y[..., i, ...] = x[..., 0, ...] * ... * x[..., i, ...] along `dim`.
Tensor cumprod(const Tensor& x, int64_t dim);
// Gradient of cumsum: the reversed cumsum, g[i] + g[i + 1] + ... + g[n - 1].
Tensor cumsum_backward(const Tensor& grad, int64_t dim);

}  // namespace ddl
