// Scans on the CPU: the scanned dim is viewed as the middle of [outer, n, inner]
// (after a contiguous copy), so each (outer, inner) pair is one strided line.
#include "tensor/scan.h"

#include "tensor/dispatch.h"
#include "tensor/factory.h"
#include "tensor/parallel.h"

namespace ddl {
namespace {

enum class ScanOp { Sum, Prod };

Tensor scan(const Tensor& x, int64_t dim, ScanOp op, bool reverse, const char* name) {
  DDL_CHECK(x.defined(), name, ": undefined tensor");
  DDL_CHECK(x.device().is_cpu(), name, ": not implemented for CUDA tensors yet (got ", describe(x),
            "); move it to the CPU with .to(Device::cpu())");
  const int64_t d = wrap_dim(dim, std::max<int64_t>(x.dim(), 1), name);
  const DType out_type = is_floating(x.dtype()) ? x.dtype() : DType::Int64;
  const Tensor in = x.to(out_type).contiguous();
  Tensor out = empty(x.shape(), out_type);
  if (x.numel() == 0) return out;
  int64_t outer = 1, inner = 1;
  const int64_t n = x.dim() == 0 ? 1 : x.size(d);
  for (int64_t i = 0; i < d; ++i) outer *= x.size(i);
  for (int64_t i = d + 1; i < x.dim(); ++i) inner *= x.size(i);
  DDL_DISPATCH_NUMERIC(out_type, name, [&] {
    // Accumulate floats in double, integers in int64.
    using acc_t = std::conditional_t<std::is_floating_point_v<scalar_t>, double, int64_t>;
    const scalar_t* ip = in.data<scalar_t>();
    scalar_t* op_ = out.data<scalar_t>();
    parallel_for(0, outer * inner, 64, [&](int64_t b, int64_t e) {
      for (int64_t line = b; line < e; ++line) {
        const int64_t base = (line / inner) * n * inner + line % inner;
        acc_t acc = op == ScanOp::Sum ? acc_t(0) : acc_t(1);
        for (int64_t s = 0; s < n; ++s) {
          const int64_t at = base + (reverse ? n - 1 - s : s) * inner;
          acc = op == ScanOp::Sum ? acc + static_cast<acc_t>(ip[at]) : acc * static_cast<acc_t>(ip[at]);
          op_[at] = static_cast<scalar_t>(acc);
        }
      }
    });
  });
  return out;
}

}  // namespace

Tensor cumsum(const Tensor& x, int64_t dim) { return scan(x, dim, ScanOp::Sum, false, "cumsum"); }
Tensor cumprod(const Tensor& x, int64_t dim) { return scan(x, dim, ScanOp::Prod, false, "cumprod"); }
Tensor cumsum_backward(const Tensor& grad, int64_t dim) { return scan(grad, dim, ScanOp::Sum, true, "cumsum"); }

}  // namespace ddl
