// The source indices and weights of upsample2d, written once for the CPU kernels
// (tensor/cpu/upsample.cpp) and the CUDA ones (tensor/cuda/upsample.cu) so that
// both compute them with the same operations. Formulas as PyTorch 1.13's
// aten/src/ATen/native/UpSample.h (nearest_idx, compute_source_index_and_lambda).
// Internal to the kernels: not installed, no tensor types.
#pragma once

#include <cmath>
#include <cstdint>

#include <ddl/tensor/kernels/host_device.h>

namespace ddl::upsample_coords {

// Note [Explicit fma in upsample2d]
// g++ -O3 -march=native contracts a * b + c into one fused multiply-add where it
// sees fit (GCC's default -ffp-contract=fast), and nvcc does the same by its own
// rules (--fmad=true), so one source line can round differently on the two
// backends. Every multiply-add of the bilinear weights, the forward's blend and
// the backward's accumulation is therefore an explicit fma (one rounding, on any
// machine), and no bare a * b + c is left for either compiler to contract: the
// CPU and CUDA kernels give bit-identical results. The remaining products go
// through product(), which on the device is an explicit round-to-nearest
// multiply (PTX mul.rn) that ptxas never fuses with a later add; on the host each
// feeds an fma or also a conversion, and GCC contracts only a product whose every
// use is an add.
DDL_HOST_DEVICE float fused_mul_add(float a, float b, float c) { return fmaf(a, b, c); }
DDL_HOST_DEVICE double fused_mul_add(double a, double b, double c) { return fma(a, b, c); }
DDL_HOST_DEVICE float product(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
DDL_HOST_DEVICE double product(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}

// PyTorch's compute_scales_value: 1/scale when a scale was given, else in/out.
template <typename T>
DDL_HOST_DEVICE T scale_value(double scale, int64_t in, int64_t out) {
  return scale > 0 ? static_cast<T>(1.0 / scale) : static_cast<T>(in) / static_cast<T>(out);
}

// The bilinear ratio along a dim: (in - 1) / (out - 1) with align_corners, else scale_value.
template <typename T>
DDL_HOST_DEVICE T bilinear_ratio(int64_t in, int64_t out, double scale, bool align_corners) {
  if (align_corners) return out > 1 ? static_cast<T>(in - 1) / static_cast<T>(out - 1) : T(0);
  return scale_value<T>(scale, in, out);
}

// Nearest source index of output index i; s = scale_value<float>(...) (PyTorch's
// nearest_idx computes in float). Non-decreasing in i.
DDL_HOST_DEVICE int64_t nearest_src(int64_t i, int64_t in, int64_t out, float s) {
  if (out == in) return i;
  if (out == 2 * in) return i >> 1;
  const int64_t j = static_cast<int64_t>(floorf(product(static_cast<float>(i), s)));
  return j < in - 1 ? j : in - 1;
}

// One output index's two source indices and their weights along a dim.
template <typename T>
struct Lerp {
  int64_t i0, i1;
  T l0, l1;
};

// PyTorch's compute_source_index_and_lambda for output index i; i0 and i1 are
// non-decreasing in i (the CUDA backward relies on it to find who reads a row).
template <typename T>
DDL_HOST_DEVICE Lerp<T> lerp_at(int64_t i, int64_t in, int64_t out, T ratio, bool align_corners) {
  if (in == out) return {i, i, T(1), T(0)};
  T src = align_corners ? product(ratio, static_cast<T>(i)) : fused_mul_add(ratio, static_cast<T>(i) + T(0.5), T(-0.5));
  if (!align_corners && src < T(0)) src = T(0);
  const int64_t i0 = static_cast<int64_t>(src);
  const int64_t i1 = i0 + (i0 < in - 1 ? 1 : 0);
  T l1 = src - static_cast<T>(i0);
  l1 = l1 < T(0) ? T(0) : (l1 > T(1) ? T(1) : l1);
  return {i0, i1, T(1) - l1, l1};
}

// The bilinear blend of one output: rows r, columns c, x_ab = x[r.i_a, c.i_b].
template <typename T>
DDL_HOST_DEVICE T blend(const Lerp<T>& r, const Lerp<T>& c, T x00, T x01, T x10, T x11) {
  const T top = fused_mul_add(c.l0, x00, product(c.l1, x01));
  const T bottom = fused_mul_add(c.l0, x10, product(c.l1, x11));
  return fused_mul_add(r.l0, top, product(r.l1, bottom));
}

}  // namespace ddl::upsample_coords
