// inverse, det, solve, cholesky, qr, svd (tensor/ops/linalg_decomp.h): one Eigen call per matrix of
// the batch, in the input's precision (16-bit inputs in float32, rounded once). Error wording follows torch.linalg's
// where it can.
#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <Eigen/LU>
#include <Eigen/QR>
#include <Eigen/SVD>
#include <cmath>
#include <vector>

#include <ddl/base/error.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/ops/linalg_decomp.h>

namespace ddl {

namespace {

template <typename S>
using Mat = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

void check_input(const Tensor& a, const char* op, bool square) {
  DDL_CHECK(a.defined(), op, ": undefined tensor");
  DDL_CHECK(a.device().is_cpu(), op, ": only CPU tensors are supported (ddl has no CUDA linear algebra), got ",
            describe(a));
  DDL_CHECK(is_floating(a.dtype()), op, ": expected a floating point tensor as input, got ", describe(a));
  DDL_CHECK(a.dim() >= 2, op, ": the input tensor A must have at least 2 dimensions, got ", a.shape());
  if (square)
    DDL_CHECK(a.size(-1) == a.size(-2), op, ": A must be batches of square matrices, but they are ", a.size(-2), " by ",
              a.size(-1), " matrices");
}

Shape batch_of(const Shape& s, int64_t trailing) {
  Shape b;
  for (int64_t i = 0; i + trailing < s.size(); ++i) b.push_back(s[i]);
  return b;
}

Shape with(Shape s, std::initializer_list<int64_t> tail) {
  for (int64_t t : tail) s.push_back(t);
  return s;
}

// Calls f(index, matrix) for each matrix of a (contiguous copy), in the scalar type S.
template <typename S, typename F>
void each_matrix(const Tensor& a, F f) {
  const Tensor c = a.contiguous();
  const int64_t m = a.size(-2), n = a.size(-1),
                count = m * n == 0 ? batch_of(a.shape(), 2).numel() : a.numel() / (m * n);
  const S* p = c.data<S>();
  for (int64_t i = 0; i < count; ++i) f(i, Eigen::Map<const Mat<S>>(p + i * m * n, m, n));
}

template <typename S>
S* out_ptr(Tensor& t) {
  return t.data<S>();
}

template <typename S>
Tensor inverse_t(const Tensor& a) {
  const int64_t n = a.size(-1);
  Tensor out = empty(a.shape(), a.dtype());
  S* o = out_ptr<S>(out);
  each_matrix<S>(a, [&](int64_t i, const auto& m) {
    Eigen::PartialPivLU<Mat<S>> lu(m);
    for (int64_t k = 0; k < n; ++k)
      DDL_CHECK(lu.matrixLU()(k, k) != S(0), "inverse: the diagonal element ", k + 1,
                " is zero, the inversion could not be completed because the input matrix is singular (batch element ",
                i, ")");
    Eigen::Map<Mat<S>>(o + i * n * n, n, n) = lu.inverse();
  });
  return out;
}

template <typename S>
Tensor det_t(const Tensor& a) {
  const int64_t n = a.size(-1);
  Tensor out = empty(batch_of(a.shape(), 2), a.dtype());
  S* o = out_ptr<S>(out);
  each_matrix<S>(
      a, [&](int64_t i, const auto& m) { o[i] = n == 0 ? S(1) : Eigen::PartialPivLU<Mat<S>>(m).determinant(); });
  return out;
}

template <typename S>
std::tuple<Tensor, Tensor> slogdet_t(const Tensor& a) {
  const int64_t n = a.size(-1);
  const Shape b = batch_of(a.shape(), 2);
  Tensor sign = empty(b, a.dtype()), logabs = empty(b, a.dtype());
  S *so = out_ptr<S>(sign), *lo = out_ptr<S>(logabs);
  each_matrix<S>(a, [&](int64_t i, const auto& m) {
    S sg = 1, la = 0;
    if (n > 0) {
      Eigen::PartialPivLU<Mat<S>> lu(m);
      sg = static_cast<S>(lu.permutationP().determinant());  // +-1: the parity of the row swaps
      for (int64_t k = 0; k < n; ++k) {
        const S d = lu.matrixLU()(k, k);
        sg = d < 0 ? -sg : (d == 0 ? S(0) : sg);
        la += std::log(std::abs(d));
      }
    }
    so[i] = sg;
    lo[i] = la;
  });
  return {sign, logabs};
}

template <typename S>
Tensor solve_t(const Tensor& a, const Tensor& b) {
  const int64_t n = a.size(-1), k = b.size(-1);
  Tensor out = empty(b.shape(), a.dtype());
  S* o = out_ptr<S>(out);
  const Tensor bc = b.contiguous();
  const S* bp = bc.data<S>();
  each_matrix<S>(a, [&](int64_t i, const auto& m) {
    Eigen::PartialPivLU<Mat<S>> lu(m);
    for (int64_t d = 0; d < n; ++d)
      DDL_CHECK(lu.matrixLU()(d, d) != S(0),
                "solve: the solver failed because the input matrix is singular (batch element ", i, ")");
    Eigen::Map<Mat<S>>(o + i * n * k, n, k) = lu.solve(Eigen::Map<const Mat<S>>(bp + i * n * k, n, k));
  });
  return out;
}

template <typename S>
Tensor cholesky_t(const Tensor& a) {
  const int64_t n = a.size(-1);
  Tensor out = empty(a.shape(), a.dtype());
  S* o = out_ptr<S>(out);
  each_matrix<S>(a, [&](int64_t i, const auto& m) {
    Eigen::LLT<Mat<S>> llt(m);
    DDL_CHECK(llt.info() == Eigen::Success,
              "cholesky: the factorization could not be completed because the input is not positive-definite (batch "
              "element ",
              i, ")");
    Eigen::Map<Mat<S>>(o + i * n * n, n, n) = llt.matrixL().toDenseMatrix();
  });
  return out;
}

template <typename S>
std::tuple<Tensor, Tensor> qr_t(const Tensor& a) {
  const int64_t m = a.size(-2), n = a.size(-1), k = std::min(m, n);
  const Shape b = batch_of(a.shape(), 2);
  Tensor q = empty(with(b, {m, k}), a.dtype()), r = empty(with(b, {k, n}), a.dtype());
  S *qo = out_ptr<S>(q), *ro = out_ptr<S>(r);
  each_matrix<S>(a, [&](int64_t i, const auto& mat) {
    Eigen::HouseholderQR<Mat<S>> h(mat);
    Eigen::Map<Mat<S>>(qo + i * m * k, m, k) = h.householderQ() * Mat<S>::Identity(m, k);
    Eigen::Map<Mat<S>>(ro + i * k * n, k, n) = h.matrixQR().topRows(k).template triangularView<Eigen::Upper>();
  });
  return {q, r};
}

template <typename S>
std::tuple<Tensor, Tensor, Tensor> svd_t(const Tensor& a) {
  const int64_t m = a.size(-2), n = a.size(-1), k = std::min(m, n);
  const Shape b = batch_of(a.shape(), 2);
  Tensor u = empty(with(b, {m, k}), a.dtype()), s = empty(with(b, {k}), a.dtype()),
         vh = empty(with(b, {k, n}), a.dtype());
  S *uo = out_ptr<S>(u), *so = out_ptr<S>(s), *vo = out_ptr<S>(vh);
  each_matrix<S>(a, [&](int64_t i, const auto& mat) {
    Eigen::JacobiSVD<Mat<S>> svd(mat, Eigen::ComputeThinU | Eigen::ComputeThinV);
    Mat<S> U = svd.matrixU(), V = svd.matrixV();
    for (int64_t j = 0; j < k; ++j) {
      Eigen::Index at = 0;
      U.col(j).cwiseAbs().maxCoeff(&at);
      if (U(at, j) < 0) {  // See the sign convention in linalg_decomp.h
        U.col(j) *= S(-1);
        V.col(j) *= S(-1);
      }
    }
    Eigen::Map<Mat<S>>(uo + i * m * k, m, k) = U;
    Eigen::Map<Eigen::Matrix<S, Eigen::Dynamic, 1>>(so + i * k, k) = svd.singularValues();
    Eigen::Map<Mat<S>>(vo + i * k * n, k, n) = V.transpose();
  });
  return {u, s, vh};
}

bool is_16bit(const Tensor& a) { return a.dtype() == DType::Float16 || a.dtype() == DType::BFloat16; }
Tensor f32(const Tensor& a) { return a.to(DType::Float32); }

}  // namespace

Tensor inverse(const Tensor& a) {
  check_input(a, "inverse", true);
  if (is_16bit(a)) return inverse(f32(a)).to(a.dtype());  // in float32, rounded once
  return a.dtype() == DType::Float64 ? inverse_t<double>(a) : inverse_t<float>(a);
}

Tensor det(const Tensor& a) {
  check_input(a, "det", true);
  if (is_16bit(a)) return det(f32(a)).to(a.dtype());  // in float32, rounded once
  return a.dtype() == DType::Float64 ? det_t<double>(a) : det_t<float>(a);
}

std::tuple<Tensor, Tensor> slogdet(const Tensor& a) {
  check_input(a, "slogdet", true);
  if (is_16bit(a)) {
    auto [sg, la] = slogdet(f32(a));
    return {sg.to(a.dtype()), la.to(a.dtype())};
  }
  return a.dtype() == DType::Float64 ? slogdet_t<double>(a) : slogdet_t<float>(a);
}

Tensor solve(const Tensor& a, const Tensor& b) {
  check_input(a, "solve", true);
  DDL_CHECK(b.defined() && b.dtype() == a.dtype() && b.device() == a.device(),
            "solve: expected B of A's dtype and device, got A ", describe(a), " and B ", describe(b));
  // B is a vector per matrix when it has one dim, or exactly A's batch then n (torch.linalg.solve)
  if (is_16bit(a)) return solve(f32(a), f32(b)).to(a.dtype());
  const bool vector = b.dim() == 1 || (b.dim() == a.dim() - 1 && b.shape() == batch_of(a.shape(), 1));
  const Tensor b2 = vector ? b.unsqueeze(-1) : b;
  DDL_CHECK(b2.dim() >= 2 && b2.size(-2) == a.size(-1), "solve: incompatible shapes of A ", a.shape(), " and B ",
            b.shape(), " (A is n by n: B must be [..., n, k] or [..., n])");
  const Shape batch = broadcast_shapes(batch_of(a.shape(), 2), batch_of(b2.shape(), 2), "solve");
  const int64_t n = a.size(-1);
  const Tensor ae = a.expand(with(batch, {n, n})), be = b2.expand(with(batch, {n, b2.size(-1)}));
  Tensor x = a.dtype() == DType::Float64 ? solve_t<double>(ae, be) : solve_t<float>(ae, be);
  return vector ? x.squeeze(-1) : x;
}

Tensor cholesky(const Tensor& a) {
  check_input(a, "cholesky", true);
  if (is_16bit(a)) return cholesky(f32(a)).to(a.dtype());  // in float32, rounded once
  return a.dtype() == DType::Float64 ? cholesky_t<double>(a) : cholesky_t<float>(a);
}

std::tuple<Tensor, Tensor> qr(const Tensor& a) {
  check_input(a, "qr", false);
  if (is_16bit(a)) {
    auto [q, r] = qr(f32(a));
    return {q.to(a.dtype()), r.to(a.dtype())};
  }
  return a.dtype() == DType::Float64 ? qr_t<double>(a) : qr_t<float>(a);
}

std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& a) {
  check_input(a, "svd", false);
  if (is_16bit(a)) {
    auto [u, sv, vh] = svd(f32(a));
    return {u.to(a.dtype()), sv.to(a.dtype()), vh.to(a.dtype())};
  }
  return a.dtype() == DType::Float64 ? svd_t<double>(a) : svd_t<float>(a);
}

}  // namespace ddl
