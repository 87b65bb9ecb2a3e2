// cuBLAS/cuDNN handles, status checks, RAII descriptors, workspaces and the
// convolution algorithm cache (see tensor/cuda/dnn.h). No kernels here.
#include <algorithm>
#include <climits>
#include <map>
#include <mutex>
#include <unordered_map>
#include <utility>

#include <ddl/tensor/core/caching_allocator.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/cuda/cublas_api.h>
#include <ddl/tensor/cuda/dnn.h>

namespace ddl::cuda::detail {

void throw_cublas(cublasStatus_t st, const char* what, const std::string& context, const char* file, int line) {
  ::ddl::detail::throw_error(file, line,
                             ::ddl::detail::str_cat(context, ": cuBLAS: ", what, " failed: ",
                                                    cublas().status_string(st), " (", static_cast<int>(st), ")"));
}

void throw_cudnn(cudnnStatus_t st, const char* what, const std::string& context, const char* file, int line) {
  ::ddl::detail::throw_error(file, line,
                             ::ddl::detail::str_cat(context, ": cuDNN: ", what, " failed: ", cudnnGetErrorString(st),
                                                    " (", static_cast<int>(st), ")"));
}

namespace {
// Per thread, like the current stream: a handle is not safe to share between
// threads that bind it to different streams. Never destroyed: destroying at
// exit can run after the driver is torn down (PyTorch leaks them likewise).
thread_local std::unordered_map<int, cublasHandle_t> cublas_handles;
thread_local std::unordered_map<int, cudnnHandle_t> cudnn_handles;

// Note [cuBLAS workspace per stream]
// cublasSetStream resets the handle to cuBLAS's default workspace, and the cuBLAS
// guide ("Results reproducibility", "cublasSetWorkspace") asks for a workspace per
// stream for bitwise-reproducible results when several streams run concurrently.
// So each (handle, stream) gets its own buffer from ddl's caching allocator, set
// after every cublasSetStream, as PyTorch does (CublasHandlePool.cpp,
// cublas_handle_stream_to_workspace). The buffer is allocated with that stream
// current, so when a thread ends and its map frees it, the allocator reuses it
// only on that stream, after the GEMMs queued there. Streams are never destroyed
// (stream.cpp), so a stream's address names one stream for the whole run.
thread_local std::map<std::pair<cublasHandle_t, cudaStream_t>, Tensor> cublas_workspaces;

// 32 MiB on sm_90, PyTorch's default there (parseChosenWorkspaceSize in
// CublasHandlePool.cpp) and what the cuBLAS guide's cublasSetWorkspace
// recommends for Hopper. Elsewhere PyTorch's ":4096:2:16:8" (2 x 4 MiB + 8 x
// 16 KiB) raised to the allocator's kMinLargeAlloc (10 MiB): a smaller request
// is carved from a shared 20 MiB segment and, held for good, would pin all of it.
size_t cublas_workspace_bytes(int device) {
  if (compute_capability(device) == 90) return size_t{32} << 20;
  return std::max((size_t{4096} * 2 + size_t{16} * 8) << 10, ::ddl::detail::CachingAllocator::kMinLargeAlloc);
}
}  // namespace

int compute_capability(int device) {
  int major = 0, minor = 0;
  DDL_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  DDL_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  return major * 10 + minor;
}

cublasHandle_t cublas_handle(int device) {
  auto it = cublas_handles.find(device);
  if (it == cublas_handles.end()) {
    cublasHandle_t h = nullptr;
    DDL_CUBLAS_CHECK(cublas().create(&h), "cuda:", device, ": creating the cuBLAS handle");
    it = cublas_handles.emplace(device, h).first;
  }
  cublasHandle_t h = it->second;
  const cudaStream_t stream = current_stream(device);
  DDL_CUBLAS_CHECK(cublas().set_stream(h, stream), "cuda:", device, ": binding cuBLAS to the stream");
  // See Note [cuBLAS workspace per stream].
  auto ws = cublas_workspaces.find({h, stream});
  if (ws == cublas_workspaces.end())
    ws = cublas_workspaces.emplace(std::pair{h, stream}, workspace(device, cublas_workspace_bytes(device))).first;
  DDL_CUBLAS_CHECK(cublas().set_workspace(h, ws->second.raw_data(), ws->second.nbytes()), "cuda:", device,
                   ": setting the cuBLAS workspace of the stream");
  return h;
}

cudnnHandle_t cudnn_handle(int device) {
  auto it = cudnn_handles.find(device);
  if (it == cudnn_handles.end()) {
    cudnnHandle_t h = nullptr;
    DDL_CUDNN_CHECK(cudnnCreate(&h), "cuda:", device, ": creating the cuDNN handle");
    it = cudnn_handles.emplace(device, h).first;
  }
  DDL_CUDNN_CHECK(cudnnSetStream(it->second, current_stream(device)), "cuda:", device, ": binding cuDNN to the stream");
  return it->second;
}

cudnnDataType_t cudnn_dtype(DType t, const char* op) {
  switch (t) {
    case DType::Float32:
      return CUDNN_DATA_FLOAT;
    case DType::Float64:
      return CUDNN_DATA_DOUBLE;
    case DType::Float16:
      return CUDNN_DATA_HALF;
    case DType::BFloat16:
      return CUDNN_DATA_BFLOAT16;
    default:
      DDL_CHECK(false, op, ": cuDNN kernels take float32, float64, float16 or bfloat16, got ", t);
  }
}

int to_int(int64_t v, const char* op, const char* what) {
  DDL_CHECK(v >= 0 && v <= INT_MAX, op, ": ", what, " = ", v,
            " does not fit the 32-bit int of the cuBLAS/cuDNN API (split the batch)");
  return static_cast<int>(v);
}

std::string dims_str(const std::array<int64_t, 4>& d) {
  return ::ddl::detail::str_cat('[', d[0], ", ", d[1], ", ", d[2], ", ", d[3], ']');
}

TensorDesc::TensorDesc(DType t, const std::array<int64_t, 4>& d, const char* op) {
  // Legacy descriptors take int strides: the whole tensor must be int-indexable.
  // Arguments are checked before creating, so a throw leaks nothing.
  to_int(d[0] * d[1] * d[2] * d[3], op, "tensor elements");
  const int n = to_int(d[0], op, "N"), c = to_int(d[1], op, "C"), h = to_int(d[2], op, "H"), w = to_int(d[3], op, "W");
  const cudnnDataType_t dt = cudnn_dtype(t, op);
  DDL_CUDNN_CHECK(cudnnCreateTensorDescriptor(&desc_), op);
  const cudnnStatus_t st = cudnnSetTensor4dDescriptor(desc_, CUDNN_TENSOR_NCHW, dt, n, c, h, w);
  if (st != CUDNN_STATUS_SUCCESS) {
    cudnnDestroyTensorDescriptor(desc_);
    throw_cudnn(st, "cudnnSetTensor4dDescriptor", ::ddl::detail::str_cat(op, ": tensor ", dims_str(d)), __FILE__,
                __LINE__);
  }
}

TensorDesc::~TensorDesc() { cudnnDestroyTensorDescriptor(desc_); }

FilterDesc::FilterDesc(DType t, const std::array<int64_t, 4>& d, const char* op) {
  const int k = to_int(d[0], op, "K"), c = to_int(d[1], op, "C/groups"), r = to_int(d[2], op, "R"),
            s = to_int(d[3], op, "S");
  const cudnnDataType_t dt = cudnn_dtype(t, op);
  DDL_CUDNN_CHECK(cudnnCreateFilterDescriptor(&desc_), op);
  const cudnnStatus_t st = cudnnSetFilter4dDescriptor(desc_, dt, CUDNN_TENSOR_NCHW, k, c, r, s);
  if (st != CUDNN_STATUS_SUCCESS) {
    cudnnDestroyFilterDescriptor(desc_);
    throw_cudnn(st, "cudnnSetFilter4dDescriptor", ::ddl::detail::str_cat(op, ": weight ", dims_str(d)), __FILE__,
                __LINE__);
  }
}

FilterDesc::~FilterDesc() { cudnnDestroyFilterDescriptor(desc_); }

ConvDesc::ConvDesc(const ConvKey& k) {
  const char* op = "conv2d";
  const int ph = to_int(k.padding[0], op, "padding"), pw = to_int(k.padding[1], op, "padding");
  const int sh = to_int(k.stride[0], op, "stride"), sw = to_int(k.stride[1], op, "stride");
  const int dh = to_int(k.dilation[0], op, "dilation"), dw = to_int(k.dilation[1], op, "dilation");
  const int groups = to_int(k.groups, op, "groups");
  const cudnnDataType_t dt = cudnn_dtype(k.dtype, op);
  DDL_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&desc_), op);
  // Compute in the data type: float32 accumulates in float32 (as cuBLAS does), float64 in float64;
  // 16-bit data accumulates in float32 (cuDNN's PSEUDO_HALF/PSEUDO_BFLOAT16 configurations).
  const cudnnDataType_t compute = is_reduced_float(k.dtype) ? CUDNN_DATA_FLOAT : dt;
  cudnnStatus_t st = cudnnSetConvolution2dDescriptor(desc_, ph, pw, sh, sw, dh, dw, CUDNN_CROSS_CORRELATION, compute);
  if (st == CUDNN_STATUS_SUCCESS) st = cudnnSetConvolutionGroupCount(desc_, groups);
  if (st != CUDNN_STATUS_SUCCESS) {
    cudnnDestroyConvolutionDescriptor(desc_);
    throw_cudnn(st, "cudnnSetConvolution2dDescriptor",
                ::ddl::detail::str_cat(op, ": input ", dims_str(k.x), ", weight ", dims_str(k.w)), __FILE__, __LINE__);
  }
}

ConvDesc::~ConvDesc() { cudnnDestroyConvolutionDescriptor(desc_); }

void ConvDesc::set_math(cudnnMathType_t m, const char* op) {
  DDL_CUDNN_CHECK(cudnnSetConvolutionMathType(desc_, m), op, ": math type ", static_cast<int>(m));
}

size_t ConvKeyHash::operator()(const ConvKey& k) const noexcept {
  size_t h = 1469598103934665603ull;
  auto mix = [&h](int64_t v) { h = (h ^ static_cast<size_t>(v)) * 1099511628211ull; };
  mix(k.device), mix(static_cast<int64_t>(k.dtype)), mix(static_cast<int64_t>(k.pass)), mix(k.tf32);
  for (const auto* a : {&k.x, &k.w, &k.y})
    for (int64_t v : *a) mix(v);
  for (const auto* a : {&k.stride, &k.padding, &k.dilation})
    for (int64_t v : *a) mix(v);
  mix(k.groups);
  return h;
}

namespace {
struct AlgoCache {
  std::mutex mu;
  std::unordered_map<ConvKey, ConvAlgo, ConvKeyHash> map;
  int64_t searches = 0;
};
AlgoCache& algo_cache() {
  static AlgoCache* cache = new AlgoCache;  // leaked: kernels may run during static destruction
  return *cache;
}
}  // namespace

int64_t conv_algo_searches() {
  AlgoCache& c = algo_cache();
  std::lock_guard<std::mutex> lock(c.mu);
  return c.searches;
}

ConvAlgo cached_conv_algo(const ConvKey& key, const std::function<ConvAlgo()>& search) {
  AlgoCache& c = algo_cache();
  {
    std::lock_guard<std::mutex> lock(c.mu);
    auto it = c.map.find(key);
    if (it != c.map.end()) return it->second;
  }
  // Searched outside the lock (it allocates and calls cuDNN); if two threads
  // race on one key, the first entry stays and both answers are valid.
  const ConvAlgo found = search();
  std::lock_guard<std::mutex> lock(c.mu);
  ++c.searches;
  return c.map.emplace(key, found).first->second;
}

Tensor workspace(int device, size_t bytes) {
  if (bytes == 0) return Tensor();
  return empty({static_cast<int64_t>(bytes)}, TensorOptions(DType::UInt8, Device::cuda(device)));
}

}  // namespace ddl::cuda::detail
