// Argument helpers the 2-D spatial frontends share (pooling, adaptive pooling, upsampling,
// convolution): unbatched [C, H, W] input runs as [1, C, H, W] and its result drops that dim.
#pragma once

#include <ddl/tensor/core/tensor.h>

namespace ddl::spatial {

inline void check_float(const Tensor& t, const char* op) {
  DDL_CHECK(t.dtype() == DType::Float32 || t.dtype() == DType::Float64, op, ": expected float32 or float64, got ",
            describe(t));
}

// float16/bfloat16 compute in float32 and round once (See Note [Half compute]).
inline bool widens(const Tensor& t) { return t.defined() && is_reduced_float(t.dtype()); }

inline Tensor as_4d(const Tensor& t) { return t.dim() == 4 ? t.contiguous() : t.contiguous().unsqueeze(0); }
inline Tensor like_input(const Tensor& t, size_t input_dim) { return input_dim == 4 ? t : t.squeeze(0); }

}  // namespace ddl::spatial
