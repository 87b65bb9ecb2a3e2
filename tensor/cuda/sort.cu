// CUDA sort, topk and kthvalue rows (device-wide stable radix sorts of the
// whole tensor, rows told apart by their keys; see Note [CUDA sort keys]) and
// the scatter of sort_backward. Results equal the CPU's (tensor/cpu/sort.cpp)
// bit for bit: same order, same tie rule, NaN above every number. topk and
// kthvalue sort whole rows and keep the first k: correct and simple, not a
// selection algorithm.
#include <bit>
#include <cstdint>
#include <cub/device/device_radix_sort.cuh>

#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/cuda/common.h>
#include <ddl/tensor/ops/sort.h>

namespace ddl::cuda::detail {
namespace {

// Note [CUDA sort keys]
// The CPU sorts each row with a comparator: a before b when a < b, NaN after
// every number (reversed when descending), ties in index order (stable_sort, or
// partial_sort with the index as tie-break). Here each value becomes an
// unsigned key whose plain integer order is that comparator's order, and
// cub::DeviceRadixSort::SortPairs, which is stable, sorts (key, flat position)
// pairs: stability gives the CPU's tie rule in both directions. The key mapping:
// - floats: the IEEE bits with the sign bit set for x >= 0 and all bits flipped
//   for x < 0 (the usual radix-sort transform), -0.0 mapped as +0.0 (the CPU's
//   `<` finds them equal, so they tie), and every NaN (either sign, any payload)
//   as all ones, above +inf;
// - signed integers: the two's-complement bits with the sign bit flipped;
// - uint8: itself.
// Descending sorts use ~key ascending, so ties still keep index order and NaN
// comes first, as on the CPU. Values are copied from x at the sorted positions,
// so NaN payloads and the sign of zero survive untouched. (cub's own float keys
// would put a NaN with its sign bit set below -inf, hence our transform.)
// Many rows are sorted in one device-wide sort, not cub::DeviceSegmentedSort:
// that one copies segment sizes to the host and waits for the stream when there
// are more than 500 segments, and gives each segment one thread block otherwise
// (a few long rows use a few SMs). Keys of up to 32 bits carry their row above
// them, (row << bits) | key, sorted on bits + bit_width(rows - 1) bits. 64-bit
// keys (and 32-bit ones with more than 2^32 rows) take two stable passes: by key
// over the whole tensor, then by row, which keeps each row's key order.

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
struct KeyOf<int16_t> {
  using type = uint16_t;
  static __device__ uint16_t of(int16_t v) { return static_cast<uint16_t>(static_cast<uint16_t>(v) ^ 0x8000u); }
};
template <>
struct KeyOf<int8_t> {
  using type = uint8_t;
  static __device__ uint8_t of(int8_t v) { return static_cast<uint8_t>(static_cast<uint8_t>(v) ^ 0x80u); }
};
template <>
struct KeyOf<uint8_t> {
  using type = uint8_t;
  static __device__ uint8_t of(uint8_t v) { return v; }
};

// The composite key of Note [CUDA sort keys]: row first, then key.
template <typename K>
__host__ __device__ constexpr uint64_t row_key(uint64_t row, K key) {
  static_assert(sizeof(K) < 8, "64-bit keys take two passes");
  return (row << (8 * sizeof(K))) | static_cast<uint64_t>(key);
}
// Whether row_key keeps every row id of [0, rows) whole.
template <typename K>
constexpr bool rows_fit_key(int64_t rows) {
  return sizeof(K) < 8 && std::bit_width(static_cast<uint64_t>(rows - 1)) <= 64 - 8 * int(sizeof(K));
}

// x: [rows, n] -> keys (KeyOf<T> keys, or row_key of them when with_row), pos[i] = i.
template <typename T, typename Out>
__global__ void make_keys(const T* x, int64_t total, int64_t n, bool descending, bool with_row, Out* keys,
                          int64_t* pos) {
  using K = typename KeyOf<T>::type;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const K k0 = KeyOf<T>::of(x[i]);
    const K k = descending ? static_cast<K>(~k0) : k0;
    Out out = static_cast<Out>(k);
    if constexpr (sizeof(K) < 8)
      if (with_row) out = static_cast<Out>(row_key(static_cast<uint64_t>(i / n), k));
    keys[i] = out;
    pos[i] = i;
  }
}

// pos: flat positions in key order -> ids[i] = their rows, the keys of the second pass.
__global__ void row_ids(const int64_t* pos, int64_t total, int64_t n, uint64_t* ids) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x)
    ids[i] = static_cast<uint64_t>(pos[i] / n);
}

// sorted: [rows, n] flat positions, each row's in its sorted order -> values,
// indices: [rows, k], the first k of each row.
template <typename T>
__global__ void take_first_k(const T* x, const int64_t* sorted, int64_t rows, int64_t n, int64_t k, T* values,
                             int64_t* indices) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < rows * k; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = i / k, j = i % k;
    const int64_t p = sorted[r * n + j];
    values[i] = x[p];
    indices[i] = p - r * n;
  }
}

// One stable radix sort of (keys, pos) pairs on bits [0, end_bit) on stream s.
// Its scratch, from the caching allocator, may be freed on return: a block is
// reused only on the stream it was allocated on, after the work queued there.
template <typename Key>
void radix_sort_pairs(const Key* keys_in, Key* keys_out, const int64_t* pos_in, int64_t* pos_out, int64_t total,
                      int end_bit, const Device& device, cudaStream_t s) {
  size_t scratch_bytes = 0;
  DDL_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, scratch_bytes, keys_in, keys_out, pos_in, pos_out, total, 0,
                                                 end_bit, s));
  const Tensor scratch =
      empty({static_cast<int64_t>(scratch_bytes > 0 ? scratch_bytes : 1)}, TensorOptions(DType::UInt8, device));
  DDL_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(scratch.raw_data(), scratch_bytes, keys_in, keys_out, pos_in, pos_out,
                                                 total, 0, end_bit, s));
}

// x: [rows, n] contiguous -> values, indices: [rows, k]. See Note [CUDA sort keys].
void sort_rows_cuda(const Tensor& x, int64_t k, bool descending, Tensor& values, Tensor& indices) {
  const int device = x.device().index;
  DeviceGuard guard(device);
  const cudaStream_t s = current_stream(device);
  const int64_t n = x.size(-1), total = x.numel(), rows = total / n;     // the frontend sends n, k > 0
  const int row_bits = std::bit_width(static_cast<uint64_t>(rows - 1));  // 0 for one row
  DDL_DISPATCH_NUMERIC(x.dtype(), "sort", [&] {
    using K = typename KeyOf<scalar_t>::type;
    constexpr int key_bits = 8 * int(sizeof(K));
    const bool composite = rows > 1 && rows_fit_key<K>(rows);
    // Keys of the sort(s): K for one row, else uint64 (row_key, or row ids in the second pass).
    const int64_t key_bytes = rows == 1 ? int64_t(sizeof(K)) : int64_t(sizeof(uint64_t));
    const TensorOptions bytes(DType::UInt8, x.device()), i64(DType::Int64, x.device());
    const Tensor keys_a = empty({total * key_bytes}, bytes), keys_b = empty({total * key_bytes}, bytes);
    const Tensor pos_a = empty({total}, i64), pos_b = empty({total}, i64);
    int64_t* pa = pos_a.data<int64_t>();
    int64_t* pb = pos_b.data<int64_t>();
    const int64_t* sorted = pb;
    if (composite) {
      auto* ka = static_cast<uint64_t*>(keys_a.raw_data());
      make_keys<<<blocks_for(total), kBlockThreads, 0, s>>>(x.data<scalar_t>(), total, n, descending, true, ka, pa);
      DDL_CUDA_KERNEL_CHECK();
      radix_sort_pairs(ka, static_cast<uint64_t*>(keys_b.raw_data()), pa, pb, total, key_bits + row_bits, x.device(),
                       s);
    } else {
      auto* ka = static_cast<K*>(keys_a.raw_data());
      make_keys<<<blocks_for(total), kBlockThreads, 0, s>>>(x.data<scalar_t>(), total, n, descending, false, ka, pa);
      DDL_CUDA_KERNEL_CHECK();
      radix_sort_pairs(ka, static_cast<K*>(keys_b.raw_data()), pa, pb, total, key_bits, x.device(), s);
      if (rows > 1) {  // second pass, by row: keys_a and pos_a are free again
        auto* ra = static_cast<uint64_t*>(keys_a.raw_data());
        row_ids<<<blocks_for(total), kBlockThreads, 0, s>>>(pb, total, n, ra);
        DDL_CUDA_KERNEL_CHECK();
        radix_sort_pairs(ra, static_cast<uint64_t*>(keys_b.raw_data()), pb, pa, total, row_bits, x.device(), s);
        sorted = pa;
      }
    }
    take_first_k<<<blocks_for(rows * k), kBlockThreads, 0, s>>>(x.data<scalar_t>(), sorted, rows, n, k,
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
      // inner = 0 marks an index record (raised as the CPU words it: see raise_device_errors).
      err->op = op, err->index = r, err->value = c, err->inner = 0, err->classes = n;
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
