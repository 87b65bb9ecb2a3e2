// CUDA reductions: rows of a contiguous [outer, inner] buffer (reduce_kernel)
// and the kept middle dim of [A, C, B] (sum_middle_kernel). Sum accumulates
// and max/min/arg* pick as ExtremeFn says (tensor/kernels/reduce_functors.h, shared
// with the CPU). Deterministic: see Note [Deterministic CUDA reductions].
// float16/bfloat16 load as float and reduce exactly as float32 does (sums in
// double), so the result has the bits of the cast-to-float32 path.
#include <type_traits>

#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/cuda/block_reduce.h>
#include <ddl/tensor/cuda/half_compute.h>
#include <ddl/tensor/kernels/reduce_functors.h>
#include <ddl/tensor/kernels/reduce_kernel.h>

namespace ddl::cuda {
namespace {

using detail::ComputeT;
using detail::dispatch_numeric_and_half;
using detail::kBlockThreads;
using detail::kIsHalf;
using kernels::ReduceOp;

// Rows this short are folded by one thread each; longer ones by a block per
// chunk of kChunk elements, chunks combined in a second pass.
constexpr int64_t kSmallRow = 32;
constexpr int64_t kChunk = 8192;
constexpr unsigned int kMaxBlocks = 1u << 20;

// Out is T, or float for a 16-bit T summed into float32 (mean's sum).
template <typename T, typename Out_ = T>
struct SumReducer {
  using C = ComputeT<T>;
  using Acc = SumAcc<C>;
  using Out = Out_;
  __device__ Acc identity() const { return Acc(0); }
  __device__ Acc load(T x, int64_t) const { return static_cast<Acc>(static_cast<C>(x)); }
  __device__ Acc operator()(Acc a, Acc b) const { return a + b; }
  // Through C first: a 16-bit result is the float32 sum rounded, as the cast path rounds it.
  __device__ Out finish(Acc a) const { return static_cast<Out>(static_cast<C>(a)); }
};

// The value and index of the pick so far; i < 0: nothing seen yet.
template <typename T>
struct Pick {
  T v;
  int64_t i;
};

template <typename T, bool kMax, bool kArg>
struct ExtremeReducer {
  using C = ComputeT<T>;
  using Acc = Pick<C>;
  using Out = std::conditional_t<kArg, int64_t, T>;
  __device__ Acc identity() const { return Acc{C(0), -1}; }
  __device__ Acc load(T x, int64_t i) const { return Acc{static_cast<C>(x), i}; }
  __device__ Acc operator()(Acc a, Acc b) const {
    if (a.i < 0) return b;
    if (b.i < 0) return a;
    return ExtremeFn<C, kMax>{}.beats(b.v, b.i, a.v, a.i) ? b : a;
  }
  __device__ Out finish(Acc a) const {
    if constexpr (kArg)
      return a.i;
    else
      return static_cast<T>(a.v);
  }
};

// Element j of row r: in[r, j] of [rows, len].
template <typename T>
struct RowIndexer {
  const T* in;
  int64_t len;
  __device__ T operator()(int64_t r, int64_t j) const { return in[r * len + j]; }
};
// Element j of "row" c of [A, C, B]: j = a·B + b, in[a, c, b].
template <typename T>
struct MiddleIndexer {
  const T* in;
  int64_t C, B;
  __device__ T operator()(int64_t c, int64_t j) const {
    const int64_t a = j / B, b = j - a * B;
    return in[(a * C + c) * B + b];
  }
};

// One thread per row, folding left to right.
template <typename R, typename Idx>
__global__ void reduce_rows_thread(R r, Idx at, int64_t rows, int64_t len, typename R::Out* out) {
  for (int64_t row = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; row < rows;
       row += static_cast<int64_t>(blockDim.x) * gridDim.x) {
    typename R::Acc acc = r.identity();
    for (int64_t j = 0; j < len; ++j) acc = r(acc, r.load(at(row, j), j));
    out[row] = r.finish(acc);
  }
}

// One block per (row, chunk): writes the chunk's partial, or, when a row is one chunk, the result.
template <typename R, typename Idx>
__global__ void reduce_rows_chunked(R r, Idx at, int64_t rows, int64_t len, int64_t nchunks, typename R::Acc* partial,
                                    typename R::Out* out) {
  using Acc = typename R::Acc;
  __shared__ detail::BlockScratch<Acc> scratch;
  for (int64_t blk = blockIdx.x; blk < rows * nchunks; blk += gridDim.x) {
    const int64_t row = blk / nchunks, begin = (blk % nchunks) * kChunk;
    const int64_t end = begin + kChunk < len ? begin + kChunk : len;
    Acc acc = r.identity();
    for (int64_t j = begin + threadIdx.x; j < end; j += blockDim.x) acc = r(acc, r.load(at(row, j), j));
    acc = detail::block_reduce(acc, r, scratch.get());
    if (threadIdx.x == 0) {
      if (partial != nullptr)
        partial[blk] = acc;
      else
        out[row] = r.finish(acc);
    }
  }
}

// Second pass: one block per row folds the row's nchunks partials.
template <typename R>
__global__ void reduce_partials(R r, const typename R::Acc* partial, int64_t rows, int64_t nchunks,
                                typename R::Out* out) {
  using Acc = typename R::Acc;
  __shared__ detail::BlockScratch<Acc> scratch;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    Acc acc = r.identity();
    for (int64_t k = threadIdx.x; k < nchunks; k += blockDim.x) acc = r(acc, partial[row * nchunks + k]);
    acc = detail::block_reduce(acc, r, scratch.get());
    if (threadIdx.x == 0) out[row] = r.finish(acc);
  }
}

unsigned int grid_for(int64_t blocks) {
  return static_cast<unsigned int>(blocks < 1 ? 1 : (blocks > kMaxBlocks ? kMaxBlocks : blocks));
}

// Reduces `rows` rows of `len` elements (read through `at`) into out[rows].
template <typename R, typename Idx>
void reduce_rows(const R& r, const Idx& at, int64_t rows, int64_t len, bool thread_per_row, typename R::Out* out,
                 Device device) {
  if (rows == 0) return;
  detail::DeviceGuard g(device.index);
  cudaStream_t s = detail::current_stream(device.index);
  if (thread_per_row) {
    reduce_rows_thread<<<detail::blocks_for(rows), kBlockThreads, 0, s>>>(r, at, rows, len, out);
    DDL_CUDA_KERNEL_CHECK();
    return;
  }
  using Acc = typename R::Acc;
  const int64_t nchunks = (len + kChunk - 1) / kChunk;
  if (nchunks <= 1) {
    reduce_rows_chunked<<<grid_for(rows), kBlockThreads, 0, s>>>(r, at, rows, len, int64_t{1}, nullptr, out);
    DDL_CUDA_KERNEL_CHECK();
    return;
  }
  // Partials live in a scratch tensor; the stream-ordered allocator keeps it valid for both passes.
  const Tensor scratch = empty(Shape{rows * nchunks * static_cast<int64_t>(sizeof(Acc))}, {DType::UInt8, device});
  Acc* partial = static_cast<Acc*>(scratch.raw_data());
  reduce_rows_chunked<<<grid_for(rows * nchunks), kBlockThreads, 0, s>>>(r, at, rows, len, nchunks, partial, out);
  DDL_CUDA_KERNEL_CHECK();
  reduce_partials<<<grid_for(rows), kBlockThreads, 0, s>>>(r, static_cast<const Acc*>(partial), rows, nchunks, out);
  DDL_CUDA_KERNEL_CHECK();
}

// in: contiguous [outer, inner]; out: [outer].
template <typename R, typename T>
void reduce_typed(const R& r, const Tensor& out, const Tensor& in, int64_t outer, int64_t inner) {
  reduce_rows(r, RowIndexer<T>{in.data<T>(), inner}, outer, inner, inner <= kSmallRow, out.data<typename R::Out>(),
              in.device());
}

void reduce_cuda(ReduceOp op, const Tensor& out, const Tensor& in, int64_t outer, int64_t inner) {
  dispatch_numeric_and_half(in.dtype(), "reduce", [&](auto tag) {
    using T = decltype(tag);
    switch (op) {
      case ReduceOp::Sum:
        // A 16-bit input summed into float32 (tensor/ops/reduce.cpp, mean) is not rounded to 16 bits.
        if constexpr (kIsHalf<T>) {
          if (out.dtype() == DType::Float32) return reduce_typed<SumReducer<T, float>, T>({}, out, in, outer, inner);
        }
        return reduce_typed<SumReducer<T>, T>({}, out, in, outer, inner);
      case ReduceOp::Max:
        return reduce_typed<ExtremeReducer<T, true, false>, T>({}, out, in, outer, inner);
      case ReduceOp::Min:
        return reduce_typed<ExtremeReducer<T, false, false>, T>({}, out, in, outer, inner);
      case ReduceOp::ArgMax:
        return reduce_typed<ExtremeReducer<T, true, true>, T>({}, out, in, outer, inner);
      case ReduceOp::ArgMin:
        return reduce_typed<ExtremeReducer<T, false, true>, T>({}, out, in, outer, inner);
    }
  });
}

// in: contiguous [A, C, B]; out: [C]. With B == 1 and many channels, a thread
// per channel reads coalesced across threads; otherwise a block per chunk.
void sum_middle_cuda(const Tensor& out, const Tensor& in, int64_t A, int64_t C, int64_t B) {
  dispatch_numeric_and_half(in.dtype(), "sum", [&](auto tag) {
    using T = decltype(tag);
    const int64_t len = A * B;
    const bool thread_per_row = len <= kSmallRow || (B == 1 && C >= 2048);
    const MiddleIndexer<T> at{in.data<T>(), C, B};
    if constexpr (kIsHalf<T>) {
      if (out.dtype() == DType::Float32)
        return reduce_rows(SumReducer<T, float>{}, at, C, len, thread_per_row, out.data<float>(), in.device());
    }
    reduce_rows(SumReducer<T>{}, at, C, len, thread_per_row, out.data<T>(), in.device());
  });
}

}  // namespace

DDL_REGISTER_KERNEL(kernels::reduce_kernel, CUDA, &reduce_cuda);
DDL_REGISTER_KERNEL(kernels::sum_middle_kernel, CUDA, &sum_middle_cuda);

}  // namespace ddl::cuda
