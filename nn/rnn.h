// Recurrent layers as torch.nn.LSTM, GRU, LSTMCell and GRUCell: same gate order,
// parameter names (weight_ih_l0, weight_hh_l0, bias_ih_l0, bias_hh_l0, "_reverse"
// for the backward direction) and initialisation U(-1/sqrt(H), 1/sqrt(H)), so state
// dicts line up with PyTorch's. No proj_size, no packed sequences.
// Each layer runs as one fused node (autograd/ops/rnn.h).
#pragma once

#include <vector>

#include <ddl/autograd/functions.h>
#include <ddl/nn/module.h>
#include <ddl/tensor/core/options_arg.h>

namespace ddl::nn {

// LibTorch's options: LSTM(LSTMOptions(16, 32).num_layers(2).batch_first(true)).
struct LSTMOptions {
  LSTMOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  DDL_ARG(int64_t, input_size);
  DDL_ARG(int64_t, hidden_size);
  DDL_ARG(int64_t, num_layers) = 1;
  DDL_ARG(bool, bias) = true;
  DDL_ARG(bool, batch_first) = false;  // input and output [B, T, *] instead of [T, B, *]; states stay [L * D, B, H]
  DDL_ARG(double, dropout) = 0.0;      // on each layer's output but the last, in training
  DDL_ARG(bool, bidirectional) = false;
};

struct GRUOptions {
  GRUOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  DDL_ARG(int64_t, input_size);
  DDL_ARG(int64_t, hidden_size);
  DDL_ARG(int64_t, num_layers) = 1;
  DDL_ARG(bool, bias) = true;
  DDL_ARG(bool, batch_first) = false;  // input and output [B, T, *] instead of [T, B, *]; states stay [L * D, B, H]
  DDL_ARG(double, dropout) = 0.0;      // on each layer's output but the last, in training
  DDL_ARG(bool, bidirectional) = false;
};

struct LSTMCellOptions {
  LSTMCellOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  DDL_ARG(int64_t, input_size);
  DDL_ARG(int64_t, hidden_size);
  DDL_ARG(bool, bias) = true;
};

struct GRUCellOptions {
  GRUCellOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  DDL_ARG(int64_t, input_size);
  DDL_ARG(int64_t, hidden_size);
  DDL_ARG(bool, bias) = true;
};

// h, c: [num_layers * num_directions, B, H] ([L * D, H] for unbatched input).
// An undefined member means zeros.
struct LSTMState {
  Variable h, c;
};

struct LSTMOutput {
  Variable output;  // [T, B, D * H] ([B, T, D * H] when batch_first, [T, D * H] unbatched)
  LSTMState state;  // (h_n, c_n)
};

struct GRUOutput {
  Variable output;  // as LSTMOutput::output
  Variable h_n;     // [L * D, B, H]
};

// One layer-direction's parameters (handles to the registered ones); biases
// undefined when bias=false.
struct RecurrentWeights {
  Variable w_ih, w_hh, b_ih, b_hh;
};

class LSTM : public Cloneable<LSTM> {
 public:
  explicit LSTM(const LSTMOptions& opts);
  LSTM(int64_t input_size, int64_t hidden_size) : LSTM(LSTMOptions(input_size, hidden_size)) {}
  void reset() override;
  // input: [T, B, I] ([B, T, I] when batch_first) or unbatched [T, I].
  LSTMOutput forward(const Variable& input, const LSTMState& state);
  // The output only, from zero states (what Sequential calls).
  Variable forward(const Variable& input) override { return forward(input, LSTMState{}).output; }
  std::string extra_repr() const override;
  // The parameters of layer `layer`, forward direction or (reverse) the backward one.
  const RecurrentWeights& weights(int64_t layer, bool reverse = false) const;

 private:
  LSTMOptions opts_;
  std::vector<RecurrentWeights> weights_;  // layer-major, forward then reverse
};

class GRU : public Cloneable<GRU> {
 public:
  explicit GRU(const GRUOptions& opts);
  GRU(int64_t input_size, int64_t hidden_size) : GRU(GRUOptions(input_size, hidden_size)) {}
  void reset() override;
  // h0: [L * D, B, H] or undefined (zeros).
  GRUOutput forward(const Variable& input, const Variable& h0);
  Variable forward(const Variable& input) override { return forward(input, Variable()).output; }
  std::string extra_repr() const override;
  const RecurrentWeights& weights(int64_t layer, bool reverse = false) const;

 private:
  GRUOptions opts_;
  std::vector<RecurrentWeights> weights_;
};

// One LSTM step: x [B, I] (or [I]), state [B, H] each (undefined = zeros) -> (h', c').
class LSTMCell : public Cloneable<LSTMCell> {
 public:
  LSTMCell(int64_t input_size, int64_t hidden_size, bool bias = true);
  explicit LSTMCell(const LSTMCellOptions& o) : LSTMCell(o.input_size(), o.hidden_size(), o.bias()) {}
  void reset() override;
  LSTMState forward(const Variable& x, const LSTMState& state);
  Variable forward(const Variable& x) override { return forward(x, LSTMState{}).h; }
  std::string extra_repr() const override;
  Variable weight_ih, weight_hh, bias_ih, bias_hh;  // [4H, I], [4H, H], [4H], [4H]

 private:
  int64_t input_size_, hidden_size_;
  bool bias_;
};

// One GRU step: x [B, I] (or [I]), h [B, H] (undefined = zeros) -> h'.
class GRUCell : public Cloneable<GRUCell> {
 public:
  GRUCell(int64_t input_size, int64_t hidden_size, bool bias = true);
  explicit GRUCell(const GRUCellOptions& o) : GRUCell(o.input_size(), o.hidden_size(), o.bias()) {}
  void reset() override;
  Variable forward(const Variable& x, const Variable& h);
  Variable forward(const Variable& x) override { return forward(x, Variable()); }
  std::string extra_repr() const override;
  Variable weight_ih, weight_hh, bias_ih, bias_hh;  // [3H, I], [3H, H], [3H], [3H]

 private:
  int64_t input_size_, hidden_size_;
  bool bias_;
};

}  // namespace ddl::nn
