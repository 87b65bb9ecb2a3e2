// CUDA sort, topk and kthvalue rows (one stable segmented sort per call, a
// device-wide radix sort for a single row; see Note [CUDA sort keys]) and the
// scatter of sort_backward. Results equal the CPU's (tensor/cpu/sort.cpp) bit
// for bit: same order, same tie rule, NaN above every number. topk and kthvalue sort whole rows and keep the first k:
// correct and simple, not a selection algorithm.
#include <cstdint>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_sort.cuh>

#include "tensor/cuda/common.h"
#include "tensor/factory.h"
#include "tensor/sort.h"

namespace ddl::cuda::detail {
namespace {

// Note [CUDA sort keys]
// The CPU sorts each row with a comparator: a before b when a < b, NaN after
// every number (reversed when descending), ties in index order (stable_sort, or
// partial_sort with the index as tie-break). Here each value becomes an
// unsigned key whose plain integer order is that comparator's order, and
// cub::DeviceSegmentedSort::StableSortPairs sorts (key, column) pairs per row:
// stability gives the CPU's tie rule in both directions. The key mapping:
// - floats: the IEEE bits with the sign bit set for x >= 0 and all bits flipped
//   for x < 0 (the usual radix-sort transform), -0.0 mapped as +0.0 (the CPU's
//   `<` finds them equal, so they tie), and every NaN (either sign, any payload)
//   as all ones, above +inf;
// - signed integers: the two's-complement bits with the sign bit flipped;
// - uint8: itself.
// Descending sorts use ~key ascending, so ties still keep index order and NaN
// comes first, as on the CPU. Values are copied from x at the sorted columns, so
// NaN payloads and the sign of zero survive untouched. (cub's own float keys
// would put a NaN with its sign bit set below -inf, hence our transform.)

template <typename T>
struct KeyOf;
template <>
struct KeyOf<float> {
  using type = uint32_t;
  static __device__ uint32_t of(float v) {
    uint32_t u = __float_as_uint(v);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return 0xFFFFFFFFu;  // NaN
    if ((u << 1) == 0u) u = 0u;                               // -0.0 ties with +0.0
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
  }
};
template <>
struct KeyOf<double> {
  using type = uint64_t;
  static __device__ uint64_t of(double v) {
    uint64_t u = static_cast<uint64_t>(__double_as_longlong(v));
    if ((u & 0x7FFFFFFFFFFFFFFFull) > 0x7FF0000000000000ull) return 0xFFFFFFFFFFFFFFFFull;  // NaN
    if ((u << 1) == 0ull) u = 0ull;                                                         // -0.0 ties with +0.0
    return (u & 0x8000000000000000ull) ? ~u : (u | 0x8000000000000000ull);
  }
};
template <>
struct KeyOf<int64_t> {
  using type = uint64_t;
  static __device__ uint64_t of(int64_t v) { return static_cast<uint64_t>(v) ^ 0x8000000000000000ull; }
};
template <>
struct KeyOf<int32_t> {
  using type = uint32_t;
  static __device__ uint32_t of(int32_t v) { return static_cast<uint32_t>(v) ^ 0x80000000u; }
};
template <>
struct KeyOf<uint8_t> {
  using type = uint8_t;
  static __device__ uint8_t of(uint8_t v) { return v; }
};

// x: [rows, n] -> keys, cols: [rows, n] (cols = the column index); offsets: [rows + 1].
template <typename T, typename K>
__global__ void make_keys(const T* x, int64_t total, int64_t n, bool descending, K* keys, int64_t* cols,
                          int64_t* offsets) {
  const int64_t first = blockIdx.x * int64_t(blockDim.x) + threadIdx.x, stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = first; i < total; i += stride) {
    const K k = KeyOf<T>::of(x[i]);
    keys[i] = descending ? static_cast<K>(~k) : k;
    cols[i] = i % n;
  }
  for (int64_t r = first; r <= total / n; r += stride) offsets[r] = r * n;
}

// sorted_cols: [rows, n] -> values, indices: [rows, k], the first k of each row.
template <typename T>
__global__ void take_first_k(const T* x, const int64_t* sorted_cols, int64_t rows, int64_t n, int64_t k, T* values,
                             int64_t* indices) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < rows * k; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = i / k, j = i % k;
    const int64_t c = sorted_cols[r * n + j];
    values[i] = x[r * n + c];
    indices[i] = c;
  }
}

void sort_rows_cuda(const Tensor& x, int64_t k, bool descending, Tensor& values, Tensor& indices) {
  const int device = x.device().index;
  DeviceGuard guard(device);
  const cudaStream_t s = current_stream(device);
  const int64_t n = x.size(-1), total = x.numel(), rows = total / n;  // the frontend sends n, k > 0
  DDL_DISPATCH_NUMERIC(x.dtype(), "sort", [&] {
    using K = typename KeyOf<scalar_t>::type;
    const TensorOptions bytes(DType::UInt8, x.device()), i64(DType::Int64, x.device());
    // Scratch lives in tensors from the caching allocator, valid on this stream until they go out of scope.
    const Tensor keys_in = empty({total * int64_t(sizeof(K))}, bytes),
                 keys_out = empty({total * int64_t(sizeof(K))}, bytes);
    const Tensor cols_in = empty({total}, i64), cols_out = empty({total}, i64), offsets = empty({rows + 1}, i64);
    K* kin = static_cast<K*>(keys_in.raw_data());
    K* kout = static_cast<K*>(keys_out.raw_data());
    int64_t* cin = cols_in.data<int64_t>();
    int64_t* cout = cols_out.data<int64_t>();
    int64_t* off = offsets.data<int64_t>();
    make_keys<<<blocks_for(total), kBlockThreads, 0, s>>>(x.data<scalar_t>(), total, n, descending, kin, cin, off);
    DDL_CUDA_KERNEL_CHECK();
    // One row: a device-wide radix sort (stable too, so the same result) uses the whole GPU,
    // where the segmented sort would give the row to a single thread block.
    size_t scratch_bytes = 0;
    if (rows == 1)
      DDL_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, scratch_bytes, kin, kout, cin, cout, total, 0,
                                                     int(sizeof(K) * 8), s));
    else
      DDL_CUDA_CHECK(cub::DeviceSegmentedSort::StableSortPairs(nullptr, scratch_bytes, kin, kout, cin, cout, total,
                                                               rows, off, off + 1, s));
    const Tensor scratch = empty({static_cast<int64_t>(scratch_bytes > 0 ? scratch_bytes : 1)}, bytes);
    if (rows == 1)
      DDL_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(scratch.raw_data(), scratch_bytes, kin, kout, cin, cout, total, 0,
                                                     int(sizeof(K) * 8), s));
    else
      DDL_CUDA_CHECK(cub::DeviceSegmentedSort::StableSortPairs(scratch.raw_data(), scratch_bytes, kin, kout, cin, cout,
                                                               total, rows, off, off + 1, s));
    take_first_k<<<blocks_for(rows * k), kBlockThreads, 0, s>>>(x.data<scalar_t>(), cout, rows, n, k,
                                                                values.data<scalar_t>(), indices.data<int64_t>());
    DDL_CUDA_KERNEL_CHECK();
  });
}

// grad, indices: [rows, k]; grad_x: [rows, n] zeros. Each (r, j) adds its gradient
// at column indices[r, j]. sort/topk/kthvalue/max_dim/min_dim pick distinct
// columns in a row, so every grad_x element gets at most one add (0 + g, exactly
// the CPU's result, -0.0 included) and the result is deterministic; atomicAdd
// keeps repeated indices from a direct caller correct, though then the order of
// their adds (and so the rounding) may vary. An index outside [0, n) is skipped
// and reported through the deferred error record (Note [Deferred device errors]).
template <typename T>
__global__ void add_at_indices(const T* grad, const int64_t* indices, int64_t rows, int64_t k, int64_t n, T* grad_x,
                               DeviceErrorRecord* err, int op) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < rows * k; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = i / k, c = indices[i];
    if (c >= 0 && c < n) {
      atomicAdd(grad_x + r * n + c, grad[i]);
    } else if (*static_cast<volatile int*>(&err->flag) == 0) {  // the first error wins until raised
      // As in softmax.cu's scan_targets: plain stores to mapped host memory, no
      // atomics there; two bad indices racing here can only mix two bad reports.
      err->op = op, err->index = r, err->value = c, err->inner = 1, err->classes = n;
      __threadfence_system();  // the fields reach host memory before the flag
      *static_cast<volatile int*>(&err->flag) = 1;
    }
  }
}

void sort_backward_cuda(const Tensor& grad, const Tensor& indices, Tensor& grad_x) {
  const int device = grad.device().index;
  DeviceGuard guard(device);
  const cudaStream_t s = current_stream(device);
  const int64_t k = grad.size(-1), n = grad_x.size(-1);
  const int64_t rows = k == 0 ? 0 : grad.numel() / k;
  DDL_DISPATCH_FLOAT(grad.dtype(), "sort_backward", [&] {
    if (rows == 0) return;
    add_at_indices<<<blocks_for(rows * k), kBlockThreads, 0, s>>>(
        grad.data<scalar_t>(), indices.data<int64_t>(), rows, k, n, grad_x.data<scalar_t>(),
        device_error_record(device), device_error_op_id("sort_backward"));
    DDL_CUDA_KERNEL_CHECK();
  });
}

}  // namespace

DDL_REGISTER_KERNEL(kernels::sort_rows_kernel, CUDA, &sort_rows_cuda);
DDL_REGISTER_KERNEL(kernels::sort_backward_kernel, CUDA, &sort_backward_cuda);

}  // namespace ddl::cuda::detail
