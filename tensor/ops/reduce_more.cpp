// prod, std, logsumexp, norm, all, any, equal (tensor/ops/reduce_more.h): compositions of sum, amax,
// amin and var, except prod, a small host loop.
#include <cmath>
#include <limits>

#include <ddl/base/error.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/ops/elementwise.h>
#include <ddl/tensor/ops/reduce.h>
#include <ddl/tensor/ops/reduce_more.h>

namespace ddl {

namespace detail {

std::vector<int64_t> reduce_dims(const Shape& s, const std::vector<int64_t>& dims, const char* op) {
  std::vector<int64_t> out;
  if (dims.empty()) {
    for (int64_t i = 0; i < s.size(); ++i) out.push_back(i);
    return out;
  }
  std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(s.size(), 1)), false);
  for (int64_t d : dims) {
    const int64_t w = wrap_dim(d, s.size(), op);
    DDL_CHECK(!seen[w], op, ": dim ", w, " appears multiple times in the list of dims");
    seen[w] = true;
    if (s.size() > 0) out.push_back(w);
  }
  return out;
}

Shape reduced_shape(const Shape& s, const std::vector<int64_t>& dims, bool keepdim) {
  Shape out;
  for (int64_t i = 0; i < s.size(); ++i) {
    bool r = false;
    for (int64_t d : dims) r = r || d == i;
    if (!r)
      out.push_back(s[i]);
    else if (keepdim)
      out.push_back(1);
  }
  return out;
}

}  // namespace detail

namespace {

// Product along the last dim of a [rows, n] host buffer, in T (wrapping for int64 through uint64).
template <typename T, typename Acc>
std::vector<T> row_products(const std::vector<T>& v, int64_t rows, int64_t n) {
  std::vector<T> out(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    Acc p = 1;
    for (int64_t i = 0; i < n; ++i) p = static_cast<Acc>(p * static_cast<Acc>(v[r * n + i]));
    out[r] = static_cast<T>(p);
  }
  return out;
}

Tensor prod_impl(const Tensor& x, int64_t dim, bool all, bool keepdim) {
  DDL_CHECK(x.defined(), "prod: undefined tensor");
  const DType out_t = is_floating(x.dtype()) ? x.dtype() : DType::Int64;
  const Shape s = x.shape();
  std::vector<int64_t> dims;
  if (!all) dims = detail::reduce_dims(s, {dim}, "prod");
  Tensor h = x.to(Device::cpu());
  int64_t n = h.numel();
  if (!all && !dims.empty()) {
    // the reduced dim last, so each output element is one contiguous row
    std::vector<int64_t> perm;
    for (int64_t i = 0; i < s.size(); ++i)
      if (i != dims[0]) perm.push_back(i);
    perm.push_back(dims[0]);
    h = h.permute(perm);
    n = s[dims[0]];
  }
  const Shape out_shape = all ? Shape{} : detail::reduced_shape(s, dims, keepdim);
  const int64_t rows = out_shape.numel();
  Tensor r;
  if (is_floating(x.dtype())) {
    // float64 products rounded once: PyTorch's CPU kernel accumulates float in float, so this is
    // at least as close to the exact product.
    const std::vector<double> v = to_vector<double>(h.contiguous());
    r = from_vector(row_products<double, double>(v, rows, n), out_shape);
  } else {
    const std::vector<int64_t> v = to_vector<int64_t>(h.contiguous());
    r = from_vector(row_products<int64_t, uint64_t>(v, rows, n), out_shape);
  }
  return r.to(out_t).to(x.device());
}

// x as a float64 tensor for the norm forward (PyTorch's CPU reductions accumulate float in double).
void check_norm_input(const Tensor& x, const char* op) {
  DDL_CHECK(x.defined(), op, ": undefined tensor");
  DDL_CHECK(is_floating(x.dtype()), op, ": input dtype should be either floating point or complex, got ", describe(x));
}

Tensor all_any(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim, bool is_all, const char* op) {
  DDL_CHECK(x.defined(), op, ": undefined tensor");
  const std::vector<int64_t> d = detail::reduce_dims(x.shape(), dims, op);
  // all: no zero in the row; any: some non-zero (NaN != 0, so NaN counts as true)
  Tensor hits = is_all ? eq(x, 0.0) : ne(x, 0.0);
  Tensor counted = x.dim() == 0 ? hits.to(DType::Int64) : sum(hits, d, keepdim);
  Tensor r = is_all ? eq(counted, 0.0) : gt(counted, 0.0);
  return x.dtype() == DType::UInt8 ? r.to(DType::UInt8) : r;
}

}  // namespace

Tensor prod(const Tensor& x) { return prod_impl(x, 0, true, false); }
Tensor prod(const Tensor& x, int64_t dim, bool keepdim) { return prod_impl(x, dim, false, keepdim); }

Tensor std(const Tensor& x, const std::vector<int64_t>& dims, int64_t correction, bool keepdim) {
  DDL_CHECK(x.defined(), "std: undefined tensor");
  DDL_CHECK(is_floating(x.dtype()), "std: std and var only support floating point dtypes, got ", describe(x));
  detail::reduce_dims(x.shape(), dims, "std");
  // sqrt before rounding: the variance of large float32 values can pass float32's range
  return sqrt(var(x.to(DType::Float64), dims, correction, keepdim)).to(x.dtype());
}

Tensor logsumexp(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  DDL_CHECK(x.defined(), "logsumexp: undefined tensor");
  const std::vector<int64_t> d = detail::reduce_dims(x.shape(), dims, "logsumexp");
  // 16-bit inputs work in float32 (PyTorch has no 16-bit exp on the CPU); integers give float32.
  const DType out_t = (x.dtype() == DType::Float32 || x.dtype() == DType::Float64) ? x.dtype() : DType::Float32;
  const Tensor xw = x.to(out_t == DType::Float64 ? DType::Float64 : DType::Float32);
  const Shape out_shape = detail::reduced_shape(x.shape(), d, keepdim);
  if (x.numel() == 0 || d.empty()) {
    // nothing to shift by (empty: -inf) or nothing reduced (0-d: x itself)
    Tensor r = d.empty() ? xw : log(sum(exp(xw), d, keepdim));
    return (is_floating(x.dtype()) ? r.to(x.dtype()) : r).reshape(out_shape);
  }
  // m: the row's max, 0 where infinite (so inf - inf never makes a NaN), as PyTorch
  Tensor m = amax(xw, d, true);
  m = where(eq(abs(m), std::numeric_limits<double>::infinity()), zeros_like(m), m);
  Tensor r = add(log(sum(exp(sub(xw, m)), d, true)), m).reshape(out_shape);
  return is_floating(x.dtype()) ? r.to(x.dtype()) : r;
}

Tensor norm(const Tensor& x, double p, const std::vector<int64_t>& dims, bool keepdim) {
  check_norm_input(x, "norm");
  const std::vector<int64_t> d = detail::reduce_dims(x.shape(), dims, "norm");
  const Shape out_shape = detail::reduced_shape(x.shape(), d, keepdim);
  // no identity for a minimum or a negative power: PyTorch refuses to reduce over nothing
  DDL_CHECK(!(p < 0 || std::isinf(p)) || x.numel() != 0 || out_shape.numel() == 0, "norm: cannot compute the ", p,
            " norm on an empty tensor because the operation does not have an identity");
  const Tensor a = abs(x.to(DType::Float64));
  auto red = [&](const Tensor& t) { return d.empty() ? t : sum(t, d, keepdim); };
  Tensor r;
  if (p == 0) {
    r = red(ne(a, 0.0).to(DType::Float64));
  } else if (p == 1) {
    r = red(a);
  } else if (p == 2) {
    r = sqrt(red(mul(a, a)));
  } else if (std::isinf(p)) {
    if (x.numel() == 0) return zeros(out_shape, TensorOptions(x.dtype(), x.device()));  // nothing reduced
    r = d.empty() ? a : (p > 0 ? amax(a, d, keepdim) : amin(a, d, keepdim));
  } else {
    r = pow(red(pow(a, p)), 1.0 / p);
  }
  return r.reshape(out_shape).to(x.dtype());
}

Tensor all(const Tensor& x) { return all_any(x, {}, false, true, "all"); }
Tensor all(const Tensor& x, int64_t dim, bool keepdim) { return all_any(x, {dim}, keepdim, true, "all"); }
Tensor any(const Tensor& x) { return all_any(x, {}, false, false, "any"); }
Tensor any(const Tensor& x, int64_t dim, bool keepdim) { return all_any(x, {dim}, keepdim, false, "any"); }

bool equal(const Tensor& a, const Tensor& b) {
  DDL_CHECK(a.defined() && b.defined(), "equal: undefined tensor");
  DDL_CHECK(a.device() == b.device(), "equal: tensors on different devices, ", describe(a), " and ", describe(b));
  if (a.shape() != b.shape()) return false;
  if (a.numel() == 0) return true;
  return to_vector<int64_t>(sum(ne(a, b)))[0] == 0;
}

}  // namespace ddl
