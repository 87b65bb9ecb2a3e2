// Frontend of copies and fills.
#include <ddl/tensor/core/copy.h>
#include <ddl/tensor/core/devices.h>
#include <ddl/tensor/core/factory_value.h>

namespace ddl {
namespace kernels {
DDL_DEFINE_KERNEL(copy_kernel, CopyFn);
DDL_DEFINE_KERNEL(fill_kernel, FillFn);
}  // namespace kernels

void copy_into(const Tensor& dst, const Tensor& src) {
  DDL_CHECK(dst.shape() == src.shape(), "copy: destination ", dst.shape(), " and source ", src.shape(), " differ");
  if (dst.numel() == 0) return;
  if (dst.device() == src.device()) {
    kernels::copy_kernel(dst.device())(dst, src);
    return;
  }
  copy_between_devices(dst, src);
}

const Tensor& Tensor::fill_(double value) const {
  DDL_CHECK(defined(), "fill_: tensor is undefined");
  detail::check_value_fits(value, dtype(), "fill_");  // as PyTorch's; and no undefined conversion below
  bump_version();                                     // every in-place write counts: see Storage::version
  if (numel() > 0) kernels::fill_kernel(device())(*this, value);
  return *this;
}

}  // namespace ddl
