// Sorting ops on Variables: forward from tensor/ops/sort.h; backward scatters the
// gradient of each picked value to the index it was picked from.
#include <algorithm>

#include <ddl/autograd/node.h>
#include <ddl/autograd/ops/indexing.h>
#include <ddl/autograd/ops/sort.h>
#include <ddl/tensor/core/factory.h>

namespace ddl {

using autograd::make_result;
using Grads = std::vector<Tensor>;
using Needs = std::vector<bool>;

namespace {

// Wraps r.values so that the gradient flows to x at r.indices along `dim`;
// `dim_kept` is false when the forward squeezed `dim` away (keepdim = false).
ValuesIndices<Variable> picked(const Variable& x, const ValuesIndices<Tensor>& r, int64_t dim, bool dim_kept,
                               const char* name) {
  const Shape s = x.shape();
  const Tensor idx = r.indices;
  const int64_t d = wrap_dim(dim, std::max<int64_t>(s.size(), 1), name);
  const bool squeezed = !dim_kept && !s.empty();
  const Tensor full_idx = squeezed ? idx.unsqueeze(d) : idx;  // idx with `dim` present
  Variable values = make_result(
      r.values, name, {&x},
      [s, full_idx, d, squeezed](const Tensor& g, const Needs&) -> Grads {
        return {sort_backward(squeezed ? g.unsqueeze(d) : g, full_idx, d, s)};
      },
      // The same scatter as a Variable op, for double backward.
      [s, full_idx, d, squeezed](const Variable& g, const Needs&) -> std::vector<Variable> {
        if (s.empty()) return {g.reshape(s)};
        // scatter_add has no 16-bit kernels: a float32 copy scatters exactly (indices never repeat).
        const Variable gs = is_reduced_float(g.dtype()) ? g.to(DType::Float32) : g;
        const Variable zero(zeros(s, TensorOptions(gs.dtype(), g.device())));
        const Variable r = scatter_add(zero, d, full_idx, squeezed ? gs.unsqueeze(d) : gs);
        return {r.dtype() == g.dtype() ? r : r.to(g.dtype())};
      });
  return {values, idx};
}

}  // namespace

ValuesIndices<Variable> sort(const Variable& x, int64_t dim, bool descending, bool stable) {
  return picked(x, sort(x.data(), dim, descending, stable), dim, true, "SortBackward");
}

Tensor argsort(const Variable& x, int64_t dim, bool descending, bool stable) {
  return argsort(x.data(), dim, descending, stable);
}

ValuesIndices<Variable> topk(const Variable& x, int64_t k, int64_t dim, bool largest, bool sorted) {
  return picked(x, topk(x.data(), k, dim, largest, sorted), dim, true, "TopkBackward");
}

ValuesIndices<Variable> kthvalue(const Variable& x, int64_t k, int64_t dim, bool keepdim) {
  return picked(x, kthvalue(x.data(), k, dim, keepdim), dim, keepdim, "KthvalueBackward");
}

ValuesIndices<Variable> max_dim(const Variable& x, int64_t dim, bool keepdim) {
  return picked(x, max_dim(x.data(), dim, keepdim), dim, keepdim, "MaxBackward");
}

ValuesIndices<Variable> min_dim(const Variable& x, int64_t dim, bool keepdim) {
  return picked(x, min_dim(x.data(), dim, keepdim), dim, keepdim, "MinBackward");
}

}  // namespace ddl
