// Differentiable inverse, det and solve (tensor/linalg_decomp.h has the semantics); cholesky, qr
// and svd on Variables compute forward only, and their backward refuses with an error naming the op.
#pragma once

#include <tuple>

#include <ddl/autograd/variable.h>
#include <ddl/tensor/linalg_decomp.h>

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
// No gradients: backward through these throws a ddl::Error naming the op.
Variable cholesky(const Variable& a);
std::tuple<Variable, Variable> qr(const Variable& a);
std::tuple<Variable, Variable, Variable> svd(const Variable& a);

}  // namespace ddl
