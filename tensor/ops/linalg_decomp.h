// Dense linear algebra on batches of matrices, as torch.linalg: inverse, det, solve, cholesky,
// qr (reduced) and svd (reduced). x: [..., m, n], each leading index one matrix. CPU only (Eigen),
// floating point (16-bit computed in float32); a CUDA tensor is refused with an error naming the op.
#pragma once

#include <tuple>

#include <ddl/tensor/core/tensor.h>

namespace ddl {

// A^-1 for square A; refuses a singular A (an exactly zero pivot of its LU factorisation).
Tensor inverse(const Tensor& a);
// det(A) for square A (0 when singular; 1 for 0x0), through LU with partial pivoting.
Tensor det(const Tensor& a);
// {sign, log|det|} of square A (torch.linalg.slogdet): {0, -inf} when singular; stable where det
// over- or underflows.
std::tuple<Tensor, Tensor> slogdet(const Tensor& a);
// X with A X = B: A [..., n, n]; B [..., n, k], or [..., n] (a vector per matrix, as
// torch.linalg.solve); batch dims broadcast. Refuses a singular A.
Tensor solve(const Tensor& a, const Tensor& b);
// The lower-triangular L with A = L L^T, for symmetric positive-definite A (read from its lower
// triangle, as LAPACK's potrf); refuses an A that is not positive-definite.
Tensor cholesky(const Tensor& a);
// Reduced QR of A [..., m, n]: Q [..., m, k] with orthonormal columns, R [..., k, n] upper
// triangular, k = min(m, n) (Householder, as LAPACK's geqrf/orgqr, so signs match PyTorch's).
std::tuple<Tensor, Tensor> qr(const Tensor& a);
// Reduced SVD: A = U diag(S) Vh with U [..., m, k], S [..., k] descending, Vh [..., k, n].
// Singular vectors are unique only up to sign: ddl flips each pair so that the largest-magnitude
// entry of U's column is positive (PyTorch leaves the sign to LAPACK).
std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& a);

}  // namespace ddl
