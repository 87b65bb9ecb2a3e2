// CUDA conv2d kernels on cuDNN's legacy convolution API: forward (plus a
// broadcast bias add), input gradient (BackwardData) and weight gradient
// (BackwardFilter), for float32 and float64, any stride, padding, dilation and
// groups. Algorithms come from the shape cache, see Note [Conv algorithm cache].
#include <algorithm>
#include <string>
#include <vector>

#include <ddl/tensor/core/devices.h>
#include <ddl/tensor/cuda/conv_algo_choice.h>
#include <ddl/tensor/cuda/dnn.h>
#include <ddl/tensor/ops/conv.h>

namespace ddl::cuda::detail {
namespace {

std::array<int64_t, 4> dims4(const Tensor& t) { return {t.size(0), t.size(1), t.size(2), t.size(3)}; }

ConvKey make_key(ConvPass pass, const Tensor& x, const Tensor& w, const Tensor& y, const Conv2dParams& p) {
  ConvKey k;
  k.device = x.device().index;
  k.dtype = x.dtype();
  k.pass = pass;
  k.tf32 = x.dtype() == DType::Float32 && allow_tf32();
  k.x = dims4(x), k.w = dims4(w), k.y = dims4(y);
  k.stride = p.stride, k.padding = p.padding, k.dilation = p.dilation, k.groups = p.groups;
  return k;
}

const char* pass_name(ConvPass pass) {
  switch (pass) {
    case ConvPass::Forward:
      return "conv2d";
    case ConvPass::BackwardData:
      return "conv2d_backward_input";
    case ConvPass::BackwardFilter:
      return "conv2d_backward_weight";
  }
  return "conv2d";
}

std::string describe_conv(const ConvKey& k) {
  return ::ddl::detail::str_cat(pass_name(k.pass), ": ", k.dtype, " input ", dims_str(k.x), ", weight ", dims_str(k.w),
                                ", output ", dims_str(k.y), ", stride [", k.stride[0], ", ", k.stride[1],
                                "], padding [", k.padding[0], ", ", k.padding[1], "], dilation [", k.dilation[0], ", ",
                                k.dilation[1], "], groups ", k.groups);
}

// The math type a search asks for: float32 without TF32 must use plain FMA
// (cuDNN's default math allows TF32 tensor cores on Ampere and later).
cudnnMathType_t requested_math(const ConvKey& k) {
  if (is_reduced_float(k.dtype)) return CUDNN_TENSOR_OP_MATH;  // 16-bit data: tensor cores, float32 accumulation
  return k.dtype == DType::Float32 && !k.tf32 ? CUDNN_FMA_MATH : CUDNN_DEFAULT_MATH;
}

// The descriptors of one convolution; the conv descriptor's math type is set
// to the chosen algorithm's (cuDNN picks kernels by algorithm and math type).
struct ConvDescs {
  TensorDesc x, y;
  FilterDesc w;
  ConvDesc conv;
  explicit ConvDescs(const ConvKey& k)
      : x(k.dtype, k.x, pass_name(k.pass)),
        y(k.dtype, k.y, pass_name(k.pass)),
        w(k.dtype, k.w, pass_name(k.pass)),
        conv(k) {
    conv.set_math(requested_math(k), pass_name(k.pass));
  }
};

// cuDNN's heuristic ranking (best first) reduced to the candidates worth trying:
// those that succeeded, run in the requested math type (never converting wider
// data to 16 bits) and report a sane workspace, the deterministic ones first. perf: cudnnConvolution*AlgoPerf_t.
template <typename Perf>
std::vector<ConvAlgo> usable(const ConvKey& k, const std::vector<Perf>& perf, int count) {
  const cudnnMathType_t math = requested_math(k);
  std::vector<ConvAlgo> out;
  for (bool deterministic : {true, false}) {
    for (int i = 0; i < count; ++i) {
      const Perf& r = perf[static_cast<size_t>(i)];
      if (r.status != CUDNN_STATUS_SUCCESS) continue;
      if (math == CUDNN_FMA_MATH && r.mathType != CUDNN_FMA_MATH) continue;
      // ALLOW_CONVERSION may run float32 data as float16: only for 16-bit data.
      if (r.mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION && !is_reduced_float(k.dtype)) continue;
      if ((r.determinism == CUDNN_DETERMINISTIC) != deterministic) continue;
      if (r.memory >= (size_t(1) << 40)) continue;  // cuDNN sometimes reports absurd sizes
      out.push_back({static_cast<int>(r.algo), r.mathType, r.memory});
    }
  }
  return out;
}

std::vector<ConvAlgo> candidates(const ConvKey& k, cudnnHandle_t h, const ConvDescs& d) {
  const std::string what = describe_conv(k);
  int max_count = 0, count = 0;
  switch (k.pass) {
    case ConvPass::Forward: {
      // cuDNN's output extent must be the one the frontend allocated.
      int n = 0, c = 0, oh = 0, ow = 0;
      DDL_CUDNN_CHECK(cudnnGetConvolution2dForwardOutputDim(d.conv.get(), d.x.get(), d.w.get(), &n, &c, &oh, &ow),
                      what);
      DDL_ASSERT(n == k.y[0] && c == k.y[1] && oh == k.y[2] && ow == k.y[3], what, ": cuDNN computes output [", n, ", ",
                 c, ", ", oh, ", ", ow, "]");
      DDL_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithmMaxCount(h, &max_count), what);
      std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(static_cast<size_t>(max_count));
      DDL_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(h, d.x.get(), d.w.get(), d.conv.get(), d.y.get(),
                                                             max_count, &count, perf.data()),
                      what);
      return usable(k, perf, count);
    }
    case ConvPass::BackwardData: {
      DDL_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(h, &max_count), what);
      std::vector<cudnnConvolutionBwdDataAlgoPerf_t> perf(static_cast<size_t>(max_count));
      DDL_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(h, d.w.get(), d.y.get(), d.conv.get(), d.x.get(),
                                                                  max_count, &count, perf.data()),
                      what);
      return usable(k, perf, count);
    }
    case ConvPass::BackwardFilter: {
      DDL_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(h, &max_count), what);
      std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> perf(static_cast<size_t>(max_count));
      DDL_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, d.x.get(), d.y.get(), d.conv.get(), d.w.get(),
                                                                    max_count, &count, perf.data()),
                      what);
      return usable(k, perf, count);
    }
  }
  return {};
}

// The workspace `algo` needs with the math type now set on d.conv.
cudnnStatus_t workspace_size(const ConvKey& k, cudnnHandle_t h, const ConvDescs& d, int algo, size_t* bytes) {
  switch (k.pass) {
    case ConvPass::Forward:
      return cudnnGetConvolutionForwardWorkspaceSize(h, d.x.get(), d.w.get(), d.conv.get(), d.y.get(),
                                                     static_cast<cudnnConvolutionFwdAlgo_t>(algo), bytes);
    case ConvPass::BackwardData:
      return cudnnGetConvolutionBackwardDataWorkspaceSize(h, d.w.get(), d.y.get(), d.conv.get(), d.x.get(),
                                                          static_cast<cudnnConvolutionBwdDataAlgo_t>(algo), bytes);
    case ConvPass::BackwardFilter:
      return cudnnGetConvolutionBackwardFilterWorkspaceSize(h, d.x.get(), d.y.get(), d.conv.get(), d.w.get(),
                                                            static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo), bytes);
  }
  return CUDNN_STATUS_BAD_PARAM;
}

void* ptr(const Tensor& ws) { return ws.defined() ? ws.raw_data() : nullptr; }

// " (CUDA: <error>)" when a CUDA error is pending, which this clears (a sticky
// one stays), else "": a failed cuDNN call may leave its launch's error behind,
// which the next kernel's DDL_CUDA_KERNEL_CHECK would report as its own.
std::string take_cuda_error() {
  const cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) return {};
  return ::ddl::detail::str_cat(" (CUDA: ", cudaGetErrorString(err), " (", static_cast<int>(err), "))");
}

// Runs the pass with each candidate in turn until one succeeds, and returns it
// (see conv_algo_choice.h). A candidate whose workspace cannot be allocated is
// passed over; the allocator has by then released its free cached segments and
// retried (Note [Caching allocator]), so nothing else is emptied here. After a
// failed candidate, a sticky CUDA error (this call's or earlier work's, e.g. an
// illegal address) is raised as what it is: every later candidate would fail.
template <typename Run>
ConvAlgo try_candidates(const ConvKey& k, cudnnHandle_t h, ConvDescs& d, const char* call, const Run& run) {
  const cudaStream_t stream = current_stream(k.device);  // the one cudnn_handle bound
  const auto attempt = [&](ConvAlgo& a) -> ConvTry {
    d.conv.set_math(a.math, pass_name(k.pass));
    size_t bytes = 0;
    const cudnnStatus_t st = workspace_size(k, h, d, a.algo, &bytes);
    if (st != CUDNN_STATUS_SUCCESS) return {static_cast<int>(st), "cudnnGetConvolution*WorkspaceSize"};
    a.workspace_bytes = std::max(a.workspace_bytes, bytes);  // the ranking's estimate, confirmed
    const Tensor ws = workspace(k.device, a.workspace_bytes);
    return {static_cast<int>(run(h, d, a, ptr(ws))), call};
  };
  const auto after_failure = [&](int, const char* failed) {
    std::string note = take_cuda_error();
    const cudaError_t now = cudaStreamQuery(stream);  // cudaErrorNotReady: work still queued, no error
    if (now != cudaSuccess && now != cudaErrorNotReady) {
      const std::string what = ::ddl::detail::str_cat(describe_conv(k), ": cudaStreamQuery after ", failed,
                                                      " (an error of this or earlier GPU work)");
      check(now, what.c_str(), __FILE__, __LINE__);
    }
    return note;
  };
  const auto status_name = [](int st) { return cudnnGetErrorString(static_cast<cudnnStatus_t>(st)); };
  return first_that_runs(candidates(k, h, d), describe_conv(k), attempt, after_failure, status_name);
}

// Runs one pass. On a key's first call the candidates are tried in order and
// only the one that ran is cached; later calls run the cached one (see Note
// [Conv algorithm cache]). run(h, descs, algo, workspace) makes the
// cudnnConvolution* call named `call` and returns its status.
template <typename Run>
void run_conv(const ConvKey& k, const char* call, const Run& run) {
  // An error left by earlier work would fail every candidate (and a non-sticky
  // one just the first, caching the second for good): raise it as what it is.
  if (const cudaError_t pending = cudaPeekAtLastError(); pending != cudaSuccess) {
    const std::string what = ::ddl::detail::str_cat(pass_name(k.pass), ": an error pending before the call, from ",
                                                    "earlier GPU work: cudaPeekAtLastError()");
    check(pending, what.c_str(), __FILE__, __LINE__);
  }
  cudnnHandle_t h = cudnn_handle(k.device);
  ConvDescs d(k);
  bool ran = false;
  const ConvAlgo algo = cached_conv_algo(k, [&] {
    ran = true;
    return try_candidates(k, h, d, call, run);
  });
  if (ran) return;
  d.conv.set_math(algo.math, pass_name(k.pass));
  const Tensor ws = workspace(k.device, algo.workspace_bytes);
  const cudnnStatus_t st = run(h, d, algo, ptr(ws));
  if (st != CUDNN_STATUS_SUCCESS)
    throw_cudnn(st, call, ::ddl::detail::str_cat(describe_conv(k), ", algorithm ", algo.algo, take_cuda_error()),
                __FILE__, __LINE__);
}

// x: [N, C, H, W], w: [K, C/G, R, S], bias: [K] or undefined, y: [N, K, P, Q]
void conv2d_forward_cuda(const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& y, const Conv2dParams& p) {
  DeviceGuard guard(x.device().index);
  const ConvKey key = make_key(ConvPass::Forward, x, w, y, p);
  const Blend s;
  const DType t = x.dtype();
  run_conv(key, "cudnnConvolutionForward", [&](cudnnHandle_t h, const ConvDescs& d, const ConvAlgo& a, void* ws) {
    return cudnnConvolutionForward(h, s.one(t), d.x.get(), x.raw_data(), d.w.get(), w.raw_data(), d.conv.get(),
                                   static_cast<cudnnConvolutionFwdAlgo_t>(a.algo), ws, a.workspace_bytes, s.zero(t),
                                   d.y.get(), y.raw_data());
  });
  if (bias.defined() && is_reduced_float(t)) {
    // 16-bit y: the bias is added by the elementwise add (float32 math, rounded once), as PyTorch
    // adds it after cuDNN's convolution, instead of relying on cudnnAddTensor's 16-bit support.
    y.add_(bias.reshape({1, bias.size(0), 1, 1}));
  } else if (bias.defined()) {  // y += bias broadcast over [N, ., P, Q]
    const TensorDesc bd(t, {1, bias.size(0), 1, 1}, "conv2d"), yd(t, key.y, "conv2d");
    DDL_CUDNN_CHECK(
        cudnnAddTensor(cudnn_handle(key.device), s.one(t), bd.get(), bias.raw_data(), s.one(t), yd.get(), y.raw_data()),
        describe_conv(key), ": adding bias [", bias.size(0), "]");
  }
}

// gy: [N, K, P, Q], w: [K, C/G, R, S], gx: [N, C, H, W]
void conv2d_backward_input_cuda(const Tensor& gy, const Tensor& w, const Tensor& gx, const Conv2dParams& p) {
  DeviceGuard guard(gy.device().index);
  const Blend s;
  const DType t = gy.dtype();
  run_conv(make_key(ConvPass::BackwardData, gx, w, gy, p), "cudnnConvolutionBackwardData",
           [&](cudnnHandle_t h, const ConvDescs& d, const ConvAlgo& a, void* ws) {
             return cudnnConvolutionBackwardData(h, s.one(t), d.w.get(), w.raw_data(), d.y.get(), gy.raw_data(),
                                                 d.conv.get(), static_cast<cudnnConvolutionBwdDataAlgo_t>(a.algo), ws,
                                                 a.workspace_bytes, s.zero(t), d.x.get(), gx.raw_data());
           });
}

// gy: [N, K, P, Q], x: [N, C, H, W], gw: [K, C/G, R, S]
void conv2d_backward_weight_cuda(const Tensor& gy, const Tensor& x, const Tensor& gw, const Conv2dParams& p) {
  DeviceGuard guard(gy.device().index);
  const Blend s;
  const DType t = gy.dtype();
  run_conv(make_key(ConvPass::BackwardFilter, x, gw, gy, p), "cudnnConvolutionBackwardFilter",
           [&](cudnnHandle_t h, const ConvDescs& d, const ConvAlgo& a, void* ws) {
             return cudnnConvolutionBackwardFilter(h, s.one(t), d.x.get(), x.raw_data(), d.y.get(), gy.raw_data(),
                                                   d.conv.get(), static_cast<cudnnConvolutionBwdFilterAlgo_t>(a.algo),
                                                   ws, a.workspace_bytes, s.zero(t), d.w.get(), gw.raw_data());
           });
}

}  // namespace

using kernels::conv2d_backward_input_kernel;
using kernels::conv2d_backward_weight_kernel;
using kernels::conv2d_forward_kernel;
DDL_REGISTER_KERNEL(conv2d_forward_kernel, CUDA, &conv2d_forward_cuda);
DDL_REGISTER_KERNEL(conv2d_backward_input_kernel, CUDA, &conv2d_backward_input_cuda);
DDL_REGISTER_KERNEL(conv2d_backward_weight_kernel, CUDA, &conv2d_backward_weight_cuda);

}  // namespace ddl::cuda::detail
