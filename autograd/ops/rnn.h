// One LSTM or GRU layer over a whole sequence as a single fused node, with a
// hand-written backward through time. See Note [Fused recurrent layers] in rnn.cpp
// for why these are not built from per-step ops. Gate order and formulas are
// PyTorch's (torch.nn.LSTM: i, f, g, o; torch.nn.GRU: r, z, n).
#pragma once

#include <ddl/autograd/variable.h>

namespace ddl {

struct LstmLayerResult {
  Variable output;  // [T, B, H]: h_t for every step, in input order
  Variable h_n;     // [B, H]: the last processed step's h
  Variable c_n;     // [B, H]: the last processed step's c
};

// x: [T, B, I]; h0, c0: [B, H] or undefined (zeros); w_ih: [4H, I], w_hh: [4H, H];
// b_ih, b_hh: [4H] or undefined. reverse: process t = T-1 .. 0 (the backward
// direction of a bidirectional layer); output stays in input order.
LstmLayerResult lstm_layer(const Variable& x, const Variable& h0, const Variable& c0, const Variable& w_ih,
                           const Variable& w_hh, const Variable& b_ih, const Variable& b_hh, bool reverse = false);

struct GruLayerResult {
  Variable output;  // [T, B, H]
  Variable h_n;     // [B, H]
};

// As lstm_layer with 3H gates (r, z, n) and no cell state:
// n = tanh(W_in x + b_in + r * (W_hn h + b_hn)), h' = (1 - z) * n + z * h.
GruLayerResult gru_layer(const Variable& x, const Variable& h0, const Variable& w_ih, const Variable& w_hh,
                         const Variable& b_ih, const Variable& b_hh, bool reverse = false);

}  // namespace ddl
