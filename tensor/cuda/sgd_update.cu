// CUDA sgd_update_: one grid-stride launch per parameter instead of the ~4
// elementwise ops (and their temporaries) of the composite, since a step of a
// small network is bound by launch overhead. Only contiguous operands of one
// float dtype come here (tensor/ops/sgd_update.cpp falls back otherwise).

#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/cuda/common.h>
#include <ddl/tensor/cuda/half_compute.h>
#include <ddl/tensor/ops/sgd_update.h>

namespace ddl::cuda::detail {
namespace {

// The scalars in the compute type, as the elementwise ops convert their alphas.
template <typename C>
struct SgdArgs {
  C neg_lr, momentum, one_minus_dampening, weight_decay;
  bool decay, first, nesterov;
};

// Note [Fused SGD arithmetic]
// Each line is one op of the composite (tensor/ops/sgd_update.cpp), in its order:
// add(g, w, wd), buf.mul_(m).add_(d, 1 - dampening), add(d, buf, m), w.add_(d, -lr).
// nvcc contracts a * b + c into one FMA (its default -fmad=true), so float32 and
// float64 results may differ from the CPU's in the last bit. 16-bit values load as
// float and only the stored buf and w are rounded, once each (Note [Half compute]);
// the composite rounds every intermediate, so those differ by a few 16-bit roundings
// (Note [Fused SGD tolerance] in tests/cuda/test_cuda_sgd.cpp).
// w, g, buf: [n] contiguous; buf is null when momentum is 0.
template <typename T>
__global__ void sgd_step_kernel(T* w, const T* g, T* buf, int64_t n, SgdArgs<ComputeT<T>> a) {
  using C = ComputeT<T>;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const C wi = static_cast<C>(w[i]);
    C d = static_cast<C>(g[i]);
    if (a.decay) d = d + a.weight_decay * wi;
    if (buf != nullptr) {
      const C b = a.first ? d : static_cast<C>(buf[i]) * a.momentum + a.one_minus_dampening * d;
      buf[i] = static_cast<T>(b);
      d = a.nesterov ? d + a.momentum * b : b;
    }
    w[i] = static_cast<T>(wi + a.neg_lr * d);
  }
}

template <typename T>
void launch(const Tensor& w, const Tensor& grad, const Tensor& buf, const SgdUpdate& o, bool first, cudaStream_t s) {
  using C = ComputeT<T>;
  const SgdArgs<C> a{static_cast<C>(-o.lr),
                     static_cast<C>(o.momentum),
                     static_cast<C>(1 - o.dampening),
                     static_cast<C>(o.weight_decay),
                     o.weight_decay != 0,
                     first,
                     o.nesterov};
  const int64_t n = w.numel();
  sgd_step_kernel<T><<<blocks_for(n), kBlockThreads, 0, s>>>(w.data<T>(), grad.data<T>(),
                                                             buf.defined() ? buf.data<T>() : nullptr, n, a);
  DDL_CUDA_KERNEL_CHECK();
}

// w, grad, a defined momentum_buffer: contiguous, one float dtype (the frontend's checks).
void sgd_update_cuda(const Tensor& w, const Tensor& grad, Tensor& momentum_buffer, const SgdUpdate& o) {
  const int device = w.device().index;
  DeviceGuard guard(device);
  const bool first = o.momentum != 0 && !momentum_buffer.defined();
  if (first) momentum_buffer = empty(w.shape(), TensorOptions(w.dtype(), w.device()));
  if (w.numel() == 0) return;
  const cudaStream_t s = current_stream(device);
  dispatch_float_and_half(w.dtype(), "sgd_update_",
                          [&](auto tag) { launch<decltype(tag)>(w, grad, momentum_buffer, o, first, s); });
}

}  // namespace

DDL_REGISTER_KERNEL(kernels::sgd_update_kernel, CUDA, &sgd_update_cuda);

}  // namespace ddl::cuda::detail
