// Sorting frontends: the sorted dim is moved last and made contiguous, the
// device kernel sorts each row (tensor/cpu/sort.cpp, tensor/cuda/sort.cu), and
// the results are moved back. Outputs live on the input's device.
#include <algorithm>
#include <vector>

#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/ops/extreme.h>
#include <ddl/tensor/ops/reduce.h>
#include <ddl/tensor/ops/sort.h>

namespace ddl::kernels {
DDL_DEFINE_KERNEL(sort_rows_kernel, SortRowsFn);
DDL_DEFINE_KERNEL(sort_backward_kernel, SortBackwardFn);
}  // namespace ddl::kernels

namespace ddl {
namespace {

void check_input(const Tensor& x, const char* op) { DDL_CHECK(x.defined(), op, ": undefined tensor"); }

// The dtypes the sort kernels take (DDL_DISPATCH_NUMERIC's).
bool is_numeric(DType t) { return t == DType::Float32 || t == DType::Float64 || is_integral(t); }

// The dtype a kernel sorts x in: 16-bit floats as float32 and bool as uint8,
// both exact and order-preserving, so the values convert back unchanged.
DType sort_dtype(DType t) {
  if (is_reduced_float(t)) return DType::Float32;
  return t == DType::Bool ? DType::UInt8 : t;
}

// The permutation that moves `dim` last, and its inverse.
std::vector<int64_t> dim_last(int64_t ndim, int64_t dim) {
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < ndim; ++i)
    if (i != dim) perm.push_back(i);
  perm.push_back(dim);
  return perm;
}
std::vector<int64_t> inverse(const std::vector<int64_t>& perm) {
  std::vector<int64_t> inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inv[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  return inv;
}

// sort/topk/kthvalue share this: the first k of each sorted row along dim.
ValuesIndices<Tensor> sorted_prefix(const Tensor& x, int64_t k, int64_t dim, bool descending, const char* op) {
  check_input(x, op);
  if (x.dim() == 0) return {x.clone(), zeros({}, TensorOptions(DType::Int64, x.device()))};
  if (sort_dtype(x.dtype()) != x.dtype()) {
    ValuesIndices<Tensor> r = sorted_prefix(x.to(sort_dtype(x.dtype())), k, dim, descending, op);
    return {r.values.to(x.dtype()), r.indices};
  }
  DDL_CHECK(is_numeric(x.dtype()), op, ": expected a numeric tensor, got ", x.dtype());
  const std::vector<int64_t> perm = dim_last(x.dim(), dim);
  const Tensor moved = x.permute(perm).contiguous();
  Shape out_shape = moved.shape();
  out_shape[out_shape.size() - 1] = k;
  Tensor values = empty(out_shape, TensorOptions(x.dtype(), x.device()));
  Tensor indices = empty(out_shape, TensorOptions(DType::Int64, x.device()));
  if (values.numel() > 0) kernels::sort_rows_kernel(x.device())(moved, k, descending, values, indices);
  const std::vector<int64_t> inv = inverse(perm);
  return {values.permute(inv).contiguous(), indices.permute(inv).contiguous()};
}

}  // namespace

namespace {
// sort and argsort, under the name `op` the user called.
ValuesIndices<Tensor> sort_as(const Tensor& x, int64_t dim, bool descending, const char* op) {
  check_input(x, op);
  const int64_t d = wrap_dim(dim, x.dim(), op);
  return sorted_prefix(x, x.dim() == 0 ? 1 : x.size(d), d, descending, op);
}
}  // namespace

ValuesIndices<Tensor> sort(const Tensor& x, int64_t dim, bool descending, bool /*stable*/) {
  return sort_as(x, dim, descending, "sort");
}

Tensor argsort(const Tensor& x, int64_t dim, bool descending, bool /*stable*/) {
  return sort_as(x, dim, descending, "argsort").indices;
}

// PyTorch has no bool kernel for topk and kthvalue (sort takes bool).
ValuesIndices<Tensor> topk(const Tensor& x, int64_t k, int64_t dim, bool largest, bool /*sorted*/) {
  check_input(x, "topk");
  DDL_CHECK(x.dtype() != DType::Bool, "topk: not implemented for bool tensors, got ", describe(x));
  const int64_t d = wrap_dim(dim, x.dim(), "topk");
  const int64_t n = x.dim() == 0 ? 1 : x.size(d);
  DDL_CHECK(k >= 0 && k <= n, "topk: k = ", k, " is out of range for dimension ", dim, " of size ", n, " in ",
            x.shape());
  return sorted_prefix(x, k, d, largest, "topk");
}

ValuesIndices<Tensor> kthvalue(const Tensor& x, int64_t k, int64_t dim, bool keepdim) {
  check_input(x, "kthvalue");
  DDL_CHECK(x.dtype() != DType::Bool, "kthvalue: not implemented for bool tensors, got ", describe(x));
  const int64_t d = wrap_dim(dim, x.dim(), "kthvalue");
  const int64_t n = x.dim() == 0 ? 1 : x.size(d);
  DDL_CHECK(k >= 1 && k <= n, "kthvalue: k = ", k, " is out of range for dimension ", dim, " of size ", n, " in ",
            x.shape(), " (k counts from 1)");
  ValuesIndices<Tensor> r = sorted_prefix(x, k, d, false, "kthvalue");
  if (x.dim() == 0) return r;
  Tensor v = r.values.narrow(d, k - 1, 1), i = r.indices.narrow(d, k - 1, 1);
  if (!keepdim) v = v.squeeze(d), i = i.squeeze(d);
  return {v.contiguous(), i.contiguous()};
}

// torch.max(x, dim) takes bool, though argmax does not.
ValuesIndices<Tensor> max_dim(const Tensor& x, int64_t dim, bool keepdim) {
  return {detail::extreme(x, {dim}, keepdim, true, false, "max"),
          detail::extreme(x, {dim}, keepdim, true, true, "max")};
}
ValuesIndices<Tensor> min_dim(const Tensor& x, int64_t dim, bool keepdim) {
  return {detail::extreme(x, {dim}, keepdim, false, false, "min"),
          detail::extreme(x, {dim}, keepdim, false, true, "min")};
}

Tensor sort_backward(const Tensor& grad, const Tensor& indices, int64_t dim, const Shape& input_shape) {
  check_input(grad, "sort_backward");
  DDL_CHECK(indices.dtype() == DType::Int64 && indices.shape() == grad.shape(), "sort_backward: indices ",
            describe(indices), " do not match the gradient ", describe(grad));
  DDL_CHECK(indices.device() == grad.device(), "sort_backward: indices ", describe(indices),
            " are not on the gradient's device (", describe(grad), ")");
  if (grad.dim() == 0) return grad.clone().reshape(input_shape);
  // The kernels take float32/float64 gradients; a 16-bit one goes through float32,
  // exactly: each input element receives at most one value (indices never repeat).
  if (is_reduced_float(grad.dtype()))
    return sort_backward(grad.to(DType::Float32), indices, dim, input_shape).to(grad.dtype());
  const int64_t d = wrap_dim(dim, grad.dim(), "sort_backward");
  const std::vector<int64_t> perm = dim_last(grad.dim(), d);
  const Tensor g = grad.permute(perm).contiguous(), idx = indices.permute(perm).contiguous();
  Shape moved_shape;
  for (int64_t p : perm) moved_shape.push_back(input_shape[p]);
  Tensor out = zeros(moved_shape, TensorOptions(grad.dtype(), grad.device()));
  kernels::sort_backward_kernel(grad.device())(g, idx, out);
  return out.permute(inverse(perm)).contiguous();
}

}  // namespace ddl
