// CPU reductions over the rows of a contiguous [outer, inner] buffer.
// Note [Deterministic sums]: a row is summed in blocks of kBlock elements,
// each block in double as 8 interleaved partial sums (element i into sum i mod 8,
// then the 8 added in a fixed tree), then the block sums are added in block order.
// Threads split rows (or, for one long row, blocks), never the order inside a block,
// so any thread count gives the same bits. One sum left to right was one chain of
// dependent adds, latency-bound at 3-4 cycles an element (the conv bias gradients were
// 2% of the VGG-11-BN train step); integers sum exactly, left to right.
#include <limits>
#include <type_traits>

#include <ddl/tensor/cpu/cpu_level.h>
#include <ddl/tensor/cpu/loops.h>
#include <ddl/tensor/cpu/sum_cols_levels.h>
#include <ddl/tensor/kernels/reduce_functors.h>
#include <ddl/tensor/kernels/reduce_kernel.h>

namespace ddl::cpu {
namespace {

using kernels::ReduceOp;
constexpr int64_t kBlock = 4096;

template <typename T>
using Acc = SumAcc<T>;  // tensor/kernels/reduce_functors.h, shared with CUDA

template <typename T>
Acc<T> block_sum(const T* x, int64_t n) {
  if constexpr (std::is_floating_point_v<Acc<T>>) {
    Acc<T> p[8] = {};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
      for (int j = 0; j < 8; ++j) p[j] += static_cast<Acc<T>>(x[i + j]);
    for (int j = 0; i < n; ++i, ++j) p[j] += static_cast<Acc<T>>(x[i]);
    return ((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7]));
  } else {
    Acc<T> s = 0;
    for (int64_t i = 0; i < n; ++i) s += static_cast<Acc<T>>(x[i]);
    return s;
  }
}

template <typename T>
void sum_rows(T* out, const T* in, int64_t outer, int64_t inner) {
  // Split one long row into blocks across threads only when each thread gets real work.
  if (outer >= get_num_threads() || inner < 16 * kBlock) {
    parallel_for(0, outer, ddl::detail::grain_for(32768, inner), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        Acc<T> s = 0;
        for (int64_t k = 0; k < inner; k += kBlock) s += block_sum(in + r * inner + k, std::min(kBlock, inner - k));
        out[r] = static_cast<T>(s);
      }
    });
    return;
  }
  // Few long rows: parallelise over blocks, then combine block sums in order.
  const int64_t nblocks = (inner + kBlock - 1) / kBlock;
  std::vector<Acc<T>> partial(static_cast<size_t>(nblocks));
  for (int64_t r = 0; r < outer; ++r) {
    const T* row = in + r * inner;
    parallel_for(0, nblocks, 1, [&](int64_t b, int64_t e) {
      for (int64_t k = b; k < e; ++k) partial[k] = block_sum(row + k * kBlock, std::min(kBlock, inner - k * kBlock));
    });
    Acc<T> s = 0;
    for (Acc<T> p : partial) s += p;
    out[r] = static_cast<T>(s);
  }
}

// Max/min (NaN wins, as in PyTorch) and arg variants (first extreme index): see ExtremeFn.
template <typename T, bool kMax, bool kArg>
void extreme_rows(void* out_raw, const T* in, int64_t outer, int64_t inner) {
  const ExtremeFn<T, kMax> pick;
  parallel_for(0, outer, ddl::detail::grain_for(32768, inner), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const T* x = in + r * inner;
      int64_t best = 0;
      for (int64_t k = 1; k < inner; ++k) {
        const T v = x[k], cur = x[best];
        if (cur != cur) break;  // NaN already found: nothing replaces it
        if (pick.replaces(v, cur)) best = k;
      }
      if constexpr (kArg) {
        static_cast<int64_t*>(out_raw)[r] = best;
      } else {
        static_cast<T*>(out_raw)[r] = x[best];
      }
    }
  });
}

void reduce_cpu(ReduceOp op, const Tensor& out, const Tensor& in, int64_t outer, int64_t inner) {
  DDL_DISPATCH_NUMERIC(in.dtype(), "reduce", [&] {
    const scalar_t* x = in.data<scalar_t>();
    switch (op) {
      case ReduceOp::Sum:
        return sum_rows(out.data<scalar_t>(), x, outer, inner);
      case ReduceOp::Max:
        return extreme_rows<scalar_t, true, false>(out.raw_data(), x, outer, inner);
      case ReduceOp::Min:
        return extreme_rows<scalar_t, false, false>(out.raw_data(), x, outer, inner);
      case ReduceOp::ArgMax:
        return extreme_rows<scalar_t, true, true>(out.raw_data(), x, outer, inner);
      case ReduceOp::ArgMin:
        return extreme_rows<scalar_t, false, true>(out.raw_data(), x, outer, inner);
    }
  });
}

// out[c] = sum over a of the block sums of x[a, c, :], a in order: one thread per c,
// so the order never depends on the thread count (Note [Deterministic sums]).
template <typename T>
void sum_middle_rows(T* out, const T* in, int64_t A, int64_t C, int64_t B) {
  if (B == 1) {
    // Sums of the columns of an [A, C] matrix (a bias gradient): walking one column at a
    // time strides through memory, so each thread sweeps its columns row by row instead.
    // Every column still adds its A values in order, in Acc<T>: the same bits.
    constexpr int64_t kCols = 256;
    const CpuLevel level = cpu_level();
    parallel_for(0, C, std::max<int64_t>(kCols, 32768 / std::max<int64_t>(A, 1)), [&](int64_t cb, int64_t ce) {
      Acc<T> s[kCols];
      for (int64_t c0 = cb; c0 < ce; c0 += kCols) {
        const int64_t w = std::min(kCols, ce - c0);
        for (int64_t j = 0; j < w; ++j) s[j] = 0;
        if constexpr (std::is_same_v<T, float>) {
          if (level == CpuLevel::avx512) {
            isa::sum_cols_f32_avx512(in, A, C, c0, w, s);
          } else if (level == CpuLevel::avx2) {
            isa::sum_cols_f32_avx2(in, A, C, c0, w, s);
          } else {
            for (int64_t a = 0; a < A; ++a)
              for (int64_t j = 0; j < w; ++j) s[j] += static_cast<Acc<T>>(in[a * C + c0 + j]);
          }
        } else {
          for (int64_t a = 0; a < A; ++a) {
            const T* row = in + a * C + c0;
            for (int64_t j = 0; j < w; ++j) s[j] += static_cast<Acc<T>>(row[j]);
          }
        }
        for (int64_t j = 0; j < w; ++j) out[c0 + j] = static_cast<T>(s[j]);
      }
    });
    return;
  }
  parallel_for(0, C, ddl::detail::grain_for(32768, A * B), [&](int64_t cb, int64_t ce) {
    for (int64_t c = cb; c < ce; ++c) {
      Acc<T> s = 0;
      for (int64_t a = 0; a < A; ++a) {
        const T* row = in + (a * C + c) * B;
        for (int64_t k = 0; k < B; k += kBlock) s += block_sum(row + k, std::min(kBlock, B - k));
      }
      out[c] = static_cast<T>(s);
    }
  });
}

void sum_middle_cpu(const Tensor& out, const Tensor& in, int64_t A, int64_t C, int64_t B) {
  DDL_DISPATCH_NUMERIC(in.dtype(), "sum", [&] { sum_middle_rows(out.data<scalar_t>(), in.data<scalar_t>(), A, C, B); });
}

}  // namespace

DDL_REGISTER_KERNEL(kernels::reduce_kernel, CPU, &reduce_cpu);
DDL_REGISTER_KERNEL(kernels::sum_middle_kernel, CPU, &sum_middle_cpu);

}  // namespace ddl::cpu
