// CUDA conv2d kernels on cuDNN's legacy convolution API: forward (plus a
// broadcast bias add), input gradient (BackwardData) and weight gradient
// (BackwardFilter), for float32 and float64, any stride, padding, dilation and
// groups. Algorithms come from the shape cache, see Note [Conv algorithm cache].
#include <string>
#include <vector>

#include "tensor/conv.h"
#include "tensor/cuda/dnn.h"
#include "tensor/cuda/runtime.h"
#include "tensor/devices.h"

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

// Picks from cuDNN's heuristic ranking (best first): the first algorithm that
// succeeded, runs in the requested math type, is deterministic if any such is,
// and whose workspace can be allocated now; that workspace is handed back in
// `ws` for the first call. perf: cudnnConvolution*AlgoPerf_t.
template <typename Perf>
ConvAlgo pick(const ConvKey& k, const std::vector<Perf>& perf, int count, Tensor& ws) {
  const cudnnMathType_t math = requested_math(k);
  std::string alloc_error;
  for (bool need_deterministic : {true, false}) {
    for (int i = 0; i < count; ++i) {
      const Perf& r = perf[static_cast<size_t>(i)];
      if (r.status != CUDNN_STATUS_SUCCESS) continue;
      if (math == CUDNN_FMA_MATH && r.mathType != CUDNN_FMA_MATH) continue;
      if (need_deterministic && r.determinism != CUDNN_DETERMINISTIC) continue;
      if (r.memory >= (size_t(1) << 40)) continue;  // cuDNN sometimes reports absurd sizes
      try {
        ws = workspace(k.device, r.memory);
      } catch (const ddl::Error& e) {
        alloc_error = e.what();  // too large for the memory left: try the next algorithm
        continue;
      }
      return {static_cast<int>(r.algo), r.mathType, r.memory};
    }
  }
  DDL_CHECK(false, describe_conv(k), ": cuDNN offers no usable algorithm (", count, " candidates)",
            alloc_error.empty() ? "" : "; last workspace allocation failed: ", alloc_error);
  return {};
}

ConvAlgo search(const ConvKey& k, cudnnHandle_t h, const ConvDescs& d, Tensor& ws) {
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
      return pick(k, perf, count, ws);
    }
    case ConvPass::BackwardData: {
      DDL_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(h, &max_count), what);
      std::vector<cudnnConvolutionBwdDataAlgoPerf_t> perf(static_cast<size_t>(max_count));
      DDL_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(h, d.w.get(), d.y.get(), d.conv.get(), d.x.get(),
                                                                  max_count, &count, perf.data()),
                      what);
      return pick(k, perf, count, ws);
    }
    case ConvPass::BackwardFilter: {
      DDL_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(h, &max_count), what);
      std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> perf(static_cast<size_t>(max_count));
      DDL_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, d.x.get(), d.y.get(), d.conv.get(), d.w.get(),
                                                                    max_count, &count, perf.data()),
                      what);
      return pick(k, perf, count, ws);
    }
  }
  return {};
}

// Everything one pass needs: handle, descriptors (math type set), algorithm, workspace.
// After a search only the chosen algorithm's workspace stays: the probe's block is the
// one this call uses, and the segments cached by the search (rejected probes, the
// allocator's retries) are returned to the driver. That costs a device sync, once per
// new convolution shape (the choice is cached).
struct ConvCall {
  ConvKey key;
  cudnnHandle_t h;
  ConvDescs d;
  ConvAlgo algo;
  Tensor ws;
  explicit ConvCall(const ConvKey& k) : key(k), h(cudnn_handle(k.device)), d(k) {
    bool searched = false;
    algo = cached_conv_algo(k, [&] {
      searched = true;
      return search(k, h, d, ws);
    });
    if (searched) ::ddl::detail::cuda_empty_cache(k.device);  // ws is held: it stays
    if (!ws.defined() || ws.nbytes() < algo.workspace_bytes) ws = workspace(k.device, algo.workspace_bytes);
    d.conv.set_math(algo.math, pass_name(k.pass));
  }
  void* ws_ptr() const { return ws.defined() ? ws.raw_data() : nullptr; }
};

// x: [N, C, H, W], w: [K, C/G, R, S], bias: [K] or undefined, y: [N, K, P, Q]
void conv2d_forward_cuda(const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& y, const Conv2dParams& p) {
  DeviceGuard guard(x.device().index);
  const ConvCall c(make_key(ConvPass::Forward, x, w, y, p));
  const Blend s;
  const DType t = x.dtype();
  DDL_CUDNN_CHECK(cudnnConvolutionForward(c.h, s.one(t), c.d.x.get(), x.raw_data(), c.d.w.get(), w.raw_data(),
                                          c.d.conv.get(), static_cast<cudnnConvolutionFwdAlgo_t>(c.algo.algo),
                                          c.ws_ptr(), c.algo.workspace_bytes, s.zero(t), c.d.y.get(), y.raw_data()),
                  describe_conv(c.key), ", algorithm ", c.algo.algo);
  if (bias.defined() && is_reduced_float(t)) {
    // 16-bit y: the bias is added by the elementwise add (float32 math, rounded once), as PyTorch
    // adds it after cuDNN's convolution, instead of relying on cudnnAddTensor's 16-bit support.
    y.add_(bias.reshape({1, bias.size(0), 1, 1}));
  } else if (bias.defined()) {  // y += bias broadcast over [N, ., P, Q]
    const TensorDesc bd(t, {1, bias.size(0), 1, 1}, "conv2d");
    DDL_CUDNN_CHECK(cudnnAddTensor(c.h, s.one(t), bd.get(), bias.raw_data(), s.one(t), c.d.y.get(), y.raw_data()),
                    describe_conv(c.key), ": adding bias [", bias.size(0), "]");
  }
}

// gy: [N, K, P, Q], w: [K, C/G, R, S], gx: [N, C, H, W]
void conv2d_backward_input_cuda(const Tensor& gy, const Tensor& w, const Tensor& gx, const Conv2dParams& p) {
  DeviceGuard guard(gy.device().index);
  const ConvCall c(make_key(ConvPass::BackwardData, gx, w, gy, p));
  const Blend s;
  const DType t = gy.dtype();
  DDL_CUDNN_CHECK(
      cudnnConvolutionBackwardData(c.h, s.one(t), c.d.w.get(), w.raw_data(), c.d.y.get(), gy.raw_data(), c.d.conv.get(),
                                   static_cast<cudnnConvolutionBwdDataAlgo_t>(c.algo.algo), c.ws_ptr(),
                                   c.algo.workspace_bytes, s.zero(t), c.d.x.get(), gx.raw_data()),
      describe_conv(c.key), ", algorithm ", c.algo.algo);
}

// gy: [N, K, P, Q], x: [N, C, H, W], gw: [K, C/G, R, S]
void conv2d_backward_weight_cuda(const Tensor& gy, const Tensor& x, const Tensor& gw, const Conv2dParams& p) {
  DeviceGuard guard(gy.device().index);
  const ConvCall c(make_key(ConvPass::BackwardFilter, x, gw, gy, p));
  const Blend s;
  const DType t = gy.dtype();
  DDL_CUDNN_CHECK(
      cudnnConvolutionBackwardFilter(c.h, s.one(t), c.d.x.get(), x.raw_data(), c.d.y.get(), gy.raw_data(),
                                     c.d.conv.get(), static_cast<cudnnConvolutionBwdFilterAlgo_t>(c.algo.algo),
                                     c.ws_ptr(), c.algo.workspace_bytes, s.zero(t), c.d.w.get(), gw.raw_data()),
      describe_conv(c.key), ", algorithm ", c.algo.algo);
}

}  // namespace

using kernels::conv2d_backward_input_kernel;
using kernels::conv2d_backward_weight_kernel;
using kernels::conv2d_forward_kernel;
DDL_REGISTER_KERNEL(conv2d_forward_kernel, CUDA, &conv2d_forward_cuda);
DDL_REGISTER_KERNEL(conv2d_backward_input_kernel, CUDA, &conv2d_backward_input_cuda);
DDL_REGISTER_KERNEL(conv2d_backward_weight_kernel, CUDA, &conv2d_backward_weight_cuda);

}  // namespace ddl::cuda::detail
