// The Elman RNN and RNNCell as torch.nn.RNN and RNNCell: h' = act(W_ih x + b_ih + W_hh h + b_hh),
// act tanh or relu, with PyTorch's parameter names (weight_ih_l0, ..., "_reverse"), order and
// initialisation U(-1/sqrt(H), 1/sqrt(H)), so state dicts line up. Built from per-step Variable
// ops (one linear and one activation a step), not a fused node: no proj_size, no packed sequences.
#pragma once

#include <string>
#include <vector>

#include <ddl/autograd/functions.h>
#include <ddl/nn/module.h>
#include <ddl/nn/rnn.h>
#include <ddl/tensor/core/options_arg.h>

namespace ddl::nn {

// LibTorch's RNNOptions (LSTM and GRU have their own, nn/rnn.h):
// RNN(RNNOptions(16, 32).num_layers(2).nonlinearity("relu")).
struct RNNOptions {
  RNNOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  DDL_ARG(int64_t, input_size);
  DDL_ARG(int64_t, hidden_size);
  DDL_ARG(std::string, nonlinearity) = "tanh";  // "tanh" or "relu"
  DDL_ARG(int64_t, num_layers) = 1;
  DDL_ARG(bool, bias) = true;
  DDL_ARG(bool, batch_first) = false;  // input and output [B, T, *]; h stays [L * D, B, H]
  DDL_ARG(double, dropout) = 0.0;      // on each layer's output but the last, in training
  DDL_ARG(bool, bidirectional) = false;
};

struct RNNOutput {
  Variable output;  // [T, B, D * H] ([B, T, D * H] when batch_first, [T, D * H] unbatched)
  Variable h_n;     // [L * D, B, H] ([L * D, H] unbatched)
};

class RNN : public Cloneable<RNN> {
 public:
  explicit RNN(const RNNOptions& opts);
  RNN(int64_t input_size, int64_t hidden_size) : RNN(RNNOptions(input_size, hidden_size)) {}
  void reset() override;
  // input: [T, B, I] ([B, T, I] when batch_first) or unbatched [T, I]; h0: [L * D, B, H] or undefined (zeros).
  RNNOutput forward(const Variable& input, const Variable& h0);
  Variable forward(const Variable& input) override { return forward(input, Variable()).output; }
  std::string extra_repr() const override;
  // The parameters of layer `layer`, forward direction or (reverse) the backward one.
  const RecurrentWeights& weights(int64_t layer, bool reverse = false) const;
  const RNNOptions& options() const { return opts_; }

 private:
  RNNOptions opts_;
  std::vector<RecurrentWeights> weights_;  // layer-major, forward then reverse
};

struct RNNCellOptions {
  RNNCellOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  DDL_ARG(int64_t, input_size);
  DDL_ARG(int64_t, hidden_size);
  DDL_ARG(bool, bias) = true;
  DDL_ARG(std::string, nonlinearity) = "tanh";
};

// One step: x [B, I] (or [I]), h [B, H] (or [H]; undefined = zeros) -> h'.
class RNNCell : public Cloneable<RNNCell> {
 public:
  explicit RNNCell(const RNNCellOptions& opts);
  RNNCell(int64_t input_size, int64_t hidden_size, bool bias = true, std::string nonlinearity = "tanh")
      : RNNCell(RNNCellOptions(input_size, hidden_size).bias(bias).nonlinearity(std::move(nonlinearity))) {}
  void reset() override;
  Variable forward(const Variable& x, const Variable& h);
  Variable forward(const Variable& x) override { return forward(x, Variable()); }
  std::string extra_repr() const override;
  Variable weight_ih, weight_hh, bias_ih, bias_hh;  // [H, I], [H, H], [H], [H]

 private:
  RNNCellOptions opts_;
};

}  // namespace ddl::nn
