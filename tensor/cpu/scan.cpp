// CPU scans (cumsum, cumprod and cumsum's reversed backward): each (outer, inner)
// pair of [outer, n, inner] is one strided line, scanned in order by one thread,
// floats accumulating in double and integers in int64 (as PyTorch's CPU kernels).
#include <type_traits>

#include <ddl/tensor/core/parallel.h>
#include <ddl/tensor/ops/scan.h>

namespace ddl::cpu {
namespace {

using kernels::ScanOp;

void scan_cpu(const Tensor& in, int64_t outer, int64_t n, int64_t inner, ScanOp op, bool reverse, Tensor& out) {
  DDL_DISPATCH_NUMERIC(out.dtype(), op == ScanOp::Sum ? "cumsum" : "cumprod", [&] {
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
}

}  // namespace

DDL_REGISTER_KERNEL(kernels::scan_kernel, CPU, &scan_cpu);

}  // namespace ddl::cpu
