// Differentiable inverse, det and solve (tensor/ops/linalg_decomp.h has the semantics), and cholesky, qr
// and svd with gradients (PyTorch's formulas), all differentiable again (double backward).
#pragma once

#include <tuple>

#include <ddl/autograd/variable.h>
#include <ddl/tensor/ops/linalg_decomp.h>

namespace ddl {

// d A^-1 = -A^-T g A^-T; differentiable again.
Variable inverse(const Variable& a);
// d det = g det(A) A^-T: needs an invertible A (PyTorch also handles singular ones; ddl refuses).
Variable det(const Variable& a);
// {sign, log|det|}: sign is a constant; d log|det| = g A^-T, differentiable again; like det,
// needs an invertible A for the gradient.
std::tuple<Variable, Variable> slogdet(const Variable& a);
// dB = solve(A^T, g), dA = -dB X^T, summed over broadcast batch dims; differentiable again.
Variable solve(const Variable& a, const Variable& b);
// gA symmetric (A is read from its lower triangle, but its gradient is PyTorch's symmetric one).
Variable cholesky(const Variable& a);
// Square, tall and wide A; needs R's diagonal (R's leading m x m block's, when wide) non-zero.
std::tuple<Variable, Variable> qr(const Variable& a);
// Needs distinct, non-zero singular values when U or Vh get a gradient (the formula divides by
// S_j^2 - S_k^2 and by S); a gradient through S alone needs neither. U and Vh are unique only up to
// a sign per pair, so only losses invariant to those signs (U diag(S) Vh, S, |U|...) are meaningful.
std::tuple<Variable, Variable, Variable> svd(const Variable& a);

}  // namespace ddl
