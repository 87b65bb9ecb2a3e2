// Differentiable views and casts. A view's backward puts the gradient back in
// the input's layout: the inverse reshape/permute, or a zero tensor with the
// gradient copied into the viewed region (slices), or a sum (expand). Each backward
// is itself made of views and region embeddings, so views double-backward.
#include <numeric>

#include <ddl/autograd/node.h>
#include <ddl/autograd/ops/reduce.h>
#include <ddl/autograd/variable.h>
#include <ddl/autograd/variable_impl.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/ops/reduce.h>

namespace ddl {

using autograd::make_result;
using autograd::detail::as_view;
using Grads = std::vector<Tensor>;
using VGrads = std::vector<Variable>;
using Needs = std::vector<bool>;

namespace {

Variable reshape_like(const Variable& x, Tensor out, const char* name) {
  const Shape s = x.shape();
  return as_view(make_result(
                     std::move(out), name, {&x}, [s](const Tensor& g, const Needs&) -> Grads { return {g.reshape(s)}; },
                     [s](const Variable& g, const Needs&) -> VGrads { return {g.reshape(s)}; }),
                 x);
}

// zeros of shape s with g written into view(zeros): the backward of a region view.
template <typename ViewFn>
Tensor embed(const Tensor& g, const Shape& s, ViewFn view) {
  Tensor gx = zeros(s, TensorOptions(g.dtype(), g.device()));
  view(gx).copy_(g);
  return gx;
}

// The same as a differentiable op (for double backward): its own gradient is the view.
template <typename ViewFn>
Variable embed(const Variable& g, const Shape& s, ViewFn view) {
  return make_result(
      embed(g.data(), s, view), "EmbedRegionBackward", {&g},
      [view](const Tensor& gg, const Needs&) -> Grads { return {view(gg).contiguous()}; },
      [view](const Variable& gg, const Needs&) -> VGrads { return {view(gg)}; });
}

// Backward of any view that selects a region: scatter g into zeros via the same view.
// `view` is generic: it is applied to Tensors and to Variables.
template <typename ViewFn>
Variable region_view(const Variable& x, const char* name, ViewFn view) {
  const Shape s = x.shape();
  const DType t = x.dtype();
  return as_view(make_result(
                     view(x.data()), name, {&x},
                     [s, t, view](const Tensor& g, const Needs&) -> Grads { return {embed(g.to(t), s, view)}; },
                     [s, t, view](const Variable& g, const Needs&) -> VGrads {
                       return {embed(g.dtype() == t ? g : g.to(t), s, view)};  // no cast node when none is needed
                     }),
                 x);
}

}  // namespace

Variable Variable::view(const Shape& shape) const { return reshape_like(*this, data().view(shape), "ViewBackward"); }
Variable Variable::reshape(const Shape& shape) const {
  return reshape_like(*this, data().reshape(shape), "ReshapeBackward");
}
Variable Variable::flatten(int64_t s, int64_t e) const {
  return reshape_like(*this, data().flatten(s, e), "FlattenBackward");
}
Variable Variable::squeeze() const { return reshape_like(*this, data().squeeze(), "SqueezeBackward"); }
Variable Variable::squeeze(int64_t d) const { return reshape_like(*this, data().squeeze(d), "SqueezeBackward"); }
Variable Variable::unsqueeze(int64_t d) const { return reshape_like(*this, data().unsqueeze(d), "UnsqueezeBackward"); }

Variable Variable::contiguous() const {
  return as_view(
      make_result(
          data().contiguous(), "ContiguousBackward", {this}, [](const Tensor& g, const Needs&) -> Grads { return {g}; },
          [](const Variable& g, const Needs&) -> VGrads { return {g}; }),
      *this);
}

Variable Variable::permute(const std::vector<int64_t>& dims) const {
  Tensor out = data().permute(dims);  // checks dims before they index `inverse`
  std::vector<int64_t> inverse(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) inverse[wrap_dim(dims[i], dim(), "permute")] = static_cast<int64_t>(i);
  return as_view(make_result(
                     std::move(out), "PermuteBackward", {this},
                     [inverse](const Tensor& g, const Needs&) -> Grads { return {g.permute(inverse)}; },
                     [inverse](const Variable& g, const Needs&) -> VGrads { return {g.permute(inverse)}; }),
                 *this);
}

Variable Variable::transpose(int64_t d0, int64_t d1) const {
  return as_view(make_result(
                     data().transpose(d0, d1), "TransposeBackward", {this},
                     [d0, d1](const Tensor& g, const Needs&) -> Grads { return {g.transpose(d0, d1)}; },
                     [d0, d1](const Variable& g, const Needs&) -> VGrads { return {g.transpose(d0, d1)}; }),
                 *this);
}

Variable Variable::t() const {
  return as_view(make_result(
                     data().t(), "TBackward", {this}, [](const Tensor& g, const Needs&) -> Grads { return {g.t()}; },
                     [](const Variable& g, const Needs&) -> VGrads { return {g.t()}; }),
                 *this);
}

Variable Variable::narrow(int64_t d, int64_t start, int64_t length) const {
  return region_view(*this, "NarrowBackward", [d, start, length](const auto& t) { return t.narrow(d, start, length); });
}

Variable Variable::slice(int64_t d, int64_t start, int64_t end, int64_t step) const {
  return region_view(*this, "SliceBackward",
                     [d, start, end, step](const auto& t) { return t.slice(d, start, end, step); });
}

Variable Variable::select(int64_t d, int64_t index) const {
  return region_view(*this, "SelectBackward", [d, index](const auto& t) { return t.select(d, index); });
}

Variable Variable::expand(const Shape& shape) const {
  const Shape s = this->shape();
  return as_view(make_result(
                     data().expand(shape), "ExpandBackward", {this},
                     [s](const Tensor& g, const Needs&) -> Grads { return {sum_to(g, s)}; },
                     [s](const Variable& g, const Needs&) -> VGrads { return {sum_to(g, s)}; }),
                 *this);
}

Variable Variable::to(DType dtype) const {
  const DType from = this->dtype();
  if (dtype == from) return *this;
  return make_result(
      data().to(dtype), "ToBackward", {this}, [from](const Tensor& g, const Needs&) -> Grads { return {g.to(from)}; },
      [from](const Variable& g, const Needs&) -> VGrads { return {g.to(from)}; });
}

Variable Variable::to(Device device) const {
  const Device from = this->device();
  if (device == from) return *this;
  return make_result(
      data().to(device), "ToDeviceBackward", {this},
      [from](const Tensor& g, const Needs&) -> Grads { return {g.to(from)}; },
      [from](const Variable& g, const Needs&) -> VGrads { return {g.to(from)}; });
}

}  // namespace ddl
