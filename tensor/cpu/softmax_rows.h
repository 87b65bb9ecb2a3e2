#pragma once
// Softmax / log_softmax over the last dim of a contiguous float32 [rows, D] buffer:
// the attention-score case, where the generic strip loop of tensor/cpu/softmax.cpp runs
// one column wide and calls scalar expf per element. Rows are split across threads,
// each row computed by one thread, so results do not depend on the thread count.
#include <cstdint>

namespace ddl::cpu {

// y = softmax(x) (or log_softmax) along each row.
void softmax_rows_f32(const float* x, float* y, int64_t rows, int64_t d, bool log);
// gx from gy and the forward's output y (softmax: y·(g − Σ g·y); log: g − exp(y)·Σ g).
void softmax_rows_backward_f32(const float* gy, const float* y, float* gx, int64_t rows, int64_t d, bool log);

}  // namespace ddl::cpu
