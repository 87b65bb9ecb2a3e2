// batch_norm frontend: checks shapes and dtypes, views x as [N, C, S], makes
// buffers contiguous and calls the device kernel (tensor/cpu/batch_norm.cpp);
// also batch norm + ReLU fused (tensor/ops/norm_relu.h), which shares the checks.
#include <initializer_list>

#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/ops/norm.h>
#include <ddl/tensor/ops/norm_relu.h>

namespace ddl::kernels {
DDL_DEFINE_KERNEL(batch_norm_forward_kernel, BatchNormForwardFn);
DDL_DEFINE_KERNEL(batch_norm_backward_kernel, BatchNormBackwardFn);
DDL_DEFINE_KERNEL(batch_norm_relu_forward_kernel, BatchNormForwardFn);
DDL_DEFINE_KERNEL(batch_norm_relu_backward_kernel, BatchNormReluBackwardFn);
}  // namespace ddl::kernels

namespace ddl {
namespace {

// The dtype of the [C] tensors: batch_norm_param_dtype(x), or for a 16-bit x its own dtype
// when they come in it (a model converted wholly with .to(bfloat16), which PyTorch also takes).
DType channel_dtype(const Tensor& x, std::initializer_list<const Tensor*> params) {
  if (is_reduced_float(x.dtype()))
    for (const Tensor* p : params)
      if (p->defined() && p->dtype() == x.dtype()) return x.dtype();
  return batch_norm_param_dtype(x.dtype());
}

// Checks an optional per-channel tensor: undefined, or [C] of dtype `want`.
void check_channel_param(const Tensor& p, const char* what, const Tensor& x, DType want, const char* op) {
  if (!p.defined()) return;
  const int64_t c = x.size(1);
  DDL_CHECK(p.dim() == 1 && p.size(0) == c, op, ": ", what, " must have shape [", c, "] for input ", x.shape(),
            ", got ", p.shape());
  DDL_CHECK(p.dtype() == want, op, ": ", what, " ", p.shape(), " is ", p.dtype(), " but a ", x.dtype(), " input ",
            x.shape(), " with these parameters needs ", want, " ", what,
            " (float16/bfloat16 inputs take float32 weight, bias and statistics, or all of them in the input's"
            " dtype; other inputs their own dtype)");
  DDL_CHECK(p.device() == x.device(), op, ": ", what, " is on ", p.device(), " but the input is on ", x.device());
}

// A defined [C] tensor contiguous and in float32 when it is 16-bit (Note [16-bit batch norm parameters]).
Tensor widened(const Tensor& p) {
  if (!p.defined()) return p;
  return is_reduced_float(p.dtype()) ? p.to(DType::Float32) : p.contiguous();
}

// x viewed as [N, C, S] with S the product of the trailing dims.
Tensor as_ncs(const Tensor& x) {
  const int64_t n = x.size(0), c = x.size(1);
  const int64_t s = c == 0 || n == 0 ? 1 : x.numel() / (n * c);
  return x.contiguous().view({n, c, s});
}

// relu: y = relu(bn(x)) (detail::batch_norm_relu).
BatchNormResult batch_norm_impl(const Tensor& x, const Tensor& weight, const Tensor& bias, Tensor running_mean,
                                Tensor running_var, bool training, double momentum, double eps, bool relu) {
  const char* op = "batch_norm";
  DDL_CHECK(x.defined(), op, ": input is undefined");
  DDL_CHECK(x.dim() >= 2, op, ": expected input of shape [N, C] or [N, C, *], got ", x.shape());
  DDL_CHECK(is_floating(x.dtype()), op, ": expected a float input, got ", x.dtype());
  const DType pdt = channel_dtype(x, {&weight, &bias, &running_mean, &running_var});
  check_channel_param(weight, "weight", x, pdt, op);
  check_channel_param(bias, "bias", x, pdt, op);
  check_channel_param(running_mean, "running_mean", x, pdt, op);
  check_channel_param(running_var, "running_var", x, pdt, op);
  DDL_CHECK(running_mean.defined() == running_var.defined(), op,
            ": running_mean and running_var must both be given or both be undefined");
  DDL_CHECK(eps >= 0.0, op, ": eps must be >= 0, got ", eps);
  const bool use_batch_stats = training || !running_mean.defined();
  // As PyTorch: one value per channel has no batch variance; none at all (an empty batch)
  // gives an empty output and leaves the running statistics alone.
  const int64_t per_channel = x.size(1) == 0 ? 0 : x.numel() / x.size(1);
  DDL_CHECK(!use_batch_stats || per_channel != 1, op,
            ": expected more than 1 value per channel when training, got input ", x.shape());

  const Tensor xc = as_ncs(x);
  const int64_t c = x.size(1);
  const TensorOptions popts{batch_norm_param_dtype(x.dtype()), x.device()};
  if (x.numel() == 0) return {empty(x.shape(), {x.dtype(), x.device()}), zeros({c}, popts), zeros({c}, popts)};
  BatchNormResult r{empty(xc.shape(), {x.dtype(), x.device()}), empty({c}, popts), empty({c}, popts)};
  // Kernels update running stats in contiguous float buffers; copy back into strided or
  // 16-bit ones (rounded once).
  Tensor rm = widened(running_mean), rv = widened(running_var);
  const Tensor w = widened(weight), b = widened(bias);
  auto* kernel =
      relu ? kernels::batch_norm_relu_forward_kernel(x.device()) : kernels::batch_norm_forward_kernel(x.device());
  kernel(xc, w, b, rm, rv, use_batch_stats, momentum, eps, r.y, r.save_mean, r.save_invstd);
  if (use_batch_stats && rm.defined()) {
    if (!rm.shares_storage(running_mean)) running_mean.copy_(rm);
    if (!rv.shares_storage(running_var)) running_var.copy_(rv);
  }
  r.y = r.y.view(x.shape());
  return r;
}

// y defined: grad_y is the gradient of y = relu(bn(x)) (detail::batch_norm_relu_backward).
BatchNormGrads batch_norm_backward_impl(const Tensor& grad_y, const Tensor& x, const Tensor& y, const Tensor& weight,
                                        const Tensor& save_mean, const Tensor& save_invstd, bool use_batch_stats,
                                        double eps, std::array<bool, 3> needs) {
  const char* op = "batch_norm_backward";
  DDL_CHECK(x.defined() && x.dim() >= 2, op, ": expected input of shape [N, C] or [N, C, *]");
  DDL_CHECK(grad_y.shape() == x.shape(), op, ": grad_y has shape ", grad_y.shape(), " but the input has ", x.shape());
  DDL_CHECK(grad_y.dtype() == x.dtype(), op, ": grad_y is ", grad_y.dtype(), " but the input is ", x.dtype());
  check_channel_param(weight, "weight", x, channel_dtype(x, {&weight}), op);
  DDL_CHECK(save_mean.defined() && save_invstd.defined(), op, ": save_mean and save_invstd are required");
  DDL_CHECK(eps >= 0.0, op, ": eps must be >= 0 (the forward's), got ", eps);
  check_channel_param(save_mean, "save_mean", x, batch_norm_param_dtype(x.dtype()), op);
  check_channel_param(save_invstd, "save_invstd", x, batch_norm_param_dtype(x.dtype()), op);

  const Tensor xc = as_ncs(x);
  const Tensor gc = grad_y.contiguous().view(xc.shape());
  const int64_t c = x.size(1);
  const TensorOptions popts{batch_norm_param_dtype(x.dtype()), x.device()};
  BatchNormGrads g;
  if (needs[0]) g.grad_input = empty(xc.shape(), {x.dtype(), x.device()});
  if (needs[1]) g.grad_weight = empty({c}, popts);
  if (needs[2]) g.grad_bias = empty({c}, popts);
  if (!needs[0] && !needs[1] && !needs[2]) return g;
  if (x.numel() == 0) {  // an empty batch: nothing to sum
    if (g.grad_weight.defined()) g.grad_weight.zero_();
    if (g.grad_bias.defined()) g.grad_bias.zero_();
  } else {
    const Tensor w = widened(weight);
    if (y.defined())
      kernels::batch_norm_relu_backward_kernel(x.device())(
          gc, xc, y.contiguous().view(xc.shape()), w, save_mean.contiguous(), save_invstd.contiguous(), use_batch_stats,
          eps, g.grad_input, g.grad_weight, g.grad_bias);
    else
      kernels::batch_norm_backward_kernel(x.device())(gc, xc, w, save_mean.contiguous(), save_invstd.contiguous(),
                                                      use_batch_stats, eps, g.grad_input, g.grad_weight, g.grad_bias);
  }
  if (g.grad_input.defined()) g.grad_input = g.grad_input.view(x.shape());
  if (weight.defined() && weight.dtype() != popts.dtype()) {  // 16-bit parameters: rounded once
    if (g.grad_weight.defined()) g.grad_weight = g.grad_weight.to(weight.dtype());
    if (g.grad_bias.defined()) g.grad_bias = g.grad_bias.to(weight.dtype());
  }
  return g;
}

}  // namespace

DType batch_norm_param_dtype(DType x) { return is_reduced_float(x) ? DType::Float32 : x; }

BatchNormResult batch_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, Tensor running_mean,
                           Tensor running_var, bool training, double momentum, double eps) {
  return batch_norm_impl(x, weight, bias, std::move(running_mean), std::move(running_var), training, momentum, eps,
                         false);
}

BatchNormGrads batch_norm_backward(const Tensor& grad_y, const Tensor& x, const Tensor& weight, const Tensor& save_mean,
                                   const Tensor& save_invstd, bool use_batch_stats, double eps,
                                   std::array<bool, 3> needs) {
  return batch_norm_backward_impl(grad_y, x, Tensor(), weight, save_mean, save_invstd, use_batch_stats, eps, needs);
}

namespace detail {

bool batch_norm_relu_fusable(const Tensor& x) {
  return x.defined() && x.device().is_cpu() && (x.dtype() == DType::Float32 || x.dtype() == DType::Float64);
}

BatchNormResult batch_norm_relu(const Tensor& x, const Tensor& weight, const Tensor& bias, Tensor running_mean,
                                Tensor running_var, bool training, double momentum, double eps) {
  DDL_CHECK(batch_norm_relu_fusable(x), "batch_norm_relu: expected a float32 or float64 CPU input, got ", x.dtype(),
            " on ", x.device());
  return batch_norm_impl(x, weight, bias, std::move(running_mean), std::move(running_var), training, momentum, eps,
                         true);
}

BatchNormGrads batch_norm_relu_backward(const Tensor& grad_y, const Tensor& x, const Tensor& y, const Tensor& weight,
                                        const Tensor& save_mean, const Tensor& save_invstd, bool use_batch_stats,
                                        double eps, std::array<bool, 3> needs) {
  DDL_CHECK(batch_norm_relu_fusable(x) && y.defined() && y.shape() == x.shape() && y.dtype() == x.dtype(),
            "batch_norm_relu_backward: expected a float32 or float64 CPU input and an output of its shape, got input ",
            x.shape(), " and output ", y.shape());
  return batch_norm_backward_impl(grad_y, x, y, weight, save_mean, save_invstd, use_batch_stats, eps, needs);
}

}  // namespace detail
}  // namespace ddl
