// Frontends of the reductions: move the reduced dims last, view the input as
// [outer, inner] and reduce each row (see Note [Deterministic sums]).
#include <algorithm>

#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/kernels/reduce_kernel.h>
#include <ddl/tensor/ops/elementwise.h>
#include <ddl/tensor/ops/extreme.h>
#include <ddl/tensor/ops/reduce.h>

namespace ddl {
namespace kernels {
DDL_DEFINE_KERNEL(reduce_kernel, ReduceFnPtr);
DDL_DEFINE_KERNEL(sum_middle_kernel, SumMiddleFnPtr);
}  // namespace kernels

namespace {

using kernels::ReduceOp;

// A 0-d tensor has no dims to mark, but takes dim 0 or -1 once (it reduces its one element).
std::vector<bool> reduced_mask(const Tensor& x, const std::vector<int64_t>& dims, const char* op) {
  std::vector<bool> mask(static_cast<size_t>(std::max<int64_t>(x.dim(), 1)), dims.empty());
  for (int64_t d : dims) {
    const int64_t w = wrap_dim(d, x.dim(), op);
    DDL_CHECK(!mask[w] || dims.empty(), op, ": dimension ", d, " listed twice");
    mask[w] = true;
  }
  mask.resize(static_cast<size_t>(x.dim()));
  return mask;
}

Shape reduced_shape(const Tensor& x, const std::vector<bool>& mask, bool keepdim) {
  Shape out;
  for (int64_t i = 0; i < x.dim(); ++i) {
    if (!mask[i])
      out.push_back(x.size(i));
    else if (keepdim)
      out.push_back(1);
  }
  return out;
}

// Whether x is a 16-bit float tensor reduced through a float32 copy: the CPU
// kernels have no 16-bit cases; the CUDA ones load 16 bits and reduce in float
// as the float32 kernels do (tensor/cuda/reduce.cu), with the same bits.
bool casts_to_float(const Tensor& x) { return is_reduced_float(x.dtype()) && !x.device().is_cuda(); }

// float_out: a 16-bit (CUDA) sum written as float32, not rounded to 16 bits (for mean).
Tensor reduce(ReduceOp op, const Tensor& x, const std::vector<int64_t>& dims, bool keepdim, const char* name,
              bool float_out = false) {
  DDL_CHECK(x.defined(), name, ": undefined tensor");
  if (casts_to_float(x)) {  // See Note [Half compute]: accumulate in float32, round once
    const Tensor r = reduce(op, x.to(DType::Float32), dims, keepdim, name);
    return op == ReduceOp::ArgMax || op == ReduceOp::ArgMin ? r : r.to(x.dtype());
  }
  if (x.dtype() == DType::Bool && (op == ReduceOp::Max || op == ReduceOp::Min))  // torch.amax of bool is bool
    return reduce(op, x.to(DType::UInt8), dims, keepdim, name).to(DType::Bool);
  const std::vector<bool> mask = reduced_mask(x, dims, name);
  std::vector<int64_t> perm;
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < x.dim(); ++i)
    if (!mask[i]) perm.push_back(i), outer *= x.size(i);
  for (int64_t i = 0; i < x.dim(); ++i)
    if (mask[i]) perm.push_back(i), inner *= x.size(i);
  const bool arg = op == ReduceOp::ArgMax || op == ReduceOp::ArgMin;
  DDL_CHECK(inner > 0 || op == ReduceOp::Sum, name, ": cannot reduce an empty dimension of ", x.shape());
  Tensor in = x.dtype() == DType::Bool ? x.to(DType::Int64) : x;
  in = in.permute(perm).contiguous();
  const DType out_dtype = arg ? DType::Int64 : float_out ? DType::Float32 : in.dtype();
  Tensor out = empty(Shape{outer}, TensorOptions(out_dtype, x.device()));
  if (inner == 0) {
    out.zero_();
  } else if (outer > 0) {
    kernels::reduce_kernel(x.device())(op, out, in, outer, inner);
  }
  return out.view(reduced_shape(x, mask, keepdim));
}

int64_t reduced_count(const Tensor& x, const std::vector<int64_t>& dims, const char* op) {
  const std::vector<bool> mask = reduced_mask(x, dims, op);
  int64_t n = 1;
  for (int64_t i = 0; i < x.dim(); ++i)
    if (mask[i]) n *= x.size(i);
  return n;
}

}  // namespace

// When x is contiguous and the kept dims form one block in the middle ([A, C, B]
// with A and B reduced), sums in place instead of permuting a copy first.
// out_dtype: x's, or float32 for a 16-bit x (mean's sum).
bool sum_middle(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim, DType out_dtype, Tensor& result) {
  if (!x.is_contiguous() || dims.empty() || x.dtype() == DType::Bool || casts_to_float(x) || x.numel() == 0)
    return false;
  const std::vector<bool> mask = reduced_mask(x, dims, "sum");
  int64_t first = -1, last = -1;
  for (int64_t i = 0; i < x.dim(); ++i)
    if (!mask[i]) {
      if (first < 0) first = i;
      last = i;
    }
  if (first < 0 || first == 0) return false;  // all reduced, or nothing leading: the general path is as fast
  for (int64_t i = first; i <= last; ++i)
    if (mask[i]) return false;
  int64_t A = 1, C = 1, B = 1;
  for (int64_t i = 0; i < x.dim(); ++i) (i < first ? A : i <= last ? C : B) *= x.size(i);
  // A 16-bit sum kept in 16 bits reproduces the cast path, reduce() on float32,
  // whose order this kernel matches except in its thread-per-channel case (B == 1).
  if (is_reduced_float(x.dtype()) && out_dtype == x.dtype() && B == 1) return false;
  Tensor out = empty(Shape{C}, TensorOptions(out_dtype, x.device()));
  kernels::sum_middle_kernel(x.device())(out, x, A, C, B);
  result = out.view(reduced_shape(x, mask, keepdim));
  return true;
}

Tensor sum(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  DDL_CHECK(x.defined(), "sum: undefined tensor");
  // torch.sum accumulates bool and every integer dtype in int64 and returns int64 (no wrap-around).
  if (!is_floating(x.dtype()) && x.dtype() != DType::Int64) return sum(x.to(DType::Int64), dims, keepdim);
  Tensor fast;
  if (x.defined() && sum_middle(x, dims, keepdim, x.dtype(), fast)) return fast;
  return reduce(ReduceOp::Sum, x, dims, keepdim, "sum");
}

namespace {
// torch.mean and torch.var refuse integer and bool tensors rather than pick a float dtype.
void check_floating(const Tensor& x, const char* op) {
  DDL_CHECK(x.defined(), op, ": undefined tensor");
  DDL_CHECK(is_floating(x.dtype()), op, ": expected a floating-point tensor, got ", describe(x),
            " (as PyTorch, which cannot infer the result dtype); convert it first, e.g. x.to(DType::Float32)");
}
}  // namespace

Tensor mean(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  check_floating(x, "mean");
  if (casts_to_float(x)) return mean(x.to(DType::Float32), dims, keepdim).to(x.dtype());
  if (is_reduced_float(x.dtype())) {
    // sum(x.to(float32)) without the float32 copy, bit for bit: that copy is
    // contiguous, so sum_middle sees x contiguous too.
    const int64_t n = reduced_count(x, dims, "mean");  // checks the dims first, naming mean
    const Tensor xc = x.contiguous();
    Tensor s;
    if (!sum_middle(xc, dims, keepdim, DType::Float32, s)) s = reduce(ReduceOp::Sum, xc, dims, keepdim, "mean", true);
    return div(s, static_cast<double>(n)).to(x.dtype());
  }
  const int64_t n = reduced_count(x, dims, "mean");
  return div(sum(x, dims, keepdim), static_cast<double>(n));
}

// Note [Variance in float64]: var subtracts the mean before squaring (two
// passes, stable unlike E[x^2] - E[x]^2), and does both passes in float64 for
// every float dtype, rounding once at the end. A mean rounded to float32 first
// is off by a float32 step, and every squared deviation carries that error:
// var([1e8, 1e8 + 8, 1e8 + 8, 1e8 + 8]) came out 21.3 instead of 16 (float32
// steps are 8 apart there). PyTorch's float32 Welford gives 64 on that input.
Tensor var(const Tensor& x, const std::vector<int64_t>& dims, int64_t correction, bool keepdim) {
  check_floating(x, "var");
  const int64_t n = reduced_count(x, dims, "var");  // checks the dims, so the calls below cannot fail
  const Tensor xd = x.to(DType::Float64);
  const Tensor centered = sub(xd, div(sum(xd, dims, true), static_cast<double>(n)));
  const Tensor v =
      div(sum(mul(centered, centered), dims, keepdim), static_cast<double>(std::max<int64_t>(n - correction, 0)));
  return v.to(x.dtype());
}

namespace detail {
Tensor extreme(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim, bool is_max, bool arg, const char* op) {
  const ReduceOp r = arg ? (is_max ? ReduceOp::ArgMax : ReduceOp::ArgMin) : (is_max ? ReduceOp::Max : ReduceOp::Min);
  return reduce(r, x, dims, keepdim, op);
}
}  // namespace detail

Tensor amax(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  return reduce(ReduceOp::Max, x, dims, keepdim, "amax");
}
Tensor amin(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  return reduce(ReduceOp::Min, x, dims, keepdim, "amin");
}
// PyTorch has no argmax/argmin kernel for bool ("argmax_cpu" not implemented for 'Bool').
Tensor argmax(const Tensor& x, int64_t dim, bool keepdim) {
  DDL_CHECK(!x.defined() || x.dtype() != DType::Bool, "argmax: not implemented for bool tensors, got ", describe(x));
  return reduce(ReduceOp::ArgMax, x, {dim}, keepdim, "argmax");
}
Tensor argmin(const Tensor& x, int64_t dim, bool keepdim) {
  DDL_CHECK(!x.defined() || x.dtype() != DType::Bool, "argmin: not implemented for bool tensors, got ", describe(x));
  return reduce(ReduceOp::ArgMin, x, {dim}, keepdim, "argmin");
}

Tensor sum_to(const Tensor& x, const Shape& shape) {
  if (x.shape() == shape) return x;
  const int64_t lead = x.dim() - shape.size();
  DDL_CHECK(lead >= 0, "sum_to: cannot sum ", x.shape(), " to the larger shape ", shape);
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < x.dim(); ++i) {
    if (i < lead) {
      dims.push_back(i);
    } else if (shape[i - lead] == 1 && x.size(i) != 1) {
      dims.push_back(i);
    } else {
      DDL_CHECK(shape[i - lead] == x.size(i), "sum_to: ", x.shape(), " does not broadcast from ", shape);
    }
  }
  if (dims.empty()) return x.reshape(shape);
  return sum(x, dims, true).reshape(shape);
}

}  // namespace ddl
