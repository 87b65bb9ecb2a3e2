// CUDA scans: cumsum, cumprod and cumsum's reversed backward over [outer, n,
// inner], bit-identical to tensor/cpu/scan.cpp (see Note [Sequential CUDA scans]).
// Not a parallel prefix scan: a line of n elements takes n dependent steps on
// one thread, so a few very long lines use the GPU poorly.
#include <cstdint>
#include <type_traits>

#include <ddl/tensor/cuda/common.h>
#include <ddl/tensor/ops/scan.h>

namespace ddl::cuda::detail {
namespace {

using kernels::ScanOp;

// Note [Sequential CUDA scans]
// A parallel scan (Blelloch; cub::DeviceScan) adds in a tree order, so its
// float results differ from the CPU's left-to-right sums in the last bits and
// depend on the launch shape. Here one thread owns each (outer, inner) line and
// accumulates it left to right (right to left when reversed) exactly as the CPU
// does: floats in double, rounded once per output, integers in int64. The
// results are therefore deterministic and bit-identical to the CPU's (except a
// computed NaN's payload: x86 propagates an input NaN's bits, the GPU returns its
// canonical NaN). The explicit __dadd_rn/__dmul_rn keep the compiler from
// contracting anything into an FMA. Neighbouring threads take neighbouring inner
// positions, so loads are coalesced when inner > 1.
__device__ __forceinline__ double scan_step(double acc, double v, bool prod) {
  return prod ? __dmul_rn(acc, v) : __dadd_rn(acc, v);
}
__device__ __forceinline__ int64_t scan_step(int64_t acc, int64_t v, bool prod) {
  // Wrapping on overflow (two's complement), as the CPU's int64 arithmetic does in practice.
  const uint64_t a = static_cast<uint64_t>(acc), b = static_cast<uint64_t>(v);
  return static_cast<int64_t>(prod ? a * b : a + b);
}

// Inputs a thread loads before it adds them: one dependent load per element
// would leave each add waiting for memory. The adds keep their order.
constexpr int kScanUnroll = 8;

// in, out: [outer, n, inner], distinct buffers (the frontend allocates out); one
// thread per (o, j) line.
template <typename T, typename Acc>
__global__ void scan_lines(const T* __restrict__ in, T* __restrict__ out, int64_t outer, int64_t n, int64_t inner,
                           bool prod, bool reverse) {
  for (int64_t line = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; line < outer * inner;
       line += int64_t(gridDim.x) * blockDim.x) {
    const int64_t step = reverse ? -inner : inner;
    int64_t at = (line / inner) * n * inner + line % inner + (reverse ? (n - 1) * inner : 0);
    Acc acc = prod ? Acc(1) : Acc(0);
    int64_t s = 0;
    for (; s + kScanUnroll <= n; s += kScanUnroll, at += kScanUnroll * step) {
      T v[kScanUnroll];
#pragma unroll
      for (int u = 0; u < kScanUnroll; ++u) v[u] = in[at + u * step];
#pragma unroll
      for (int u = 0; u < kScanUnroll; ++u) {
        acc = scan_step(acc, static_cast<Acc>(v[u]), prod);
        out[at + u * step] = static_cast<T>(acc);
      }
    }
    for (; s < n; ++s, at += step) {
      acc = scan_step(acc, static_cast<Acc>(in[at]), prod);
      out[at] = static_cast<T>(acc);
    }
  }
}

void scan_cuda(const Tensor& in, int64_t outer, int64_t n, int64_t inner, ScanOp op, bool reverse, Tensor& out) {
  const int device = in.device().index;
  DeviceGuard guard(device);
  const cudaStream_t s = current_stream(device);
  DDL_DISPATCH_NUMERIC(out.dtype(), op == ScanOp::Sum ? "cumsum" : "cumprod", [&] {
    using Acc = std::conditional_t<std::is_floating_point_v<scalar_t>, double, int64_t>;
    if (outer * inner * n == 0) return;
    scan_lines<scalar_t, Acc><<<blocks_for(outer * inner), kBlockThreads, 0, s>>>(
        in.data<scalar_t>(), out.data<scalar_t>(), outer, n, inner, op == ScanOp::Prod, reverse);
    DDL_CUDA_KERNEL_CHECK();
  });
}

}  // namespace

DDL_REGISTER_KERNEL(kernels::scan_kernel, CUDA, &scan_cuda);

}  // namespace ddl::cuda::detail
