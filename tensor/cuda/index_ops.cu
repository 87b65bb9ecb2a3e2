// CUDA kernels behind advanced indexing (tensor/ops/indexing.cpp): take (t[indices]),
// put (index_put_, with or without accumulate) and nonzero. The frontend turns
// the index tensors into element offsets on the device and checks their range;
// these kernels only move data. put resolves repeated offsets as the CPU does
// (Note [Deterministic scatter on CUDA] in gather_scatter.cu); nonzero waits for
// the device once, to size its output.
#include <cub/device/device_scan.cuh>

#include <ddl/tensor/cuda/indexing.h>
#include <ddl/tensor/cuda/sorted_runs.h>
#include <ddl/tensor/ops/indexing.h>

namespace ddl::cuda::detail {
namespace {

// out: [N, row] contiguous; out[n, r] = src[offsets[n] + rest(r)], rest(r) the
// offset of src's r-th element (src: the strided view of the non-indexed dims).
template <typename T>
__global__ void take_kernel(int64_t total, int64_t row, OffsetCalc<1> rest, const int64_t* offsets, const T* src,
                            T* out) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t n = i / row, r = i - n * row;
    int64_t off[1];
    rest.get(r, off);
    out[i] = src[offsets[n] + off[0]];
  }
}

void take_cuda(const Tensor& out, const Tensor& src, const Tensor& offsets) {
  const int64_t total = out.numel(), row = src.numel();
  if (total == 0) return;
  const int device = out.device().index;
  const OffsetCalc<1> rest = make_offset_calc<1>({&src}, "index");
  DeviceGuard guard(device);
  const cudaStream_t s = current_stream(device);
  DDL_DISPATCH_ALL(src.dtype(), "index", [&] {
    take_kernel<scalar_t><<<blocks_for(total), kBlockThreads, 0, s>>>(total, row, rest, offsets.data<int64_t>(),
                                                                      src.data<scalar_t>(), out.data<scalar_t>());
  });
  DDL_CUDA_KERNEL_CHECK();
}

__global__ void iota_kernel(int64_t n, int64_t* out) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    out[i] = i;
}

// keys (sorted offsets, N of them) and order (the value row each came from):
// thread (k, r) writes dst[keys[k] + rest(r)] when k ends its run of equal keys, or
// adds the run's values in order when accumulate and k starts it.
// values: [N, row] contiguous. See Note [Deterministic scatter on CUDA].
template <typename T>
__global__ void put_kernel(int64_t n, int64_t row, OffsetCalc<1> rest, const uint64_t* keys, const int64_t* order,
                           const T* values, T* dst, bool accumulate) {
  const int64_t total = n * row;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t k = i / row, r = i - k * row;
    const uint64_t key = keys[k];
    int64_t off[1];
    if (!accumulate) {
      if (k + 1 < n && keys[k + 1] == key) continue;  // a later row writes this element
      rest.get(r, off);
      dst[key + off[0]] = values[order[k] * row + r];
      continue;
    }
    if (k > 0 && keys[k - 1] == key) continue;  // the run's first row adds it all
    rest.get(r, off);
    T& x = dst[key + off[0]];
    T acc = x;
    for (int64_t j = k; j < n && keys[j] == key; ++j) acc = accumulate_one(acc, values[order[j] * row + r]);
    x = acc;
  }
}

void put_cuda(const Tensor& dst, const Tensor& offsets, const Tensor& values, bool accumulate) {
  const int64_t n = offsets.numel(), row = dst.numel();
  if (n == 0 || row == 0) return;
  const int device = dst.device().index;
  const OffsetCalc<1> rest = make_offset_calc<1>({&dst}, "index_put_");
  DeviceGuard guard(device);
  const cudaStream_t s = current_stream(device);
  const Tensor rows = empty({n}, TensorOptions(DType::Int64, dst.device()));
  iota_kernel<<<blocks_for(n), kBlockThreads, 0, s>>>(n, rows.data<int64_t>());
  DDL_CUDA_KERNEL_CHECK();
  const SortedPairs sorted = sort_pairs(offsets.contiguous(), rows, reachable_elements(dst));
  const auto* keys = static_cast<const uint64_t*>(sorted.keys.raw_data());
  DDL_DISPATCH_ALL(dst.dtype(), "index_put_", [&] {
    put_kernel<scalar_t><<<blocks_for(n * row), kBlockThreads, 0, s>>>(
        n, row, rest, keys, sorted.values.data<int64_t>(), values.data<scalar_t>(), dst.data<scalar_t>(), accumulate);
  });
  DDL_CUDA_KERNEL_CHECK();
}

// PyTorch's limit on a tensor's dims, ample for nonzero's coordinates.
constexpr int kMaxNonzeroDims = 25;
struct NonzeroShape {
  int nd;
  int64_t sizes[kMaxNonzeroDims];
};

// flags[i] = 1 where t[i] != 0 (NaN counts as nonzero, -0.0 does not: the CPU's test).
template <typename T>
__global__ void nonzero_flags_kernel(int64_t n, const T* t, int64_t* flags) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    flags[i] = t[i] != T(0) ? 1 : 0;
}

// ends: inclusive prefix sums of the flags. Element i, when flagged, is nonzero number
// ends[i] - 1 and writes its row-major coordinates to that row of out [count, nd].
__global__ void nonzero_coords_kernel(int64_t n, NonzeroShape shape, const int64_t* ends, int64_t* out) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t end = ends[i];
    if (end == (i > 0 ? ends[i - 1] : 0)) continue;  // not flagged
    int64_t* coords = out + (end - 1) * shape.nd;
    int64_t rem = i;
    for (int d = shape.nd - 1; d >= 0; --d) {
      coords[d] = rem % shape.sizes[d];
      rem /= shape.sizes[d];
    }
  }
}

// t: contiguous, at least one dim and one element.
Tensor nonzero_cuda(const Tensor& t) {
  DDL_CHECK(t.dim() <= kMaxNonzeroDims, "nonzero: CUDA tensors of at most ", kMaxNonzeroDims, " dims, got ",
            describe(t));
  const int device = t.device().index;
  const int64_t n = t.numel();
  const TensorOptions i64(DType::Int64, t.device());
  const Tensor flags = empty({n}, i64), ends = empty({n}, i64);
  {
    DeviceGuard guard(device);
    const cudaStream_t s = current_stream(device);
    DDL_DISPATCH_ALL(t.dtype(), "nonzero", [&] {
      nonzero_flags_kernel<scalar_t>
          <<<blocks_for(n), kBlockThreads, 0, s>>>(n, t.data<scalar_t>(), flags.data<int64_t>());
    });
    DDL_CUDA_KERNEL_CHECK();
    size_t scratch_bytes = 0;
    DDL_CUDA_CHECK(
        cub::DeviceScan::InclusiveSum(nullptr, scratch_bytes, flags.data<int64_t>(), ends.data<int64_t>(), n, s));
    const Tensor scratch =
        empty({static_cast<int64_t>(scratch_bytes > 0 ? scratch_bytes : 1)}, TensorOptions(DType::UInt8, t.device()));
    DDL_CUDA_CHECK(cub::DeviceScan::InclusiveSum(scratch.raw_data(), scratch_bytes, flags.data<int64_t>(),
                                                 ends.data<int64_t>(), n, s));
  }
  // The output's size depends on the data: this read-back is the one host sync
  // nonzero needs (PyTorch's CUDA nonzero synchronises for the same reason).
  const int64_t count = to_vector<int64_t>(ends.narrow(0, n - 1, 1))[0];
  const Tensor out = empty({count, t.dim()}, i64);
  if (count == 0) return out;
  NonzeroShape shape{};
  shape.nd = static_cast<int>(t.dim());
  for (int d = 0; d < shape.nd; ++d) shape.sizes[d] = t.size(d);
  DeviceGuard guard(device);
  nonzero_coords_kernel<<<blocks_for(n), kBlockThreads, 0, current_stream(device)>>>(n, shape, ends.data<int64_t>(),
                                                                                     out.data<int64_t>());
  DDL_CUDA_KERNEL_CHECK();
  return out;
}

}  // namespace

DDL_REGISTER_KERNEL(kernels::take_kernel, CUDA, &take_cuda);
DDL_REGISTER_KERNEL(kernels::put_kernel, CUDA, &put_cuda);
DDL_REGISTER_KERNEL(kernels::nonzero_kernel, CUDA, &nonzero_cuda);

}  // namespace ddl::cuda::detail
