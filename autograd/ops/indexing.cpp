// Forward and backward of the differentiable indexing ops. Reading ops
// (index, index_select, gather) send the gradient back with the matching
// accumulating write (index_put_ with accumulate, index_add, scatter_add);
// writing ops pass the gradient of the overwritten places to nobody.
#include "autograd/ops/indexing.h"

#include "autograd/node.h"
#include "tensor/factory.h"
#include "tensor/reduce.h"

namespace ddl {

using autograd::make_result;
using Grads = std::vector<Tensor>;
using Needs = std::vector<bool>;

namespace {

Tensor zeros_of(const Shape& s, DType t, const Tensor& like) { return zeros(s, TensorOptions(t, like.device())); }

// The gradient of src in scatter: g gathered at the index, placed in the
// index-shaped corner of a zero tensor of src's shape (src may be larger).
Tensor scatter_src_grad(const Tensor& g, int64_t dim, const Tensor& index, const Shape& src_shape, DType t) {
  Tensor gs = zeros_of(src_shape, t, g);
  Tensor corner = gs;
  for (int64_t d = 0; d < index.dim(); ++d) corner = corner.narrow(d, 0, index.size(d));
  corner.copy_(gather(g, dim, index));
  return gs;
}

}  // namespace

Variable index(const Variable& x, const std::vector<TensorIndex>& indices) {
  const Shape s = x.shape();
  const DType t = x.dtype();
  return make_result(index(x.data(), indices), "IndexBackward", {&x},
                     [s, t, indices](const Tensor& g, const Needs&) -> Grads {
                       Tensor gx = zeros_of(s, t, g);
                       index_put_(gx, indices, g, /*accumulate=*/true);
                       return {gx};
                     });
}

Variable Variable::index(const std::vector<TensorIndex>& indices) const { return ddl::index(*this, indices); }

Variable index_put(const Variable& x, const std::vector<TensorIndex>& indices, const Variable& values,
                   bool accumulate) {
  const Shape vs = values.shape();
  const DType vt = values.dtype();
  return make_result(index_put(x.data(), indices, values.data(), accumulate), "IndexPutBackward", {&x, &values},
                     [indices, vs, vt, accumulate](const Tensor& g, const Needs& n) -> Grads {
                       Grads grads(2);
                       if (n[0]) grads[0] = accumulate ? g : index_put(g, indices, zeros_of({}, g.dtype(), g));
                       if (n[1]) grads[1] = sum_to(index(g, indices), vs).to(vt);
                       return grads;
                     });
}

Variable index_select(const Variable& x, int64_t dim, const Tensor& index) {
  const Shape s = x.shape();
  const DType t = x.dtype();
  return make_result(index_select(x.data(), dim, index), "IndexSelectBackward", {&x},
                     [s, t, dim, index](const Tensor& g, const Needs&) -> Grads {
                       return {index_add(zeros_of(s, t, g), dim, index, g)};
                     });
}

Variable index_add(const Variable& x, int64_t dim, const Tensor& index, const Variable& source) {
  return make_result(index_add(x.data(), dim, index, source.data()), "IndexAddBackward", {&x, &source},
                     [dim, index](const Tensor& g, const Needs& n) -> Grads {
                       return {n[0] ? g : Tensor(), n[1] ? index_select(g, dim, index) : Tensor()};
                     });
}

Variable gather(const Variable& x, int64_t dim, const Tensor& index) {
  const Shape s = x.shape();
  const DType t = x.dtype();
  return make_result(gather(x.data(), dim, index), "GatherBackward", {&x},
                     [s, t, dim, index](const Tensor& g, const Needs&) -> Grads {
                       return {scatter_add(zeros_of(s, t, g), dim, index, g)};
                     });
}

Variable scatter(const Variable& self, int64_t dim, const Tensor& index, const Variable& src) {
  const Shape ss = src.shape();
  const DType st = src.dtype();
  return make_result(scatter(self.data(), dim, index, src.data()), "ScatterBackward", {&self, &src},
                     [dim, index, ss, st](const Tensor& g, const Needs& n) -> Grads {
                       return {n[0] ? scatter(g, dim, index, 0.0) : Tensor(),
                               n[1] ? scatter_src_grad(g, dim, index, ss, st) : Tensor()};
                     });
}

Variable scatter(const Variable& self, int64_t dim, const Tensor& index, double value) {
  return make_result(scatter(self.data(), dim, index, value), "ScatterBackward", {&self},
                     [dim, index](const Tensor& g, const Needs&) -> Grads { return {scatter(g, dim, index, 0.0)}; });
}

Variable scatter_add(const Variable& self, int64_t dim, const Tensor& index, const Variable& src) {
  const Shape ss = src.shape();
  const DType st = src.dtype();
  return make_result(scatter_add(self.data(), dim, index, src.data()), "ScatterAddBackward", {&self, &src},
                     [dim, index, ss, st](const Tensor& g, const Needs& n) -> Grads {
                       return {n[0] ? g : Tensor(), n[1] ? scatter_src_grad(g, dim, index, ss, st) : Tensor()};
                     });
}

Variable masked_fill(const Variable& x, const Tensor& mask, double value) {
  const Shape s = x.shape();
  return make_result(
      masked_fill(x.data(), mask, value), "MaskedFillBackward", {&x},
      [s, mask](const Tensor& g, const Needs&) -> Grads { return {sum_to(masked_fill(g, mask, 0.0), s)}; });
}

}  // namespace ddl
