// copy_into: the one data-moving primitive behind contiguous(), clone(), to()
// and copy_(): converts dtype and crosses devices as needed.
#pragma once

#include <ddl/tensor/core/dispatch.h>
#include <ddl/tensor/core/tensor.h>

namespace ddl {

// dst and src have the same shape (src may be an expanded view); any strides and dtypes.
void copy_into(const Tensor& dst, const Tensor& src);

namespace kernels {
// Same-device strided copy with dtype conversion.
using CopyFn = void(const Tensor& dst, const Tensor& src);
DDL_DECLARE_KERNEL(copy_kernel, CopyFn);
using FillFn = void(const Tensor& dst, double value);
DDL_DECLARE_KERNEL(fill_kernel, FillFn);
}  // namespace kernels

}  // namespace ddl
