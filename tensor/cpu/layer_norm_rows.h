#pragma once
// Normalisation of the rows of a contiguous float32 [rows, k] buffer on the CPU, the core of
// layer_norm (autograd/ops/layer_norm.cpp's normalize_trailing): mean and variance in two
// passes in float64, xhat rounded once, as the composed ops did (Note [Variance in float64],
// tensor/ops/reduce.cpp), in one pass over memory per row instead of a dozen tensor ops. Each
// row is one thread's: results do not depend on the thread count.
#include <cstdint>

namespace ddl::cpu {

// xhat = (x − mean)·invstd per row; invstd[r] = 1/sqrt(var + eps) (biased variance).
void layer_norm_rows_f32(const float* x, float* xhat, float* invstd, int64_t rows, int64_t k, double eps);
// dx = (g − mean(g) − xhat·mean(g·xhat))·invstd per row, the means rounded to float32.
void layer_norm_rows_backward_f32(const float* g, const float* xhat, const float* invstd, float* dx, int64_t rows,
                                  int64_t k);

}  // namespace ddl::cpu
