// Internal to tensor/cuda/ (include only from .cu files): the deterministic
// per-channel sums of batch_norm.cu (Note [Chunked channel sums]) and the
// channel stepping of its elementwise kernels (ChannelWalk).
#pragma once

#include <algorithm>

#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/cuda/block_reduce.h>
#include <ddl/tensor/cuda/common.h>

namespace ddl::cuda::detail {

// Note [Chunked channel sums]
// A per-channel sum over n and s of x: [N, C, S] runs in two kernels, as
// PyTorch's batch_norm_collect_statistics and reduce.cu's reduce_rows_chunked:
// the channel's M = N S elements, in (n, s) order, are cut into nchunks chunks
// of chunk_len; a block (or, for S == 1, a thread) per (channel, chunk) writes
// a partial sum in double to scratch, then fold_partials_kernel adds a
// channel's partials in chunk order through a fixed tree. The split depends on
// the shape alone (never on the device or timing) and no atomics are used, so
// every GPU and every run gives the same bits (Note [Deterministic CUDA
// reductions]). Each kernel sums two values (Acc2) so one pass serves dw and db.
constexpr int64_t kTargetBlocks = 1024;  // blocks over all channels when M is large
constexpr int64_t kMinChunk = 1024;      // elements per block, at least
constexpr int64_t kRowsPerThread = 64;   // S == 1: rows one thread sums

struct Acc2 {
  double a, b;
};

struct AddAcc2 {
  __device__ Acc2 operator()(Acc2 x, Acc2 y) const { return {x.a + y.a, x.b + y.b}; }
};

struct ChunkPlan {
  int64_t nchunks, chunk_len;
};

// A function of (N, C, S) only, so the summation order is too.
inline ChunkPlan plan_chunks(int64_t N, int64_t C, int64_t S) {
  const int64_t M = N * S;
  const auto cdiv = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  const int64_t n = S == 1 ? cdiv(M, kRowsPerThread) : std::min(cdiv(kTargetBlocks, C), cdiv(M, kMinChunk));
  const int64_t nchunks = std::max<int64_t>(n, 1);
  return {nchunks, cdiv(M, nchunks)};
}

// Block (chunk k, channel c) sums load(offset of (n, s), center(c)) over the
// chunk's elements; thread t takes elements t, t + 256, ... of the chunk, so a
// warp reads along s. (n, s) advance by adding, not dividing.
// partial: [C, nchunks]. S > 0; blockDim.x == kBlockThreads.
template <typename Load>
__global__ void chunk_partials_kernel(Load load, int64_t C, int64_t S, int64_t M, ChunkPlan plan, Acc2* partial) {
  __shared__ BlockScratch<Acc2> scratch;
  const int64_t CS = C * S;
  const int64_t ds = kBlockThreads % S, step = (kBlockThreads / S) * CS + ds;  // one stride of kBlockThreads
  for (int64_t c = blockIdx.y; c < C; c += gridDim.y) {
    const double m = load.center(c);
    for (int64_t k = blockIdx.x; k < plan.nchunks; k += gridDim.x) {
      const int64_t begin = k * plan.chunk_len, end = begin + plan.chunk_len < M ? begin + plan.chunk_len : M;
      Acc2 acc{0.0, 0.0};
      int64_t j = begin + threadIdx.x;
      if (j < end) {
        int64_t s = j % S, off = (j / S) * CS + c * S + s;  // once per thread and chunk
#pragma unroll 4                                            // several loads in flight; the sum's order is unchanged
        for (; j < end; j += kBlockThreads) {
          const Acc2 v = load(off, m);
          acc.a += v.a, acc.b += v.b;
          off += step, s += ds;
          if (s >= S) s -= S, off += CS - S;  // crossed into the next n
        }
      }
      acc = block_reduce(acc, AddAcc2{}, scratch.get());  // every thread of the block gets here
      if (threadIdx.x == 0) partial[c * plan.nchunks + k] = acc;
    }
  }
}

// S == 1 (x: [N, C]): thread c sums rows of its chunk k in order, so a warp
// reads consecutive channels. partial: [C, nchunks].
template <typename Load>
__global__ void row_partials_kernel(Load load, int64_t N, int64_t C, ChunkPlan plan, Acc2* partial) {
  for (int64_t c = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; c < C; c += int64_t(gridDim.x) * blockDim.x) {
    const double m = load.center(c);
    for (int64_t k = blockIdx.y; k < plan.nchunks; k += gridDim.y) {
      const int64_t end = (k + 1) * plan.chunk_len < N ? (k + 1) * plan.chunk_len : N;
      Acc2 acc{0.0, 0.0};
      for (int64_t n = k * plan.chunk_len; n < end; ++n) {
        const Acc2 v = load(n * C + c, m);
        acc.a += v.a, acc.b += v.b;
      }
      partial[c * plan.nchunks + k] = acc;
    }
  }
}

// Block c folds partial[c, 0..nchunks) in a fixed order, then finish(c, total).
template <typename Finish>
__global__ void fold_partials_kernel(Finish finish, const Acc2* partial, int64_t C, int64_t nchunks) {
  __shared__ BlockScratch<Acc2> scratch;
  for (int64_t c = blockIdx.x; c < C; c += gridDim.x) {
    Acc2 acc{0.0, 0.0};
    for (int64_t k = threadIdx.x; k < nchunks; k += blockDim.x) {
      const Acc2 v = partial[c * nchunks + k];
      acc.a += v.a, acc.b += v.b;
    }
    acc = block_reduce(acc, AddAcc2{}, scratch.get());
    if (threadIdx.x == 0) finish(c, acc);
  }
}

// Sums load over each channel of x: [N, C, S] and calls finish(c, sums) (Note
// [Chunked channel sums]). partial: scratch of C * plan.nchunks Acc2. N S > 0.
template <typename Load, typename Finish>
void channel_sums(const Load& load, const Finish& finish, int64_t N, int64_t C, int64_t S, const ChunkPlan& plan,
                  Acc2* partial, cudaStream_t s) {
  const auto cap = [](int64_t n, int64_t most) { return static_cast<unsigned int>(std::min(n, most)); };
  if (S == 1) {
    const int64_t threads = std::min<int64_t>(kBlockThreads, (C + 31) / 32 * 32);  // no idle warps for small C
    const dim3 grid(cap((C + threads - 1) / threads, 1 << 20), cap(plan.nchunks, 65535));
    row_partials_kernel<<<grid, static_cast<unsigned int>(threads), 0, s>>>(load, N, C, plan, partial);
  } else {
    const dim3 grid(cap(plan.nchunks, 1 << 20), cap(C, 65535));
    chunk_partials_kernel<<<grid, kBlockThreads, 0, s>>>(load, C, S, N * S, plan, partial);
  }
  DDL_CUDA_KERNEL_CHECK();
  fold_partials_kernel<<<cap(C, 65535), kBlockThreads, 0, s>>>(finish, partial, C, plan.nchunks);
  DDL_CUDA_KERNEL_CHECK();
}

// Scratch for C * plan.nchunks partials on the current stream (the caching
// allocator is stream-ordered, so it stays valid for the kernels queued after).
inline Tensor partials_scratch(int64_t C, const ChunkPlan& plan, Device device) {
  return empty({C * plan.nchunks * static_cast<int64_t>(sizeof(Acc2))}, TensorOptions(DType::UInt8, device));
}

// The elementwise kernels below take elements i = t, t + stride, ... of
// [N, C, S] and step the channel c = (i / S) % C by adding, not dividing (a
// 64-bit division per element costs more than the element's memory traffic).
// A capped grid gives each thread several elements, so its one division is
// shared. blockDim.x == kBlockThreads and gridDim.x == blocks.
constexpr unsigned int kWalkBlocks = 2048;

struct ChannelWalk {
  unsigned int blocks;
  int64_t stride, ds, dc;  // per step: elements, then s and c advance (mod S, C)
  __device__ void step(int64_t& s, int64_t& c, int64_t S, int64_t C) const {
    s += ds, c += dc;
    if (s >= S) s -= S, ++c;  // one carry at most: ds < S
    if (c >= C) c -= C;       // c + dc + 1 < 2C
  }
};

// total = N C S > 0.
inline ChannelWalk channel_walk(int64_t total, int64_t C, int64_t S) {
  const unsigned int blocks = std::min(blocks_for(total), kWalkBlocks);
  const int64_t stride = static_cast<int64_t>(blocks) * kBlockThreads;
  return {blocks, stride, stride % S, (stride / S) % C};
}

}  // namespace ddl::cuda::detail
