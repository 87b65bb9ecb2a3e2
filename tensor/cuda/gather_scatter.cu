// CUDA gather and scatter(_add) of tensor/ops/indexing.h; index_select and index_add
// reach them through their frontends (tensor/ops/gather_scatter.cpp), which have
// checked shapes, devices and index ranges. Gather is one thread per output;
// scatter sorts its writes first so that repeated indices resolve as on the CPU,
// bit for bit (Note [Deterministic scatter on CUDA]). No float atomics.
#include <ddl/tensor/cuda/indexing.h>
#include <ddl/tensor/cuda/sorted_runs.h>
#include <ddl/tensor/ops/indexing.h>

namespace ddl::cuda::detail {
namespace {

// t viewed at the positions of `index` (t may be larger in every dim), with the
// stride along `dim` zeroed: the index supplies that coordinate (as the CPU's along_index).
// dim < 0: none zeroed.
Tensor along_index(const Tensor& t, const Tensor& index, int64_t dim) {
  Strides s = t.strides();
  if (dim >= 0) s[dim] = 0;
  return Tensor(t.storage(), index.shape(), s, t.offset(), t.dtype());
}

// out, index, base: index.shape; out[p] = self[p with p[dim] = index[p]], where
// base = self at p with dim's stride zeroed and step = self.stride(dim).
template <typename T>
struct GatherApply {
  T* out;
  const int64_t* index;
  const T* self;
  int64_t step;
  __device__ __forceinline__ void operator()(const int64_t (&off)[3]) const {
    out[off[0]] = self[off[2] + index[off[1]] * step];
  }
};

void gather_cuda(const Tensor& out, const Tensor& self, int64_t dim, const Tensor& index) {
  const Tensor base = along_index(self, index, dim);
  DDL_DISPATCH_ALL(self.dtype(), "gather", [&] {
    const GatherApply<scalar_t> f{out.data<scalar_t>(), index.data<int64_t>(), self.data<scalar_t>(), self.stride(dim)};
    strided_apply<3>(self.device().index, {&out, &index, &base}, f, "gather");
  });
}

// Note [Deterministic scatter on CUDA]
// scatter_, scatter_add_ and index_put_ may write one element from several
// positions. The CPU resolves that serially, in row-major order of the index:
// the last write wins, or the element's old value plus each source in turn. One
// thread per position with atomicAdd would add in a different order each run, and
// plain stores would let an arbitrary writer win. Instead each position gets the
// key "element offset it writes" and the value "where it reads from"; a stable
// radix sort (sorted_runs.h) groups the writes to each element, still in index
// order; then the thread at the end of each run of equal keys stores that write
// (scatter), or the thread at the start of the run adds the run's sources in
// order onto the element (accumulate). That is the CPU's sequence of operations,
// so results match it bit for bit in every run. The price: a sort of the index,
// and a run of r repeats of one element is summed by one thread in r steps.

// One index position p (row-major linear i, so keys and reads are contiguous in
// index's shape): keys[i] = offset of self's element p writes, reads[i] = offset
// of src's element it reads.
struct ScatterKeys {
  int64_t* keys;
  int64_t* reads;
  const int64_t* index;
  int64_t step;
  __device__ __forceinline__ void operator()(const int64_t (&off)[4]) const {
    keys[off[0]] = off[2] + index[off[1]] * step;
    reads[off[0]] = off[3];
  }
};

// keys, reads: sorted pairs (n of them). See Note [Deterministic scatter on CUDA].
template <typename T>
__global__ void scatter_runs_kernel(int64_t n, const uint64_t* keys, const int64_t* reads, const T* src, T* self,
                                    bool accumulate) {
  for (int64_t k = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; k < n; k += int64_t(gridDim.x) * blockDim.x) {
    const uint64_t key = keys[k];
    if (!accumulate) {
      if (k + 1 < n && keys[k + 1] == key) continue;  // a later write to this element wins
      self[key] = src[reads[k]];
      continue;
    }
    if (k > 0 && keys[k - 1] == key) continue;  // the run's first thread adds it all
    T acc = self[key];
    for (int64_t j = k; j < n && keys[j] == key; ++j) acc = accumulate_one(acc, src[reads[j]]);
    self[key] = acc;
  }
}

// self[p with p[dim] = index[p]] = (or +=) src[p] for every position p of index.
void scatter_cuda(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, bool accumulate) {
  const int64_t n = index.numel();
  if (n == 0) return;
  const int device = self.device().index;
  const TensorOptions i64(DType::Int64, self.device());
  const Tensor keys = empty(index.shape(), i64), reads = empty(index.shape(), i64);
  const Tensor base = along_index(self, index, dim), from = along_index(src, index, -1);
  const ScatterKeys f{keys.data<int64_t>(), reads.data<int64_t>(), index.data<int64_t>(), self.stride(dim)};
  strided_apply<4>(device, {&keys, &index, &base, &from}, f, "scatter");
  const SortedPairs sorted = sort_pairs(keys, reads, reachable_elements(self));
  DeviceGuard guard(device);
  const cudaStream_t s = current_stream(device);
  const auto* sorted_keys = static_cast<const uint64_t*>(sorted.keys.raw_data());
  DDL_DISPATCH_ALL(self.dtype(), "scatter", [&] {
    scatter_runs_kernel<scalar_t><<<blocks_for(n), kBlockThreads, 0, s>>>(
        n, sorted_keys, sorted.values.data<int64_t>(), src.data<scalar_t>(), self.data<scalar_t>(), accumulate);
  });
  DDL_CUDA_KERNEL_CHECK();
}

}  // namespace

DDL_REGISTER_KERNEL(kernels::gather_kernel, CUDA, &gather_cuda);
DDL_REGISTER_KERNEL(kernels::scatter_kernel, CUDA, &scatter_cuda);

}  // namespace ddl::cuda::detail
