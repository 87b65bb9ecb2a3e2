// Internal to tensor/cuda/: element offsets of N strided operands sharing one
// shape, passed to kernels by value. Dims are coalesced as in the CPU loops
// (tensor/cpu/loops.h), so contiguous operands cost one multiply per element.
// Up to kMaxDims dims remain after coalescing (the CPU takes any number; 25 is
// PyTorch's MAX_DIMS, more than a real view keeps); int64 indexes throughout.
#pragma once

#include <array>
#include <cstdint>

#include <ddl/tensor/core/tensor.h>
#include <ddl/tensor/cuda/common.h>

namespace ddl::cuda::detail {

inline constexpr int kMaxDims = 25;

template <int N>
struct OffsetCalc {
  int ndim;                      // >= 1
  int64_t sizes[kMaxDims];       // innermost first
  int64_t strides[kMaxDims][N];  // in elements of each operand
  // Offsets (in elements) of linear element i, row-major over the shape, for each operand.
  __device__ __forceinline__ void get(int64_t i, int64_t (&off)[N]) const {
    if (ndim == 1) {
#pragma unroll
      for (int k = 0; k < N; ++k) off[k] = i * strides[0][k];
      return;
    }
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] = 0;
    for (int d = 0; d < ndim; ++d) {
      const int64_t idx = i % sizes[d];
      i /= sizes[d];
#pragma unroll
      for (int k = 0; k < N; ++k) off[k] += idx * strides[d][k];
    }
  }
};

// ts: operands of one shape (expanded views allowed: stride 0). `op` names the caller in errors.
template <int N>
OffsetCalc<N> make_offset_calc(const std::array<const Tensor*, N>& ts, const char* op) {
  // Passed by value: kernel parameters must fit in 4 KiB (CUDA C++ Programming
  // Guide, "Function Parameters"), with room left for the functor and sizes.
  static_assert(sizeof(OffsetCalc<N>) <= 2048, "OffsetCalc too large for a kernel parameter");
  OffsetCalc<N> c{};
  c.ndim = 0;
  const Shape& shape = ts[0]->shape();
  for (int64_t d = shape.size() - 1; d >= 0; --d) {
    if (shape[d] == 1) continue;
    if (c.ndim > 0) {
      // Merge with the previous (inner) dim when it continues it for every operand.
      bool merge = true;
      for (int k = 0; k < N; ++k)
        merge = merge && ts[k]->strides()[d] == c.strides[c.ndim - 1][k] * c.sizes[c.ndim - 1];
      if (merge) {
        c.sizes[c.ndim - 1] *= shape[d];
        continue;
      }
    }
    DDL_CHECK(c.ndim < kMaxDims, op, ": CUDA kernels take at most ", kMaxDims,
              " non-mergeable dims, got a strided view of shape ", shape, "; call .contiguous() first");
    c.sizes[c.ndim] = shape[d];
    for (int k = 0; k < N; ++k) c.strides[c.ndim][k] = ts[k]->strides()[d];
    ++c.ndim;
  }
  if (c.ndim == 0) {  // a single element
    c.ndim = 1;
    c.sizes[0] = 1;
    for (int k = 0; k < N; ++k) c.strides[0][k] = 0;
  }
  return c;
}

// Calls f(offsets) for every element i < n, grid-stride.
template <int N, typename F>
__global__ void strided_apply_kernel(int64_t n, OffsetCalc<N> calc, F f) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(blockDim.x) * gridDim.x) {
    int64_t off[N];
    calc.get(i, off);
    f(off);
  }
}

// Launches f over the n elements of operands ts on the current stream of `device`.
template <int N, typename F>
void strided_apply(int device, const std::array<const Tensor*, N>& ts, const F& f, const char* op) {
  const int64_t n = ts[0]->numel();
  if (n == 0) return;
  const OffsetCalc<N> calc = make_offset_calc<N>(ts, op);
  DeviceGuard g(device);
  cudaStream_t s = current_stream(device);
  strided_apply_kernel<N, F><<<blocks_for(n), kBlockThreads, 0, s>>>(n, calc, f);
  DDL_CUDA_KERNEL_CHECK();
}

}  // namespace ddl::cuda::detail
