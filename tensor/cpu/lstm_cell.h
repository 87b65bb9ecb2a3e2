#pragma once
// One LSTM time step's elementwise work, fused, for contiguous float32 rows on the CPU
// (autograd/ops/rnn.cpp's lstm_layer): the gate nonlinearities, the cell and the output
// in one pass instead of a dozen [B, H] tensor ops. Gates are ordered i, f, g, o as in
// torch.nn.LSTM. Each row is computed by one thread: results do not depend on the count.
#include <cstdint>

namespace ddl::cpu {

// gates [B, 4H] (pre-activations) and c_prev [B, H] -> acts [B, 4H] = σ(i), σ(f), tanh(g),
// σ(o); c = f·c_prev + i·g; h = o·tanh(c) (c, h: [B, H]).
void lstm_cell_forward_f32(const float* gates, const float* c_prev, float* acts, float* c, float* h, int64_t batch,
                           int64_t hs);

// Backward of that step: given acts, c and c_prev, dh (the gradient into h) and dc (into c,
// from the next step), writes da [B, 4H] (into the pre-activations) and replaces dc by the
// gradient into c_prev.
void lstm_cell_backward_f32(const float* acts, const float* c, const float* c_prev, const float* dh, float* dc,
                            float* da, int64_t batch, int64_t hs);

}  // namespace ddl::cpu
