// The dtypes all_reduce accepts: every numeric dtype, and float16 and bfloat16, whose
// sums the fp16/bf16 communication hooks (dist/hooks/) need. A 16-bit pairwise result is
// computed in float and rounded once, as Gloo's own float16 and NCCL's half sums do.
// Internal to the backends (not installed).
#pragma once

#include <ddl/tensor/core/dtype.h>
#include <ddl/tensor/core/half.h>

namespace ddl::dist::detail {

// f(T{}) with T the C++ type of `dtype`; a ddl::Error naming `op` for any other dtype.
template <typename F>
void dispatch_reducible(DType dtype, const char* op, F&& f) {
  if (dtype == DType::Float16) return f(Half{});
  if (dtype == DType::BFloat16) return f(BFloat16{});
  DDL_DISPATCH_NUMERIC(dtype, op, [&] { f(scalar_t{}); });
}

}  // namespace ddl::dist::detail
