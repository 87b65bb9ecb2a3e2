// Forward and backward of the differentiable indexing ops. Reading ops
// (index, index_select, gather) send the gradient back with the matching
// accumulating write (index_put with accumulate, index_add, scatter_add);
// writing ops pass the gradient of the overwritten places to nobody. Each
// backward is generic over Tensor and Variable (autograd/ops/linear_backward.h).
#include <ddl/autograd/ops/indexing.h>
#include <ddl/autograd/ops/linear_backward.h>
#include <ddl/autograd/ops/reduce.h>
#include <ddl/autograd/ops/shape_ops.h>
#include <ddl/autograd/variable_impl.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/ops/reduce.h>

namespace ddl {

using autograd::record_linear;
using Needs = std::vector<bool>;

namespace {

template <typename G>
using GradsOf = std::vector<G>;

Tensor zeros_for(const Shape& s, DType t, const Tensor& like) { return zeros(s, TensorOptions(t, like.device())); }
Tensor zeros_for(const Shape& s, DType t, const Variable& like) { return zeros_for(s, t, like.data()); }

// The gradient of src in scatter: g gathered at the index, padded with zeros up to
// src's shape (src may be larger than the index; only its index-shaped corner is read).
template <typename G>
G scatter_src_grad(const G& g, int64_t dim, const Tensor& index, const Shape& src_shape, DType t) {
  std::vector<int64_t> pads;
  for (int64_t d = index.dim() - 1; d >= 0; --d) pads.insert(pads.end(), {0, src_shape[d] - index.size(d)});
  return pad(gather(g, dim, index), pads).to(t);
}

}  // namespace

Variable index(const Variable& x, const std::vector<TensorIndex>& indices) {
  const Shape s = x.shape();
  const DType t = x.dtype();
  return autograd::detail::as_view(
      record_linear(index(x.data(), indices), "IndexBackward", {&x},
                    [s, t, indices](const auto& g, const Needs&) {
                      return std::vector{index_put(zeros_for(s, t, g), indices, g.to(t), /*accumulate=*/true)};
                    }),
      x);  // basic indexing gives a view
}

Variable Variable::index(const std::vector<TensorIndex>& indices) const { return ddl::index(*this, indices); }

Variable index_put(const Variable& x, const std::vector<TensorIndex>& indices, const Variable& values,
                   bool accumulate) {
  const Shape vs = values.shape();
  const DType vt = values.dtype();
  return record_linear(index_put(x.data(), indices, values.data(), accumulate), "IndexPutBackward", {&x, &values},
                       [indices, vs, vt, accumulate](const auto& g, const Needs& n) {
                         using G = std::decay_t<decltype(g)>;
                         GradsOf<G> grads(2);
                         if (n[0]) grads[0] = accumulate ? g : index_put(g, indices, zeros_for({}, g.dtype(), g));
                         if (n[1]) grads[1] = sum_to(index(g, indices), vs).to(vt);
                         return grads;
                       });
}

Variable index_select(const Variable& x, int64_t dim, const Tensor& index) {
  const Shape s = x.shape();
  const DType t = x.dtype();
  return record_linear(index_select(x.data(), dim, index), "IndexSelectBackward", {&x},
                       [s, t, dim, index](const auto& g, const Needs&) {
                         // A 0-d self's index_select is self itself, whatever the index's length.
                         if (s.size() == 0) return std::vector{g};
                         return std::vector{index_add(zeros_for(s, t, g), dim, index, g)};
                       });
}

Variable index_add(const Variable& x, int64_t dim, const Tensor& index, const Variable& source) {
  const Shape ss = source.shape();
  // expand: a 0-d self's index_select stays 0-d, its source has one value per index (as PyTorch's
  // derivative, grad.index_select(dim, index).expand_as(source)); a no-op otherwise.
  return record_linear(index_add(x.data(), dim, index, source.data()), "IndexAddBackward", {&x, &source},
                       [dim, index, ss](const auto& g, const Needs& n) {
                         using G = std::decay_t<decltype(g)>;
                         return GradsOf<G>{n[0] ? g : G(), n[1] ? index_select(g, dim, index).expand(ss) : G()};
                       });
}

Variable gather(const Variable& x, int64_t dim, const Tensor& index) {
  const Shape s = x.shape();
  const DType t = x.dtype();
  return record_linear(gather(x.data(), dim, index), "GatherBackward", {&x},
                       [s, t, dim, index](const auto& g, const Needs&) {
                         return std::vector{scatter_add(zeros_for(s, t, g), dim, index, g)};
                       });
}

Variable scatter(const Variable& self, int64_t dim, const Tensor& index, const Variable& src) {
  const Shape ss = src.shape();
  const DType st = src.dtype();
  return record_linear(scatter(self.data(), dim, index, src.data()), "ScatterBackward", {&self, &src},
                       [dim, index, ss, st](const auto& g, const Needs& n) {
                         using G = std::decay_t<decltype(g)>;
                         return GradsOf<G>{n[0] ? scatter(g, dim, index, 0.0) : G(),
                                           n[1] ? scatter_src_grad(g, dim, index, ss, st) : G()};
                       });
}

Variable scatter(const Variable& self, int64_t dim, const Tensor& index, double value) {
  return record_linear(scatter(self.data(), dim, index, value), "ScatterBackward", {&self},
                       [dim, index](const auto& g, const Needs&) { return std::vector{scatter(g, dim, index, 0.0)}; });
}

Variable scatter_add(const Variable& self, int64_t dim, const Tensor& index, const Variable& src) {
  const Shape ss = src.shape();
  const DType st = src.dtype();
  return record_linear(scatter_add(self.data(), dim, index, src.data()), "ScatterAddBackward", {&self, &src},
                       [dim, index, ss, st](const auto& g, const Needs& n) {
                         using G = std::decay_t<decltype(g)>;
                         return GradsOf<G>{n[0] ? g : G(), n[1] ? scatter_src_grad(g, dim, index, ss, st) : G()};
                       });
}

Variable masked_fill(const Variable& x, const Tensor& mask, double value) {
  const Shape s = x.shape();
  return record_linear(
      masked_fill(x.data(), mask, value), "MaskedFillBackward", {&x},
      [s, mask](const auto& g, const Needs&) { return std::vector{sum_to(masked_fill(g, mask, 0.0), s)}; });
}

}  // namespace ddl
