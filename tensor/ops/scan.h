// Inclusive scans along one dim: cumsum and cumprod. Float inputs keep their
// dtype and accumulate in double (as PyTorch's CPU kernels); integral and bool
// inputs give int64, as torch.cumsum; 16-bit floats scan through float32. Runs on the CPU (tensor/cpu/scan.cpp) and
// CUDA (tensor/cuda/scan.cu) with bit-identical results (a NaN's payload aside).
#pragma once

#include <cstdint>

#include <ddl/tensor/core/dispatch.h>
#include <ddl/tensor/core/tensor.h>

namespace ddl {

// y[..., i, ...] = x[..., 0, ...] + ... + x[..., i, ...] along `dim`.
Tensor cumsum(const Tensor& x, int64_t dim);
// y[..., i, ...] = x[..., 0, ...] * ... * x[..., i, ...] along `dim`.
Tensor cumprod(const Tensor& x, int64_t dim);
// Gradient of cumsum: the reversed cumsum, g[i] + g[i + 1] + ... + g[n - 1].
Tensor cumsum_backward(const Tensor& grad, int64_t dim);

}  // namespace ddl

namespace ddl::kernels {

enum class ScanOp { Sum, Prod };

// in, out: [outer, n, inner] contiguous, one dtype (float32, float64 or int64).
// Scans each of the outer * inner lines along n (from its end when `reverse`),
// accumulating floats in double and integers in int64.
using ScanFn = void(const Tensor& in, int64_t outer, int64_t n, int64_t inner, ScanOp op, bool reverse, Tensor& out);

DDL_DECLARE_KERNEL(scan_kernel, ScanFn);

}  // namespace ddl::kernels
