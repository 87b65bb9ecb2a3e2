// Instance norm as batch norm over [1, N*C, *] (as ATen's instance_norm does, so the
// statistics and their gradients are batch_norm's), and local response norm as
// PyTorch's functional form: a zero-padded moving average of x^2 across channels.
#include <ddl/autograd/ops/elementwise.h>
#include <ddl/autograd/ops/join.h>
#include <ddl/autograd/ops/norm.h>
#include <ddl/autograd/ops/norm_more.h>
#include <ddl/autograd/ops/shape_ops.h>
#include <ddl/tensor/ops.h>

namespace ddl {

namespace {
// A [C] parameter repeated once per sample, so sample n's channel c is channel n*C + c.
Variable per_instance(const Variable& p, int64_t n) { return p.defined() ? repeat(p.reshape({-1}), {n}) : p; }
Tensor per_instance(const Tensor& p, int64_t n) { return p.defined() ? repeat(p.reshape({-1}), {n}) : p; }

void check_param(const char* what, bool defined, const Shape& shape, int64_t numel, int64_t c) {
  if (!defined) return;
  DDL_CHECK(shape.size() <= 1 && numel == c, "instance_norm: ", what, " should be [", c, "] (one per channel), got ",
            shape);
}

// batch_norm's dtype rule (tensor/ops/norm.h), checked here so that the message names instance_norm.
void check_dtype(const char* what, bool defined, DType t, DType x) {
  if (!defined) return;
  DDL_CHECK(t == batch_norm_param_dtype(x) || (is_reduced_float(x) && t == x), "instance_norm: ", what, " is ", t,
            " but a ", x, " input needs ", batch_norm_param_dtype(x), is_reduced_float(x) ? " (or its own dtype)" : "");
}
}  // namespace

Variable instance_norm(const Variable& x, Tensor running_mean, Tensor running_var, const Variable& weight,
                       const Variable& bias, bool use_input_stats, double momentum, double eps) {
  DDL_CHECK(x.dim() >= 2, "instance_norm: expected an input [N, C, *], got ", x.shape());
  DDL_CHECK(is_floating(x.dtype()), "instance_norm: expected a floating input, got ", x.dtype());
  int64_t spatial = 1;
  for (int64_t d = 2; d < x.dim(); ++d) spatial *= x.size(d);
  DDL_CHECK(!use_input_stats || spatial != 1, "instance_norm: expected more than 1 spatial element when training, got ",
            x.shape());
  DDL_CHECK(running_mean.defined() == running_var.defined(),
            "instance_norm: running_mean and running_var must both be given or both be undefined");
  const int64_t n = x.size(0), c = x.size(1);
  check_param("weight", weight.defined(), weight.defined() ? weight.shape() : Shape{},
              weight.defined() ? weight.numel() : 0, c);
  check_param("bias", bias.defined(), bias.defined() ? bias.shape() : Shape{}, bias.defined() ? bias.numel() : 0, c);
  check_param("running_mean", running_mean.defined(), running_mean.defined() ? running_mean.shape() : Shape{},
              running_mean.defined() ? running_mean.numel() : 0, c);
  check_param("running_var", running_var.defined(), running_var.defined() ? running_var.shape() : Shape{},
              running_var.defined() ? running_var.numel() : 0, c);
  check_dtype("weight", weight.defined(), weight.defined() ? weight.dtype() : x.dtype(), x.dtype());
  check_dtype("bias", bias.defined(), bias.defined() ? bias.dtype() : x.dtype(), x.dtype());
  check_dtype("running_mean", running_mean.defined(), running_mean.defined() ? running_mean.dtype() : x.dtype(),
              x.dtype());
  check_dtype("running_var", running_var.defined(), running_var.defined() ? running_var.dtype() : x.dtype(), x.dtype());
  DDL_CHECK(use_input_stats || running_mean.defined(),
            "instance_norm: use_input_stats=false needs running_mean and running_var");
  Shape flat = x.shape();
  flat[0] = 1;
  flat[1] = n * c;
  Tensor mean_rep = per_instance(running_mean, n), var_rep = per_instance(running_var, n);
  Variable y = batch_norm(x.reshape(flat), per_instance(weight, n), per_instance(bias, n), mean_rep, var_rep,
                          use_input_stats, momentum, eps);
  // Each sample updated its own copy of the running statistics; keep their mean.
  if (running_mean.defined() && n > 0) {
    running_mean.copy_(mean_rep.view({n, c}).mean(0).reshape(running_mean.shape()));
    running_var.copy_(var_rep.view({n, c}).mean(0).reshape(running_var.shape()));
  }
  return y.reshape(x.shape());
}

Variable local_response_norm(const Variable& x, int64_t size, double alpha, double beta, double k) {
  DDL_CHECK(x.dim() >= 3, "local_response_norm: expected a 3-D or higher input [N, C, *], got ", x.shape());
  DDL_CHECK(is_floating(x.dtype()), "local_response_norm: expected a floating input, got ", x.dtype());
  DDL_CHECK(size > 0, "local_response_norm: size must be positive, got ", size);
  if (x.numel() == 0) return x;
  const int64_t c = x.size(1), before = size / 2, after = (size - 1) / 2;
  Variable sq = x * x;
  std::vector<Variable> parts;
  Shape edge = x.shape();
  if (before > 0) {
    edge[1] = before;
    parts.emplace_back(zeros(edge, {x.dtype(), x.device()}));
  }
  parts.push_back(sq);
  if (after > 0) {
    edge[1] = after;
    parts.emplace_back(zeros(edge, {x.dtype(), x.device()}));
  }
  Variable padded = parts.size() == 1 ? sq : cat(parts, 1);
  // Window j of channel i covers padded channels i .. i + size - 1.
  Variable window = padded.narrow(1, 0, c);
  for (int64_t j = 1; j < size; ++j) window = window + padded.narrow(1, j, c);
  Variable div = pow(window * (alpha / static_cast<double>(size)) + k, beta);
  return x / div;
}

}  // namespace ddl
