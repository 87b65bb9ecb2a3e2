// cat's backward narrows the output gradient to each input's slice (stack is
// cat of unsqueezed inputs), for Tensors and Variables alike (double backward);
// split and chunk reuse the differentiable narrow.
#include <ddl/autograd/ops/join.h>
#include <ddl/autograd/ops/linear_backward.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/ops/join.h>

namespace ddl {

using autograd::record_linear;
using Needs = std::vector<bool>;

Variable cat(const std::vector<Variable>& xs, int64_t dim) {
  std::vector<Tensor> data;
  std::vector<const Variable*> inputs;
  for (const Variable& x : xs) {
    DDL_CHECK(x.defined(), "cat: undefined variable in the list");
    data.push_back(x.data());
    inputs.push_back(&x);
  }
  Tensor out = cat(data, dim);
  // Where each input sits along the joined dim; 1-D empty inputs (skipped by cat) get empty gradients.
  std::vector<Shape> shapes;
  std::vector<DType> dtypes;
  for (const Tensor& t : data) {
    shapes.push_back(t.shape());
    dtypes.push_back(t.dtype());
  }
  const int64_t d = out.dim() ? wrap_dim(dim, out.dim(), "cat") : 0;
  return record_linear(std::move(out), "CatBackward", inputs, [shapes, dtypes, d](const auto& g, const Needs& needs) {
    using G = std::decay_t<decltype(g)>;
    std::vector<G> grads(shapes.size());
    int64_t at = 0;
    for (size_t i = 0; i < shapes.size(); ++i) {
      const bool skipped = shapes[i].size() == 1 && shapes[i][0] == 0;
      if (needs[i])
        grads[i] = skipped ? G(zeros(shapes[i], TensorOptions(dtypes[i], g.device())))
                           : G(g.narrow(d, at, shapes[i][d]).to(dtypes[i]));
      if (!skipped) at += shapes[i][d];
    }
    return grads;
  });
}

Variable stack(const std::vector<Variable>& xs, int64_t dim) {
  DDL_CHECK(!xs.empty(), "stack: expected a non-empty list of variables");
  const int64_t d = wrap_dim(dim, xs[0].dim() + 1, "stack");
  std::vector<Variable> parts;
  for (const Variable& x : xs) {
    DDL_CHECK(x.defined() && x.shape() == xs[0].shape(), "stack: expected variables of equal shape, got ",
              x.defined() ? x.shape() : Shape{}, " and ", xs[0].shape());
    parts.push_back(x.unsqueeze(d));
  }
  return cat(parts, d);
}

namespace {

// Consecutive differentiable narrows of x along d with the extents of `pieces`.
std::vector<Variable> narrow_like(const Variable& x, const std::vector<Tensor>& pieces, int64_t d) {
  std::vector<Variable> out;
  int64_t at = 0;
  for (const Tensor& p : pieces) {
    out.push_back(x.narrow(d, std::min(at, x.size(d)), p.size(d)));
    at += p.size(d);
  }
  return out;
}

}  // namespace

std::vector<Variable> split(const Variable& x, int64_t split_size, int64_t dim) {
  const std::vector<Tensor> pieces = split(x.data(), split_size, dim);
  return narrow_like(x, pieces, wrap_dim(dim, x.dim(), "split"));
}

std::vector<Variable> split(const Variable& x, const std::vector<int64_t>& split_sizes, int64_t dim) {
  const std::vector<Tensor> pieces = split(x.data(), split_sizes, dim);
  return narrow_like(x, pieces, wrap_dim(dim, x.dim(), "split"));
}

std::vector<Variable> chunk(const Variable& x, int64_t chunks, int64_t dim) {
  const std::vector<Tensor> pieces = chunk(x.data(), chunks, dim);
  return narrow_like(x, pieces, wrap_dim(dim, x.dim(), "chunk"));
}

}  // namespace ddl
