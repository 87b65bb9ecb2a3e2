// Sorting on the CPU: the sorted dim is moved last and made contiguous, each
// row is sorted as a list of indices, and the results are moved back.
// Comparators put NaN above every number (torch.sort's order).
#include "tensor/sort.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "tensor/dispatch.h"
#include "tensor/factory.h"
#include "tensor/parallel.h"
#include "tensor/reduce.h"

namespace ddl {
namespace {

void check_input(const Tensor& x, const char* op) {
  DDL_CHECK(x.defined(), op, ": undefined tensor");
  DDL_CHECK(x.device().is_cpu(), op, ": not implemented for CUDA tensors yet (got ", describe(x),
            "); move it to the CPU with .to(Device::cpu())");
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

template <typename T>
bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) return std::isnan(v);
  return false;
}

// a before b when sorting ascending (NaN last) or descending (NaN first).
template <typename T>
bool before(T a, T b, bool descending) {
  if (descending) return a > b || (is_nan(a) && !is_nan(b));
  return a < b || (!is_nan(a) && is_nan(b));
}

// Sorts each row of x (dim already last, contiguous) and keeps the first `k` of
// each: values [rows, k] and indices [rows, k]. Ties keep index order.
void sort_rows(const Tensor& x, int64_t k, bool descending, Tensor& values, Tensor& indices, const char* op) {
  const int64_t n = x.dim() == 0 ? 1 : x.size(-1);
  const int64_t rows = n == 0 ? 0 : x.numel() / n;
  int64_t* ip = indices.data<int64_t>();
  DDL_DISPATCH_NUMERIC(x.dtype(), op, [&] {
    const scalar_t* xp = x.data<scalar_t>();
    scalar_t* vp = values.data<scalar_t>();
    parallel_for(0, rows, 1, [&](int64_t b, int64_t e) {
      std::vector<int64_t> order(static_cast<size_t>(n));
      for (int64_t r = b; r < e; ++r) {
        const scalar_t* row = xp + r * n;
        std::iota(order.begin(), order.end(), 0);
        auto cmp = [&](int64_t i, int64_t j) { return before(row[i], row[j], descending); };
        if (k == n)
          std::stable_sort(order.begin(), order.end(), cmp);
        else  // index as tie-break: partial_sort is not stable
          std::partial_sort(order.begin(), order.begin() + k, order.end(),
                            [&](int64_t i, int64_t j) { return cmp(i, j) || (!cmp(j, i) && i < j); });
        for (int64_t j = 0; j < k; ++j) {
          vp[r * k + j] = row[order[static_cast<size_t>(j)]];
          ip[r * k + j] = order[static_cast<size_t>(j)];
        }
      }
    });
  });
}

// sort/topk/kthvalue share this: the first k of each sorted row along dim.
ValuesIndices<Tensor> sorted_prefix(const Tensor& x, int64_t k, int64_t dim, bool descending, const char* op) {
  check_input(x, op);
  if (x.dim() == 0) return {x.clone(), zeros({}, DType::Int64)};
  const std::vector<int64_t> perm = dim_last(x.dim(), dim);
  const Tensor moved = x.permute(perm).contiguous();
  Shape out_shape = moved.shape();
  out_shape[out_shape.size() - 1] = k;
  Tensor values = empty(out_shape, x.dtype());
  Tensor indices = empty(out_shape, DType::Int64);
  sort_rows(moved, k, descending, values, indices, op);
  const std::vector<int64_t> inv = inverse(perm);
  return {values.permute(inv).contiguous(), indices.permute(inv).contiguous()};
}

}  // namespace

ValuesIndices<Tensor> sort(const Tensor& x, int64_t dim, bool descending, bool /*stable*/) {
  check_input(x, "sort");
  const int64_t d = wrap_dim(dim, std::max<int64_t>(x.dim(), 1), "sort");
  return sorted_prefix(x, x.dim() == 0 ? 1 : x.size(d), d, descending, "sort");
}

Tensor argsort(const Tensor& x, int64_t dim, bool descending, bool stable) {
  return sort(x, dim, descending, stable).indices;
}

ValuesIndices<Tensor> topk(const Tensor& x, int64_t k, int64_t dim, bool largest, bool /*sorted*/) {
  check_input(x, "topk");
  const int64_t d = wrap_dim(dim, std::max<int64_t>(x.dim(), 1), "topk");
  const int64_t n = x.dim() == 0 ? 1 : x.size(d);
  DDL_CHECK(k >= 0 && k <= n, "topk: k = ", k, " is out of range for dimension ", dim, " of size ", n, " in ",
            x.shape());
  return sorted_prefix(x, k, d, largest, "topk");
}

ValuesIndices<Tensor> kthvalue(const Tensor& x, int64_t k, int64_t dim, bool keepdim) {
  check_input(x, "kthvalue");
  const int64_t d = wrap_dim(dim, std::max<int64_t>(x.dim(), 1), "kthvalue");
  const int64_t n = x.dim() == 0 ? 1 : x.size(d);
  DDL_CHECK(k >= 1 && k <= n, "kthvalue: k = ", k, " is out of range for dimension ", dim, " of size ", n, " in ",
            x.shape(), " (k counts from 1)");
  ValuesIndices<Tensor> r = sorted_prefix(x, k, d, false, "kthvalue");
  if (x.dim() == 0) return r;
  Tensor v = r.values.narrow(d, k - 1, 1), i = r.indices.narrow(d, k - 1, 1);
  if (!keepdim) v = v.squeeze(d), i = i.squeeze(d);
  return {v.contiguous(), i.contiguous()};
}

ValuesIndices<Tensor> max_dim(const Tensor& x, int64_t dim, bool keepdim) {
  return {amax(x, {dim}, keepdim), argmax(x, dim, keepdim)};
}
ValuesIndices<Tensor> min_dim(const Tensor& x, int64_t dim, bool keepdim) {
  return {amin(x, {dim}, keepdim), argmin(x, dim, keepdim)};
}

Tensor sort_backward(const Tensor& grad, const Tensor& indices, int64_t dim, const Shape& input_shape) {
  check_input(grad, "sort_backward");
  DDL_CHECK(indices.dtype() == DType::Int64 && indices.shape() == grad.shape(), "sort_backward: indices ",
            describe(indices), " do not match the gradient ", describe(grad));
  if (grad.dim() == 0) return grad.clone().reshape(input_shape);
  const int64_t d = wrap_dim(dim, grad.dim(), "sort_backward");
  const std::vector<int64_t> perm = dim_last(grad.dim(), d);
  const Tensor g = grad.permute(perm).contiguous(), idx = indices.permute(perm).contiguous();
  Shape moved_shape;
  for (int64_t p : perm) moved_shape.push_back(input_shape[p]);
  Tensor out = zeros(moved_shape, grad.dtype());
  const int64_t k = g.size(-1), n = moved_shape[moved_shape.size() - 1];
  const int64_t rows = k == 0 ? 0 : g.numel() / k;
  const int64_t* ip = idx.data<int64_t>();
  DDL_DISPATCH_FLOAT(grad.dtype(), "sort_backward", [&] {
    const scalar_t* gp = g.data<scalar_t>();
    scalar_t* op = out.data<scalar_t>();
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < k; ++j) {
        const int64_t i = ip[r * k + j];
        DDL_CHECK(i >= 0 && i < n, "sort_backward: index ", i, " out of range [0, ", n, ")");
        op[r * n + i] += gp[r * k + j];
      }
  });
  return out.permute(inverse(perm)).contiguous();
}

}  // namespace ddl
