// prod, std, logsumexp and norm on Variables: forward and backward side by side. std and
// logsumexp are compositions (their double backward comes with them); prod's and norm's
// backward are written once for Tensors and Variables, as PyTorch's prod_backward and
// norm_backward (torch/csrc/autograd/FunctionsManual.cpp).
#include <cmath>
#include <limits>

#include <ddl/autograd/node.h>
#include <ddl/autograd/ops/elementwise.h>
#include <ddl/autograd/ops/join.h>
#include <ddl/autograd/ops/reduce.h>
#include <ddl/autograd/ops/reduce_more.h>
#include <ddl/autograd/ops/shape_ops.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/ops/elementwise.h>
#include <ddl/tensor/ops/join.h>
#include <ddl/tensor/ops/reduce.h>
#include <ddl/tensor/ops/scan.h>
#include <ddl/tensor/ops/shape_ops.h>

namespace ddl {

using autograd::make_result;
using Needs = std::vector<bool>;

namespace {

const Tensor& data_of(const Tensor& t) { return t; }
Tensor data_of(const Variable& v) { return v.data(); }

// The product of every element but the i-th along `dim`, for each i (x's shape). Tensors: two
// exclusive cumulative products; Variables: one differentiable prod per position, so the double
// backward with zeros in x stays exact (O(n^2), only when x holds a zero).
Tensor prod_others(const Tensor& x, int64_t dim) {
  const int64_t n = x.size(dim);
  if (n == 0) return x;
  Shape one = x.shape();
  one[dim] = 1;
  const Tensor ones_t = ones(one, TensorOptions(x.dtype(), x.device()));
  const Tensor left = cumprod(cat(std::vector<Tensor>{ones_t, x.narrow(dim, 0, n - 1)}, dim), dim);
  const Tensor right =
      flip(cumprod(cat(std::vector<Tensor>{ones_t, flip(x.narrow(dim, 1, n - 1), {dim})}, dim), dim), {dim});
  return mul(left, right);
}
Variable prod_others(const Variable& x, int64_t dim) {
  const int64_t n = x.size(dim);
  if (n == 0) return x;
  std::vector<Variable> parts;
  // left part times the right part multiplied from the right, in the order of the cumulative
  // products above (so the same products overflow)
  for (int64_t i = 0; i < n; ++i)
    parts.push_back(
        mul(prod(x.narrow(dim, 0, i), dim, true), prod(flip(x.narrow(dim, i + 1, n - i - 1), {dim}), dim, true)));
  return cat(parts, dim);
}

// d prod / dx for g and y already shaped as keepdim would (dim < 0: over every element).
template <typename T>
T prod_grad(const T& g, const T& x, const T& y, int64_t dim) {
  if (x.dim() == 0) return g;
  const Tensor zero = eq(data_of(x), 0.0);
  const int64_t zeros_n = to_vector<int64_t>(sum(zero))[0];
  if (zeros_n == 0) return mul(g, div(y, x));
  if (dim < 0) {
    if (zeros_n > 1) return T(zeros_like(data_of(x)));
    return mul(g, prod_others(x.reshape({x.numel()}), 0).reshape(x.shape()));
  }
  return mul(g, prod_others(x, dim));
}

Variable prod_var(const Variable& x, int64_t dim, bool all, bool keepdim) {
  Tensor y = all ? prod(x.data()) : prod(x.data(), dim, keepdim);
  const Shape s = x.shape();
  const int64_t d = (all || s.empty()) ? -1 : wrap_dim(dim, s.size(), "prod");
  // g and y with the reduced dim back as size 1 (or as [1, 1, ...] for the full product)
  const auto keep = [s, d, keepdim](auto t) {
    if (s.empty()) return t;
    if (d < 0) return t.reshape(Shape(std::vector<int64_t>(static_cast<size_t>(s.size()), 1)));
    return keepdim ? t : t.unsqueeze(d);
  };
  const Tensor yk = keep(y);
  return make_result(
      std::move(y), "ProdBackward", {&x},
      [x = x.data(), yk, keep, d](const Tensor& g, const Needs&) -> std::vector<Tensor> {
        return {prod_grad(keep(g), x, yk, d)};
      },
      [x, keep, d, all, keepdim](const Variable& g, const Needs&) -> std::vector<Variable> {
        const Variable y2 = all ? prod(x) : prod(x, d, true);
        return {prod_grad(keep(g), x, all ? keep(y2) : y2, d)};
      });
}

// torch.norm's gradient for g and y shaped as keepdim would; d: the wrapped dims.
template <typename T>
T norm_grad(const T& g, const T& x, const T& y, double p, const std::vector<int64_t>& d) {
  const Tensor xd = data_of(x);
  const T sgn = T(sign(xd));
  const auto masked = [&](const T& v) {  // v, 0 where the norm is 0
    return where(eq(data_of(y), 0.0), T(zeros_like(data_of(v))), v);
  };
  if (p == 0) return T(zeros_like(xd));
  if (p == 1) return mul(sgn, g);
  if (p == 2) return mul(x, masked(div(g, y)));
  if (std::isinf(p)) {
    // the extreme elements, and NaNs (which make the norm NaN), as PyTorch's norm_backward
    const Tensor hit = add(eq(abs(xd), data_of(y)).to(xd.dtype()), ne(xd, xd).to(xd.dtype()));
    const Tensor ties = d.empty() ? hit : sum(hit, d, true);
    return mul(mul(sgn, div(g, T(ties))), T(hit));
  }
  const T scale = masked(div(g, pow(y, p - 1)));
  if (p < 1) {
    const T scaled = mul(sgn, pow(abs(x), p - 1));
    return mul(where(eq(xd, 0.0), T(zeros_like(xd)), scaled), scale);
  }
  if (p < 2) return mul(mul(sgn, pow(abs(x), p - 1)), scale);
  return mul(mul(x, pow(abs(x), p - 2)), scale);
}

}  // namespace

Variable prod(const Variable& x) { return prod_var(x, 0, true, false); }
Variable prod(const Variable& x, int64_t dim, bool keepdim) { return prod_var(x, dim, false, keepdim); }

Variable std(const Variable& x, const std::vector<int64_t>& dims, int64_t correction, bool keepdim) {
  const Tensor xd = x.data();
  Tensor y = std(xd, dims, correction, keepdim);  // checks dtype and dims naming std
  const std::vector<int64_t> d = detail::reduce_dims(xd.shape(), dims, "std");
  const Shape kept = detail::reduced_shape(xd.shape(), d, true);
  int64_t n = 1;
  for (int64_t i : d) n *= xd.size(i);
  const double denom = static_cast<double>(std::max<int64_t>(n - correction, 0));
  // d std / d var = 1 / (2 std), taken as 0 where std is 0 (PyTorch's std_backward). A row of
  // equal values counts as std 0 even where var's float64 mean rounds (PyTorch's Welford gives 0).
  Tensor zero = eq(y.reshape(kept), 0.0);
  if (xd.numel() > 0 && !d.empty()) zero = add(zero, eq(amax(xd, d, true), amin(xd, d, true)));
  zero = ne(zero, 0.0);
  // d var / dx = 2 (x - mean) / (n - correction); a 0-d x with nothing left: g * inf, as var
  const auto var_grad = [denom, d](const auto& gv, const auto& x64) {
    if (d.empty() && denom == 0.0) return mul(gv, std::numeric_limits<double>::infinity());
    return mul(mul(gv, sub(x64, d.empty() ? x64 : mean(x64, d, true))), 2.0 / denom);
  };
  return make_result(
      std::move(y), "StdBackward", {&x},
      [xd, kept, zero, d, correction, var_grad](const Tensor& g, const Needs&) -> std::vector<Tensor> {
        // in float64, as the forward (Note [Variance in float64] in tensor/ops/reduce.cpp)
        const Tensor x64 = xd.to(DType::Float64);
        const Tensor y64 = sqrt(var(x64, d, correction, true));
        const Tensor gv =
            where(zero, zeros(kept, DType::Float64), div(g.reshape(kept).to(DType::Float64), mul(y64, 2.0)));
        return {var_grad(gv, x64).to(xd.dtype())};
      },
      [x, kept, zero, d, correction, var_grad](const Variable& g, const Needs&) -> std::vector<Variable> {
        // var replaced by 1 where std counts as 0, so no inf or NaN reaches the double backward
        const Variable x64 = x.to(DType::Float64);  // as the first-order form
        const Variable v = var(x64, d, correction, true);
        const Variable y = sqrt(where(zero, Variable(ones_like(v.data())), v));
        const Variable gv =
            where(zero, Variable(zeros_like(y.data())), div(g.reshape(kept).to(DType::Float64), mul(y, 2.0)));
        return {var_grad(gv, x64).to(x.dtype())};
      });
}

Variable logsumexp(const Variable& x, const std::vector<int64_t>& dims, bool keepdim) {
  const Tensor xd = x.data();
  Tensor y = logsumexp(xd, dims, keepdim);  // checks; the integer forms are constants
  if (!is_floating(xd.dtype())) return Variable(y);
  // 16-bit inputs work in float32, as the Tensor form
  if (xd.dtype() == DType::Float16 || xd.dtype() == DType::BFloat16)
    return logsumexp(x.to(DType::Float32), dims, keepdim).to(xd.dtype());
  const std::vector<int64_t> d = detail::reduce_dims(xd.shape(), dims, "logsumexp");
  const Shape kept = detail::reduced_shape(xd.shape(), d, true);
  const Tensor yk = y.reshape(kept);
  // g * exp(x - logsumexp(x)), PyTorch's formula (its rounding too)
  return make_result(
      std::move(y), "LogsumexpBackward", {&x},
      [xd, yk, kept](const Tensor& g, const Needs&) -> std::vector<Tensor> {
        return {mul(g.reshape(kept), exp(sub(xd, yk)))};
      },
      [x, kept, d](const Variable& g, const Needs&) -> std::vector<Variable> {
        return {mul(g.reshape(kept), exp(sub(x, logsumexp(x, d, true))))};
      });
}

Variable norm(const Variable& x, double p, const std::vector<int64_t>& dims, bool keepdim) {
  Tensor y = norm(x.data(), p, dims, keepdim);
  const std::vector<int64_t> d = detail::reduce_dims(x.shape(), dims, "norm");
  const Shape kept = detail::reduced_shape(x.shape(), d, true);
  const Tensor yk = y.reshape(kept);
  return make_result(
      std::move(y), "NormBackward", {&x},
      [x = x.data(), yk, kept, p, d](const Tensor& g, const Needs&) -> std::vector<Tensor> {
        return {norm_grad(g.reshape(kept), x, yk, p, d)};
      },
      [x, kept, p, d](const Variable& g, const Needs&) -> std::vector<Variable> {
        return {norm_grad(g.reshape(kept), x, norm(x, p, d, true), p, d)};
      });
}

Tensor all(const Variable& x) { return all(x.data()); }
Tensor all(const Variable& x, int64_t dim, bool keepdim) { return all(x.data(), dim, keepdim); }
Tensor any(const Variable& x) { return any(x.data()); }
Tensor any(const Variable& x, int64_t dim, bool keepdim) { return any(x.data(), dim, keepdim); }
bool equal(const Variable& a, const Variable& b) { return equal(a.data(), b.data()); }

}  // namespace ddl
