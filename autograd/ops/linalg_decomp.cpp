// inverse, det and solve on Variables: forward and backward side by side, each backward written
// once for Tensors and Variables (the matrix-calculus results in Giles, "An extended collection of
// matrix derivative results for forward and reverse mode AD", 2008). cholesky, qr and svd record a
// node whose backward refuses, so a gradient never silently skips them.
#include <ddl/autograd/node.h>
#include <ddl/autograd/ops/elementwise.h>
#include <ddl/autograd/ops/linalg_decomp.h>
#include <ddl/autograd/ops/reduce.h>
#include <ddl/tensor/elementwise.h>
#include <ddl/tensor/error.h>
#include <ddl/tensor/factory.h>
#include <ddl/tensor/linalg.h>
#include <ddl/tensor/reduce.h>

namespace ddl {

using autograd::make_result;
using Needs = std::vector<bool>;

namespace {

template <typename T>
T mT(const T& x) {
  return x.transpose(-1, -2);
}

// -Y^T g Y^T for Y = A^-1
template <typename T>
T inverse_grad(const T& g, const T& y) {
  return neg(matmul(matmul(mT(y), g), mT(y)));
}

// g det(A) A^-T, g and det [...] broadcast over the matrix
template <typename T>
T det_grad(const T& g, const T& d, const T& a) {
  return mul(mul(g, d).unsqueeze(-1).unsqueeze(-1), mT(inverse(a)));
}

// B's and A's gradients; `vector`: B was [..., n]
template <typename T>
std::vector<T> solve_grads(const T& g, const T& a, const T& x, const Shape& a_shape, const Shape& b_shape, bool vector,
                           const Needs& need) {
  const T g2 = vector ? g.unsqueeze(-1) : g, x2 = vector ? x.unsqueeze(-1) : x;
  const T gb = solve(mT(a), g2);
  std::vector<T> out(2);
  if (need[0]) out[0] = sum_to(neg(matmul(gb, mT(x2))), a_shape);
  if (need[1]) out[1] = sum_to(vector ? gb.squeeze(-1) : gb, b_shape);
  return out;
}

[[noreturn]] void refuse(const char* op) {
  DDL_CHECK(false, op,
            ": backward is not implemented in ddl (forward only; see docs/tensor_ops.md, \"Linear algebra\")");
  throw;  // unreachable
}

Variable forward_only(Tensor out, const char* op, const char* node, const Variable& a) {
  return make_result(
      std::move(out), node, {&a}, [op](const Tensor&, const Needs&) -> std::vector<Tensor> { refuse(op); },
      [op](const Variable&, const Needs&) -> std::vector<Variable> { refuse(op); });
}

}  // namespace

Variable inverse(const Variable& a) {
  Tensor y = inverse(a.data());
  const Tensor ys = y;
  return make_result(
      std::move(y), "InverseBackward", {&a},
      [ys](const Tensor& g, const Needs&) -> std::vector<Tensor> { return {inverse_grad(g, ys)}; },
      [a](const Variable& g, const Needs&) -> std::vector<Variable> { return {inverse_grad(g, inverse(a))}; });
}

Variable det(const Variable& a) {
  Tensor d = det(a.data());
  const Tensor ds = d;
  return make_result(
      std::move(d), "DetBackward", {&a},
      [ds, ad = a.data()](const Tensor& g, const Needs&) -> std::vector<Tensor> { return {det_grad(g, ds, ad)}; },
      [a](const Variable& g, const Needs&) -> std::vector<Variable> { return {det_grad(g, det(a), a)}; });
}

std::tuple<Variable, Variable> slogdet(const Variable& a) {
  auto [sign, logabs] = slogdet(a.data());
  Variable la = make_result(
      std::move(logabs), "SlogdetBackward", {&a},
      [ad = a.data()](const Tensor& g, const Needs&) -> std::vector<Tensor> {
        return {mul(g.unsqueeze(-1).unsqueeze(-1), mT(inverse(ad)))};
      },
      [a](const Variable& g, const Needs&) -> std::vector<Variable> {
        return {mul(g.unsqueeze(-1).unsqueeze(-1), mT(inverse(a)))};
      });
  // the sign is piecewise constant: a zero gradient, but an output that requires grad, as PyTorch's
  Variable sg = make_result(
      std::move(sign), "SlogdetBackward", {&a},
      [ad = a.data()](const Tensor&, const Needs&) -> std::vector<Tensor> { return {zeros_like(ad)}; },
      [a](const Variable&, const Needs&) -> std::vector<Variable> { return {Variable(zeros_like(a.data()))}; });
  return {sg, la};
}

Variable solve(const Variable& a, const Variable& b) {
  Tensor x = solve(a.data(), b.data());
  const Tensor xs = x;
  const Shape as = a.shape(), bs = b.shape();
  const bool vector = x.dim() == a.dim() - 1;
  return make_result(
      std::move(x), "SolveBackward", {&a, &b},
      [ad = a.data(), xs, as, bs, vector](const Tensor& g, const Needs& n) {
        return solve_grads(g, ad, xs, as, bs, vector, n);
      },
      [a, b, as, bs, vector](const Variable& g, const Needs& n) {
        return solve_grads(g, a, solve(a, b), as, bs, vector, n);
      });
}

Variable cholesky(const Variable& a) { return forward_only(cholesky(a.data()), "cholesky", "CholeskyBackward", a); }

std::tuple<Variable, Variable> qr(const Variable& a) {
  auto [q, r] = qr(a.data());
  return {forward_only(q, "qr", "QrBackward", a), forward_only(r, "qr", "QrBackward", a)};
}

std::tuple<Variable, Variable, Variable> svd(const Variable& a) {
  auto [u, s, vh] = svd(a.data());
  return {forward_only(u, "svd", "SvdBackward", a), forward_only(s, "svd", "SvdBackward", a),
          forward_only(vh, "svd", "SvdBackward", a)};
}

}  // namespace ddl
