// inverse, det and solve on Variables: forward and backward side by side, each backward written
// once for Tensors and Variables (the matrix-calculus results in Giles, "An extended collection of
// matrix derivative results for forward and reverse mode AD", 2008); cholesky, qr and svd with
// PyTorch's formulas (Note [Decomposition gradients]); every backward is differentiable again.
#include <functional>
#include <limits>

#include <ddl/autograd/node.h>
#include <ddl/autograd/ops/elementwise.h>
#include <ddl/autograd/ops/join.h>
#include <ddl/autograd/ops/linalg_decomp.h>
#include <ddl/autograd/ops/reduce.h>
#include <ddl/base/error.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/ops/elementwise.h>
#include <ddl/tensor/ops/join.h>
#include <ddl/tensor/ops/linalg.h>
#include <ddl/tensor/ops/reduce.h>

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

// x [..., m, n] with the entries where j - i lies in [lo, hi] kept, the rest zeroed: tril(x, hi) is
// band(x, -inf, hi), triu(x, lo) is band(x, lo, +inf).
template <typename T>
T band(const T& x, int64_t lo, int64_t hi) {
  const int64_t m = x.size(-2), n = x.size(-1);
  const Tensor d = sub(arange(n).reshape({1, n}), arange(m).reshape({m, 1}));  // [i, j] = j - i
  const Tensor keep = mul(ge(d, static_cast<double>(lo)).to(x.dtype()), le(d, static_cast<double>(hi)).to(x.dtype()));
  return mul(x, T(keep.to(x.device())));
}
constexpr int64_t kAll = std::numeric_limits<int32_t>::max();
template <typename T>
T tril(const T& x, int64_t k = 0) {
  return band(x, -kAll, k);
}
template <typename T>
T triu(const T& x, int64_t k = 0) {
  return band(x, k, kAll);
}

// X B^-1 for square B, as (B^-T X^T)^T
template <typename T>
T solve_right(const T& x, const T& b) {
  return mT(solve(mT(b), mT(x)));
}

// Note [Decomposition gradients]
// The reverse-mode formulas of PyTorch's FunctionsManual.cpp (cholesky_backward, linalg_qr_backward,
// svd_backward) for real inputs: Murray 2016, "Differentiation of the Cholesky decomposition"; Walter
// & Lehmann 2018, "Algorithmic differentiation of linear algebra functions with application in
// optimum experimental design"; Townsend 2016, "Differentiating the singular value decomposition".
// Each output is its own node and gets the gradient of its own cotangent with the others zero; the
// formulas are linear in the cotangents, so the contributions add up to the joint formula's. Triangular
// solves go through the general solve (the factors are well-conditioned where these are used). Each
// is written once for Tensors and Variables; the Variable form recomputes the factorisation from A,
// so that the gradient is differentiable again (double backward).

// A = L L^T: gA = L^-T Phi(L^T gL) L^-1, Phi = tril with the diagonal halved, symmetrised.
template <typename T>
T cholesky_grad(const T& gl, const T& l) {
  const T p = tril(matmul(mT(l), gl));
  const T phi = mul(add(p, mT(tril(p, -1))), 0.5);
  return solve_right(solve(mT(l), phi), l);
}

// A = Q R with m >= n (R square); gq or gr may be undefined (zero):
// gA = (gQ + Q copyltu(triu(gR R^T - Q^T gQ))) R^-T, copyltu mirroring the strict upper part below.
template <typename T>
T qr_grad_tall(const T& gq, const T& gr, const T& q, const T& r) {
  T g = gr.defined() ? matmul(gr, mT(r)) : T();  // [..., n, n]
  if (gq.defined()) g = g.defined() ? sub(g, matmul(mT(q), gq)) : neg(matmul(mT(q), gq));
  const T t = triu(g);
  T ga = matmul(q, add(t, mT(triu(t, 1))));
  if (gq.defined()) ga = add(ga, gq);
  return solve_right(ga, mT(r));
}

// A = Q R (reduced); exactly one of gq, gr is defined. Wide A = [A1 | A2] = Q [U | V]: Q and U are
// the square factorisation of A1, and V = Q^T A2, which adds A2 gV^T to Q's cotangent.
template <typename T>
T qr_grad(const T& gq, const T& gr, const T& q, const T& r) {
  const int64_t m = q.size(-2), n = r.size(-1);
  if (m >= n) return qr_grad_tall(gq, gr, q, r);
  const T u = r.narrow(-1, 0, m), v = r.narrow(-1, m, n - m);
  if (gq.defined()) {
    Shape rest = q.shape();
    rest[rest.size() - 1] = n - m;
    const T zero(zeros(rest, TensorOptions(q.dtype(), q.device())));
    return cat(std::vector<T>{qr_grad_tall(gq, T(), q, u), zero}, -1);
  }
  const T gu = gr.narrow(-1, 0, m), gv = gr.narrow(-1, m, n - m);
  return cat(std::vector<T>{qr_grad_tall(matmul(q, matmul(v, mT(gv))), gu, q, u), matmul(q, gv)}, -1);
}

// A = U diag(S) Vh (reduced), distinct non-zero singular values; exactly one of gu, gs, gvh is defined.
template <typename T>
T svd_grad(const T& gu, const T& gs, const T& gvh, const T& u, const T& s, const T& vh) {
  const int64_t m = u.size(-2), n = vh.size(-1), k = s.size(-1);
  if (gs.defined()) return matmul(mul(u, gs.unsqueeze(-2)), vh);
  // E[j, l] = S_l^2 - S_j^2 off the diagonal, 1 on it (its entries there only ever divide zeros)
  const T s2 = mul(s, s);
  const T eye(eq(arange(k).reshape({k, 1}), arange(k).reshape({1, k})).to(s.dtype()).to(s.device()));
  const T e = add(sub(s2.unsqueeze(-2), s2.unsqueeze(-1)), eye);
  if (gu.defined()) {
    const T x = matmul(mT(u), gu), skew = sub(x, mT(x));
    const T inner = mul(skew, div(s.unsqueeze(-2), e));
    if (m <= n) return matmul(matmul(u, inner), vh);
    // tall: the part of gU outside U's span, (I - U U^T) gU S^-1
    const T gus = div(gu, s.unsqueeze(-2));
    return matmul(add(matmul(u, inner), sub(gus, matmul(u, matmul(mT(u), gus)))), vh);
  }
  const T x = matmul(vh, mT(gvh)), skew = sub(x, mT(x));
  const T inner = mul(s.unsqueeze(-1), div(skew, e));
  if (n <= m) return matmul(matmul(u, inner), vh);
  // wide: S^-1 gVh (I - V Vh)
  const T sgv = div(gvh, s.unsqueeze(-1));
  return matmul(u, add(matmul(inner, vh), sub(sgv, matmul(matmul(sgv, mT(vh)), vh))));
}

// One output of a decomposition as its own node; `grad` maps that output's cotangent to A's, and
// `diff_grad` does the same with Variable ops (create_graph).
Variable decomposition_output(Tensor out, const char* node, const Variable& a,
                              std::function<Tensor(const Tensor&)> grad,
                              std::function<Variable(const Variable&)> diff_grad) {
  return make_result(
      std::move(out), node, {&a},
      [grad = std::move(grad)](const Tensor& g, const Needs&) -> std::vector<Tensor> { return {grad(g)}; },
      [diff_grad = std::move(diff_grad)](const Variable& g, const Needs&) -> std::vector<Variable> {
        return {diff_grad(g)};
      });
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

// See Note [Decomposition gradients].
Variable cholesky(const Variable& a) {
  Tensor l = cholesky(a.data());
  return decomposition_output(
      l, "CholeskyBackward", a, [l](const Tensor& g) { return cholesky_grad(g, l); },
      [a](const Variable& g) { return cholesky_grad(g, cholesky(a)); });
}

std::tuple<Variable, Variable> qr(const Variable& a) {
  // Named copies, not structured bindings: lambdas capture them (C++20 allows binding
  // captures, Clang 14 does not).
  Tensor q, r;
  std::tie(q, r) = qr(a.data());
  const Variable none;
  return {decomposition_output(
              q, "QrBackward", a, [q, r](const Tensor& g) { return qr_grad(g, Tensor(), q, r); },
              [a, none](const Variable& g) {
                auto [vq, vr] = qr(a);
                return qr_grad(g, none, vq, vr);
              }),
          decomposition_output(
              r, "QrBackward", a, [q, r](const Tensor& g) { return qr_grad(Tensor(), g, q, r); },
              [a, none](const Variable& g) {
                auto [vq, vr] = qr(a);
                return qr_grad(none, g, vq, vr);
              })};
}

std::tuple<Variable, Variable, Variable> svd(const Variable& a) {
  Tensor u, s, vh;  // named copies for the lambdas' captures, as in qr
  std::tie(u, s, vh) = svd(a.data());
  const Tensor none;
  const Variable vnone;
  // the Variable form: the cotangent in slot `which` (0 U, 1 S, 2 Vh), the others zero
  const auto diff = [a, vnone](int which) {
    return [a, vnone, which](const Variable& g) {
      auto [vu, vs, vvh] = svd(a);
      return svd_grad(which == 0 ? g : vnone, which == 1 ? g : vnone, which == 2 ? g : vnone, vu, vs, vvh);
    };
  };
  return {decomposition_output(
              u, "SvdBackward", a, [=](const Tensor& g) { return svd_grad(g, none, none, u, s, vh); }, diff(0)),
          decomposition_output(
              s, "SvdBackward", a, [=](const Tensor& g) { return svd_grad(none, g, none, u, s, vh); }, diff(1)),
          decomposition_output(
              vh, "SvdBackward", a, [=](const Tensor& g) { return svd_grad(none, none, g, u, s, vh); }, diff(2))};
}

}  // namespace ddl
