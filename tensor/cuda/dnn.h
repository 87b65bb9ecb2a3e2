// cuBLAS/cuDNN plumbing shared by gemm.cpp, conv2d.cpp and batch_norm.cu:
// per-thread, per-device library handles bound to the current stream, RAII
// cuDNN descriptors, workspaces from ddl's CUDA allocator, and the cache of
// convolution algorithms. The first part is plain C++ (tests read the cache
// counter); the rest needs CUDA headers and is seen only by the sources of ddl_tensor_cuda,
// which its meson.build compiles with DDL_TENSOR_CUDA_SOURCE.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include <ddl/tensor/core/dtype.h>

namespace ddl::cuda::detail {

// Note [Conv algorithm cache]
// cuDNN offers several algorithms per convolution pass; the right one depends
// on the shapes, dtype and math mode. It is chosen once per ConvKey from
// cudnnGet*Algorithm_v7's ranking (cuDNN's heuristics, no benchmark runs),
// deterministic algorithms first. The key's first call runs the candidates in
// that order until one succeeds (its workspace confirmed with
// cudnnGet*WorkspaceSize and allocated, the call not refused), as PyTorch's
// AlgoIterator::try_all does, and only that one is kept, for the process
// lifetime. The ranking is fixed for a given GPU and cuDNN, but which candidate
// wins may not be: one passed over for want of memory at that first call could
// have run in another process. The key holds shapes, never pointers, so a freed
// and reused buffer cannot alias an entry.
enum class ConvPass : uint8_t { Forward, BackwardData, BackwardFilter };

struct ConvKey {
  int device = 0;
  DType dtype = DType::Float32;
  ConvPass pass = ConvPass::Forward;
  bool tf32 = false;
  std::array<int64_t, 4> x{}, w{}, y{};  // [N, C, H, W], [K, C/G, R, S], [N, K, P, Q]
  std::array<int64_t, 2> stride{}, padding{}, dilation{};
  int64_t groups = 1;
  bool operator==(const ConvKey&) const = default;
};

struct ConvKeyHash {
  size_t operator()(const ConvKey& k) const noexcept;
};

// How many algorithm searches have run (a repeated shape must not add one).
int64_t conv_algo_searches();

// major * 10 + minor, e.g. 90 for sm_90.
int compute_capability(int device);

}  // namespace ddl::cuda::detail

#ifdef DDL_TENSOR_CUDA_SOURCE  // See the header comment: ddl_tensor_cuda's sources only.
#include <cublas_v2.h>
#include <cudnn.h>

#include <functional>
#include <string>

#include <ddl/tensor/core/tensor.h>
#include <ddl/tensor/cuda/common.h>

namespace ddl::cuda::detail {

// Throw ddl::Error naming the call, the library's status string and `context`
// (the op and its shapes). Use through DDL_CUBLAS_CHECK / DDL_CUDNN_CHECK.
[[noreturn]] void throw_cublas(cublasStatus_t st, const char* what, const std::string& context, const char* file,
                               int line);
[[noreturn]] void throw_cudnn(cudnnStatus_t st, const char* what, const std::string& context, const char* file,
                              int line);

// This thread's handle for `device` (the device must be current), bound to
// current_stream(device) on every call; cuBLAS's also to that stream's own
// workspace (Note [cuBLAS workspace per stream] in dnn.cpp). Handles live until
// the process ends.
cublasHandle_t cublas_handle(int device);
cudnnHandle_t cudnn_handle(int device);

// CUDNN_DATA_FLOAT, _DOUBLE, _HALF or _BFLOAT16; throws for other dtypes.
cudnnDataType_t cudnn_dtype(DType t, const char* op);
// Checks that v fits the int that legacy cuBLAS/cuDNN arguments take.
int to_int(int64_t v, const char* op, const char* what);

// A [n, c, h, w] NCHW-packed tensor descriptor.
class TensorDesc {
 public:
  TensorDesc(DType t, const std::array<int64_t, 4>& dims, const char* op);
  ~TensorDesc();
  TensorDesc(const TensorDesc&) = delete;
  TensorDesc& operator=(const TensorDesc&) = delete;
  cudnnTensorDescriptor_t get() const { return desc_; }

 private:
  cudnnTensorDescriptor_t desc_ = nullptr;
};

// A [k, c, r, s] NCHW filter descriptor.
class FilterDesc {
 public:
  FilterDesc(DType t, const std::array<int64_t, 4>& dims, const char* op);
  ~FilterDesc();
  FilterDesc(const FilterDesc&) = delete;
  FilterDesc& operator=(const FilterDesc&) = delete;
  cudnnFilterDescriptor_t get() const { return desc_; }

 private:
  cudnnFilterDescriptor_t desc_ = nullptr;
};

// A 2-D cross-correlation descriptor; its math type is set per chosen algorithm.
class ConvDesc {
 public:
  explicit ConvDesc(const ConvKey& k);
  ~ConvDesc();
  ConvDesc(const ConvDesc&) = delete;
  ConvDesc& operator=(const ConvDesc&) = delete;
  cudnnConvolutionDescriptor_t get() const { return desc_; }
  void set_math(cudnnMathType_t m, const char* op);

 private:
  cudnnConvolutionDescriptor_t desc_ = nullptr;
};

// A chosen algorithm (the int value of the pass's cudnn*Algo_t enum), the math
// type it runs with and its workspace size.
struct ConvAlgo {
  int algo = 0;
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
  size_t workspace_bytes = 0;
};

// The cached algorithm for `key`, running `search` (and counting it) on a miss;
// a search that throws caches nothing. See Note [Conv algorithm cache].
ConvAlgo cached_conv_algo(const ConvKey& key, const std::function<ConvAlgo()>& search);

// alpha = 1 and beta = 0 as cuDNN reads blend factors: double for double data, float otherwise.
struct Blend {
  float f1 = 1.0f, f0 = 0.0f;
  double d1 = 1.0, d0 = 0.0;
  const void* one(DType t) const { return t == DType::Float64 ? static_cast<const void*>(&d1) : &f1; }
  const void* zero(DType t) const { return t == DType::Float64 ? static_cast<const void*>(&d0) : &f0; }
};

// A device buffer of at least `bytes` from ddl's caching allocator (undefined
// for 0 bytes). Keep the Tensor alive until the call using it is enqueued.
Tensor workspace(int device, size_t bytes);

// "[a, b, c, d]" for error messages.
std::string dims_str(const std::array<int64_t, 4>& d);

}  // namespace ddl::cuda::detail

// Checks a cuBLAS / cuDNN status; the context arguments (op, shapes) are
// formatted only on failure.
#define DDL_CUBLAS_CHECK(expr, ...)                                                                               \
  do {                                                                                                            \
    const cublasStatus_t ddl_st_ = (expr);                                                                        \
    if (ddl_st_ != CUBLAS_STATUS_SUCCESS) [[unlikely]]                                                            \
      ::ddl::cuda::detail::throw_cublas(ddl_st_, #expr, ::ddl::detail::str_cat(__VA_ARGS__), __FILE__, __LINE__); \
  } while (0)
#define DDL_CUDNN_CHECK(expr, ...)                                                                               \
  do {                                                                                                           \
    const cudnnStatus_t ddl_st_ = (expr);                                                                        \
    if (ddl_st_ != CUDNN_STATUS_SUCCESS) [[unlikely]]                                                            \
      ::ddl::cuda::detail::throw_cudnn(ddl_st_, #expr, ::ddl::detail::str_cat(__VA_ARGS__), __FILE__, __LINE__); \
  } while (0)
#endif  // DDL_TENSOR_CUDA_SOURCE
