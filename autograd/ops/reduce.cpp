// Reductions and matrix products: forward and backward side by side.
#include "autograd/ops/reduce.h"

#include "autograd/node.h"
#include "tensor/elementwise.h"
#include "tensor/factory.h"
#include "tensor/linalg.h"
#include "tensor/reduce.h"

namespace ddl {

using autograd::make_result;
using Grads = std::vector<Tensor>;
using Needs = std::vector<bool>;

namespace {

// Reinserts the reduced dims (as size 1) so the gradient broadcasts against the input.
Tensor unreduce(const Tensor& g, const Shape& in_shape, const std::vector<int64_t>& dims, bool keepdim) {
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

int64_t count(const Shape& s, const std::vector<int64_t>& dims) {
  if (dims.empty()) return s.numel();
  int64_t n = 1;
  for (int64_t d : dims) n *= s[wrap_dim(d, s.size(), "mean")];
  return n;
}

}  // namespace

Variable sum(const Variable& x, const std::vector<int64_t>& dims, bool keepdim) {
  const Shape s = x.shape();
  return make_result(sum(x.data(), dims, keepdim), "SumBackward", {&x},
                     [s, dims, keepdim](const Tensor& g, const Needs&) -> Grads {
                       return {unreduce(g, s, dims, keepdim).expand(s).contiguous()};
                     });
}

Variable mean(const Variable& x, const std::vector<int64_t>& dims, bool keepdim) {
  const Shape s = x.shape();
  const double n = static_cast<double>(count(s, dims));
  return make_result(mean(x.data(), dims, keepdim), "MeanBackward", {&x},
                     [s, dims, keepdim, n](const Tensor& g, const Needs&) -> Grads {
                       return {div(unreduce(g, s, dims, keepdim).expand(s), n)};
                     });
}

Variable var(const Variable& x, const std::vector<int64_t>& dims, int64_t correction, bool keepdim) {
  const Tensor xd = x.data();
  const double denom = static_cast<double>(std::max<int64_t>(count(xd.shape(), dims) - correction, 0));
  return make_result(var(xd, dims, correction, keepdim), "VarBackward", {&x},
                     [xd, dims, keepdim, denom](const Tensor& g, const Needs&) -> Grads {
                       // d var / dx = 2 (x - mean) / (n - correction)
                       const Tensor centered = sub(xd, mean(xd, dims, true));
                       return {mul(mul(unreduce(g, xd.shape(), dims, keepdim), centered), 2.0 / denom)};
                     });
}

namespace {
Variable extreme(const Variable& x, const std::vector<int64_t>& dims, bool keepdim, bool is_max) {
  const Tensor xd = x.data();
  const Tensor y = is_max ? amax(xd, dims, keepdim) : amin(xd, dims, keepdim);
  return make_result(y, is_max ? "AmaxBackward" : "AminBackward", {&x},
                     [xd, y, dims, keepdim](const Tensor& g, const Needs&) -> Grads {
                       const Tensor hit = eq(xd, unreduce(y, xd.shape(), dims, keepdim)).to(g.dtype());
                       const Tensor ties = unreduce(sum(hit, dims, keepdim), xd.shape(), dims, keepdim);
                       return {div(mul(hit, unreduce(g, xd.shape(), dims, keepdim)), ties)};
                     });
}
}  // namespace

Variable amax(const Variable& x, const std::vector<int64_t>& dims, bool keepdim) {
  return extreme(x, dims, keepdim, true);
}
Variable amin(const Variable& x, const std::vector<int64_t>& dims, bool keepdim) {
  return extreme(x, dims, keepdim, false);
}

Variable matmul(const Variable& a, const Variable& b) {
  const Tensor ad = a.data(), bd = b.data();
  return make_result(matmul(ad, bd), "MatmulBackward", {&a, &b}, [ad, bd](const Tensor& g, const Needs& n) -> Grads {
    // Promote 1-D operands as the forward did, then drop the added dims again.
    const Tensor a2 = ad.dim() == 1 ? ad.unsqueeze(0) : ad;
    const Tensor b2 = bd.dim() == 1 ? bd.unsqueeze(1) : bd;
    Tensor g2 = g;
    if (ad.dim() == 1) g2 = g2.unsqueeze(-2);
    if (bd.dim() == 1) g2 = g2.unsqueeze(-1);
    Grads out(2);
    if (n[0]) out[0] = sum_to(matmul(g2, b2.transpose(-1, -2)), a2.shape()).reshape(ad.shape());
    if (n[1]) out[1] = sum_to(matmul(a2.transpose(-1, -2), g2), b2.shape()).reshape(bd.shape());
    return out;
  });
}

Variable linear(const Variable& x, const Variable& weight, const Variable& bias) {
  const Tensor xd = x.data(), wd = weight.data();
  const Tensor bd = bias.defined() ? bias.data() : Tensor();
  return make_result(linear(xd, wd, bd), "LinearBackward", {&x, &weight, &bias},
                     [xd, wd](const Tensor& g, const Needs& n) -> Grads {
                       // y = x W^T + b: dx = g W, dW = g^T x (over flattened leading dims), db = sum of g.
                       const Tensor g2 = g.reshape({-1, g.size(-1)});
                       const Tensor x2 = xd.reshape({-1, xd.size(-1)});
                       Grads out(3);
                       if (n[0]) out[0] = matmul(g, wd);
                       if (n[1]) out[1] = matmul(g2.t(), x2);
                       if (n[2]) out[2] = sum(g2, {0});
                       return out;
                     });
}

}  // namespace ddl
