// Scan frontends: the scanned dim is viewed as the middle of [outer, n, inner]
// (after a contiguous copy in the output dtype), and the device kernel scans
// each (outer, inner) line (tensor/cpu/scan.cpp, tensor/cuda/scan.cu).
#include <algorithm>

#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/ops/scan.h>

namespace ddl::kernels {
DDL_DEFINE_KERNEL(scan_kernel, ScanFn);
}  // namespace ddl::kernels

namespace ddl {
namespace {

using kernels::ScanOp;

Tensor scan(const Tensor& x, int64_t dim, ScanOp op, bool reverse, const char* name) {
  DDL_CHECK(x.defined(), name, ": undefined tensor");
  const int64_t d = wrap_dim(dim, x.dim(), name);  // 0 for a 0-d tensor, whose one element is its scan
  // The kernels scan float32/float64/int64; 16-bit floats go through float32 (torch.cumsum takes bfloat16).
  if (is_reduced_float(x.dtype())) return scan(x.to(DType::Float32), dim, op, reverse, name).to(x.dtype());
  const DType out_type = is_floating(x.dtype()) ? x.dtype() : DType::Int64;
  const Tensor in = x.to(out_type).contiguous();
  Tensor out = empty(x.shape(), TensorOptions(out_type, x.device()));
  if (x.numel() == 0) return out;
  int64_t outer = 1, inner = 1;
  const int64_t n = x.dim() == 0 ? 1 : x.size(d);
  for (int64_t i = 0; i < d; ++i) outer *= x.size(i);
  for (int64_t i = d + 1; i < x.dim(); ++i) inner *= x.size(i);
  kernels::scan_kernel(x.device())(in, outer, n, inner, op, reverse, out);
  return out;
}

}  // namespace

Tensor cumsum(const Tensor& x, int64_t dim) { return scan(x, dim, ScanOp::Sum, false, "cumsum"); }
Tensor cumprod(const Tensor& x, int64_t dim) { return scan(x, dim, ScanOp::Prod, false, "cumprod"); }
Tensor cumsum_backward(const Tensor& grad, int64_t dim) {
  return scan(grad, dim, ScanOp::Sum, true, "cumsum_backward");
}

}  // namespace ddl
