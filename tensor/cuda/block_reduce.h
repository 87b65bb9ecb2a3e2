// Internal to tensor/cuda/: a fixed-shape tree reduction over one thread block.
// Note [Deterministic CUDA reductions]: thread t of a block always folds the
// elements t, t + blockDim, t + 2·blockDim, ... of its range in order, then the
// block halves a shared array in a fixed tree; ranges (rows, chunks) are fixed
// by the shape alone. No float atomics, so repeated runs give identical bits
// (not the CPU's bits: the grouping differs, Note [Deterministic sums]).
#pragma once

#include <ddl/tensor/cuda/common.h>

namespace ddl::cuda::detail {

// Raw shared storage for kBlockThreads values of Acc (Acc needs no constructor).
template <typename Acc>
struct BlockScratch {
  alignas(16) unsigned char bytes[kBlockThreads * sizeof(Acc)];
  __device__ Acc* get() { return reinterpret_cast<Acc*>(bytes); }
};

// Combines every thread's v with combine(left, right) in a fixed tree; all
// threads get the result. blockDim.x must be kBlockThreads (a power of two);
// every thread of the block must call it.
template <typename Acc, typename Combine>
__device__ Acc block_reduce(Acc v, const Combine& combine, Acc* smem) {
  const int t = threadIdx.x;
  smem[t] = v;
  __syncthreads();
  for (int s = kBlockThreads / 2; s > 0; s >>= 1) {
    if (t < s) smem[t] = combine(smem[t], smem[t + s]);
    __syncthreads();
  }
  const Acc r = smem[0];
  __syncthreads();  // smem may be reused right after
  return r;
}

}  // namespace ddl::cuda::detail
