// Reductions and matrix products: forward and backward side by side.
#include <limits>

#include <ddl/autograd/autocast.h>
#include <ddl/autograd/node.h>
#include <ddl/autograd/ops/elementwise.h>
#include <ddl/autograd/ops/reduce.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/ops/elementwise.h>
#include <ddl/tensor/ops/extreme.h>
#include <ddl/tensor/ops/linalg.h>
#include <ddl/tensor/ops/reduce.h>

namespace ddl {

using autograd::make_result;
using Grads = std::vector<Tensor>;
using VGrads = std::vector<Variable>;
using Needs = std::vector<bool>;

namespace {

// Reinserts the reduced dims (as size 1) so the gradient broadcasts against the input.
// Templated so the Variable (double-backward) forms share it.
template <typename T>
T unreduce(const T& g, const Shape& in_shape, const std::vector<int64_t>& dims, bool keepdim) {
  if (in_shape.empty()) return g;  // a 0-d input reduced over dim 0 or -1: g is 0-d too
  if (keepdim || dims.empty()) {
    if (dims.empty() && !keepdim)
      return g.reshape(Shape(std::vector<int64_t>(static_cast<size_t>(in_shape.size()), 1)));
    return g;
  }
  std::vector<bool> reduced(static_cast<size_t>(in_shape.size()), false);
  for (int64_t d : dims) reduced[wrap_dim(d, in_shape.size(), "sum")] = true;
  Shape s;
  int64_t k = 0;
  for (int64_t i = 0; i < in_shape.size(); ++i) s.push_back(reduced[i] ? 1 : g.size(k++));
  return g.reshape(s);
}

// Matmul's gradients for both gradient types (1-D operands promoted as in the forward).
template <typename T>
std::vector<T> matmul_grads(const T& g, const T& a, const T& b, const Needs& n) {
  const T a2 = a.dim() == 1 ? a.unsqueeze(0) : a;
  const T b2 = b.dim() == 1 ? b.unsqueeze(1) : b;
  // b's dim first: for a dot product g is 0-d, and unsqueeze(-2) needs a dim already there.
  T g2 = g;
  if (b.dim() == 1) g2 = g2.unsqueeze(-1);
  if (a.dim() == 1) g2 = g2.unsqueeze(-2);
  std::vector<T> out(2);
  if (n[0]) out[0] = sum_to(matmul(g2, b2.transpose(-1, -2)), a2.shape()).reshape(a.shape());
  if (n[1]) out[1] = sum_to(matmul(a2.transpose(-1, -2), g2), b2.shape()).reshape(b.shape());
  return out;
}

// y = x W^T + b: dx = g W, dW = g^T x (over flattened leading dims), db = sum of g.
template <typename T>
std::vector<T> linear_grads(const T& g, const T& x, const T& w, const Needs& n) {
  // [*, f] as [rows, f]; not reshape({-1, f}), which cannot infer rows when f is 0
  // (0 input or output features: the gradients are then zeros or empty).
  const auto as_rows = [](const T& t) {
    int64_t rows = 1;
    for (int64_t i = 0; i + 1 < t.dim(); ++i) rows *= t.size(i);
    return t.reshape({rows, t.size(-1)});
  };
  const T g2 = as_rows(g);
  std::vector<T> out(3);
  if (n[0]) out[0] = matmul(g, w);
  if (n[1]) out[1] = matmul(g2.t(), as_rows(x));
  if (n[2]) out[2] = sum(g2, {0});
  return out;
}

int64_t count(const Shape& s, const std::vector<int64_t>& dims) {
  if (dims.empty() || s.empty()) return s.numel();  // a 0-d tensor's one element
  int64_t n = 1;
  for (int64_t d : dims) n *= s[wrap_dim(d, s.size(), "mean")];
  return n;
}

}  // namespace

Variable sum_to(const Variable& x, const Shape& shape) {
  if (x.shape() == shape) return x;
  const Shape s = x.shape();
  return make_result(
      sum_to(x.data(), shape), "SumToBackward", {&x},
      [s](const Tensor& g, const Needs&) -> Grads { return {g.expand(s).contiguous()}; },
      [s](const Variable& g, const Needs&) -> VGrads { return {g.expand(s)}; });
}

Variable sum(const Variable& x, const std::vector<int64_t>& dims, bool keepdim) {
  // See Note [Autocast]: a 16-bit sum is returned in float32 (torch.sum(dtype=float32)), as a
  // float16 one overflows past 65504.
  if (autocast::needs_float32(x)) return sum(autocast::to_float32(x), dims, keepdim);
  const Shape s = x.shape();
  return make_result(
      sum(x.data(), dims, keepdim), "SumBackward", {&x},
      [s, dims, keepdim](const Tensor& g, const Needs&) -> Grads {
        return {unreduce(g, s, dims, keepdim).expand(s).contiguous()};
      },
      [s, dims, keepdim](const Variable& g, const Needs&) -> VGrads {
        return {unreduce(g, s, dims, keepdim).expand(s)};
      });
}

Variable mean(const Variable& x, const std::vector<int64_t>& dims, bool keepdim) {
  const Shape s = x.shape();
  const double n = static_cast<double>(count(s, dims));
  return make_result(
      mean(x.data(), dims, keepdim), "MeanBackward", {&x},
      [s, dims, keepdim, n](const Tensor& g, const Needs&) -> Grads {
        return {div(unreduce(g, s, dims, keepdim).expand(s), n)};
      },
      [s, dims, keepdim, n](const Variable& g, const Needs&) -> VGrads {
        return {div(unreduce(g, s, dims, keepdim).expand(s), n)};
      });
}

Variable var(const Variable& x, const std::vector<int64_t>& dims, int64_t correction, bool keepdim) {
  const Tensor xd = x.data();
  const Shape xs = x.shape();
  Tensor y = var(xd, dims, correction, keepdim);  // checks dtype and dims first
  const double denom = static_cast<double>(std::max<int64_t>(count(xd.shape(), dims) - correction, 0));
  // A 0-d x with nothing left after the correction: PyTorch 1.13's gradient is g·inf
  // (2/0 times g, not times x − mean = 0) and does not depend on x.
  if (xd.dim() == 0 && denom == 0.0)
    return make_result(
        std::move(y), "VarBackward", {&x},
        [](const Tensor& g, const Needs&) -> Grads { return {mul(g, std::numeric_limits<double>::infinity())}; },
        [](const Variable& g, const Needs&) -> VGrads { return {mul(g, std::numeric_limits<double>::infinity())}; });
  return make_result(
      std::move(y), "VarBackward", {&x},
      [xd, dims, keepdim, denom](const Tensor& g, const Needs&) -> Grads {
        // d var / dx = 2 (x - mean) / (n - correction); centered in float64 as the forward
        // (Note [Variance in float64] in tensor/ops/reduce.cpp).
        const Tensor x64 = xd.to(DType::Float64);
        const Tensor centered = sub(x64, mean(x64, dims, true)).to(xd.dtype());
        return {mul(mul(unreduce(g, xd.shape(), dims, keepdim), centered), 2.0 / denom)};
      },
      [x, xs, dims, keepdim, denom](const Variable& g, const Needs&) -> VGrads {
        const Variable x64 = x.to(DType::Float64);  // as the first-order form above
        const Variable centered = sub(x64, mean(x64, dims, true)).to(x.dtype());
        return {mul(mul(unreduce(g, xs, dims, keepdim), centered), 2.0 / denom)};
      });
}

namespace {
// 1 where x holds its row's extreme y, else 0, in dtype t. A NaN extreme is held by
// the NaN elements (NaN != NaN would leave none, and 0/0 gradients everywhere).
Tensor extreme_hits(const Tensor& x, const Tensor& y, DType t) {
  return add(eq(x, y).to(t), mul(ne(x, x).to(t), ne(y, y).to(t)));
}

// The gradient goes to the elements equal to the extreme, split evenly between
// ties, as torch.max() and torch.amax; to the NaNs when the extreme is NaN, as
// torch.max() (1.13's amax gives NaN everywhere then: docs/tensor.md).
Variable extreme(const Variable& x, const std::vector<int64_t>& dims, bool keepdim, bool is_max, const char* op) {
  const Tensor xd = x.data();
  const Tensor y = detail::extreme(xd, dims, keepdim, is_max, false, op);
  return make_result(
      y, is_max ? "AmaxBackward" : "AminBackward", {&x},
      [xd, y, dims, keepdim](const Tensor& g, const Needs&) -> Grads {
        const Tensor hit = extreme_hits(xd, unreduce(y, xd.shape(), dims, keepdim), g.dtype());
        const Tensor ties = unreduce(sum(hit, dims, keepdim), xd.shape(), dims, keepdim);
        return {div(mul(hit, unreduce(g, xd.shape(), dims, keepdim)), ties)};
      },
      [xd, y, dims, keepdim](const Variable& g, const Needs&) -> VGrads {
        // The share of each maximal element is a constant weight.
        const Tensor hit = extreme_hits(xd, unreduce(y, xd.shape(), dims, keepdim), g.dtype());
        const Tensor ties = unreduce(sum(hit, dims, keepdim), xd.shape(), dims, keepdim);
        return {mul(unreduce(g, xd.shape(), dims, keepdim), Variable(div(hit, ties)))};
      });
}
}  // namespace

Variable amax(const Variable& x, const std::vector<int64_t>& dims, bool keepdim) {
  return extreme(x, dims, keepdim, true, "amax");
}
Variable amin(const Variable& x, const std::vector<int64_t>& dims, bool keepdim) {
  return extreme(x, dims, keepdim, false, "amin");
}
// x.max() and x.min() (declared in autograd/variable.h): amax/amin over every dim, named max/min.
Variable Variable::max() const { return extreme(*this, {}, false, true, "max"); }
Variable Variable::min() const { return extreme(*this, {}, false, false, "min"); }

Variable matmul(const Variable& a, const Variable& b) {
  if (autocast::needs_low(a) || autocast::needs_low(b))  // See Note [Autocast]
    return matmul(autocast::to_low(a), autocast::to_low(b));
  const Tensor ad = a.data(), bd = b.data();
  return make_result(
      matmul(ad, bd), "MatmulBackward", {&a, &b},
      [ad, bd](const Tensor& g, const Needs& n) -> Grads { return matmul_grads(g, ad, bd, n); },
      [a, b](const Variable& g, const Needs& n) -> VGrads { return matmul_grads(g, a, b, n); });
}

Variable linear(const Variable& x, const Variable& weight, const Variable& bias) {
  if (autocast::needs_low(x) || autocast::needs_low(weight) || autocast::needs_low(bias))  // See Note [Autocast]
    return linear(autocast::to_low(x), autocast::to_low(weight), autocast::to_low(bias));
  const Tensor xd = x.data(), wd = weight.data();
  const Tensor bd = bias.defined() ? bias.data() : Tensor();
  return make_result(
      linear(xd, wd, bd), "LinearBackward", {&x, &weight, &bias},
      [xd, wd](const Tensor& g, const Needs& n) -> Grads { return linear_grads(g, xd, wd, n); },
      [x, weight](const Variable& g, const Needs& n) -> VGrads { return linear_grads(g, x, weight, n); });
}

}  // namespace ddl
