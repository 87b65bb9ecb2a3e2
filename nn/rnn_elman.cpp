// RNN and RNNCell (torch.nn.RNN, torch.nn.RNNCell): registration with PyTorch's names and the
// stacking of layers and directions, as nn/rnn.cpp does for LSTM and GRU. Each step is
// h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh); the input projection runs once for all steps.
#include <cmath>
#include <sstream>

#include <ddl/nn/init.h>
#include <ddl/nn/rnn_elman.h>
#include <ddl/tensor/core/factory.h>

namespace ddl::nn {

namespace {

void check_common(const char* type, int64_t input_size, int64_t hidden_size, const std::string& act) {
  DDL_CHECK(input_size > 0 && hidden_size > 0, type, ": input_size and hidden_size must be positive, got ", input_size,
            " and ", hidden_size);
  DDL_CHECK(act == "tanh" || act == "relu", type, ": Unknown nonlinearity '", act, "'. Select from 'tanh' or 'relu'.");
}

// U(-1/sqrt(H), 1/sqrt(H)), as torch.nn.RNNBase.reset_parameters.
Variable uniform_parameter(Module& m, const std::string& name, const Shape& shape, int64_t hidden_size) {
  Variable v = m.register_parameter(name, empty(shape));
  const double k = 1.0 / std::sqrt(static_cast<double>(hidden_size));
  init::uniform_(v.data(), -k, k);
  return v;
}

Variable activate(const Variable& x, bool relu_act) { return relu_act ? relu(x) : tanh(x); }

// Named by the layer rather than by the first linear that would trip over it.
void check_like_weights(const char* type, const char* what, const Variable& v, const Variable& w) {
  DDL_CHECK(!v.defined() || (v.dtype() == w.dtype() && v.device() == w.device()), type, ": ", what, " is ",
            describe(v.data()), " but the parameters are ", describe(w.data()));
}

// One layer-direction over x [T, B, I] from h0 [B, H] (undefined = zeros): the outputs [T, B, H]
// in input order, and the last processed step's h in `h_n`.
Variable run_direction(const Variable& x, const Variable& h0, const RecurrentWeights& w, bool relu_act, bool reverse,
                       Variable& h_n) {
  const int64_t steps = x.size(0), hs = w.w_hh.size(1);
  const Variable xw = linear(x, w.w_ih, w.b_ih);  // [T, B, H]
  Variable h = h0.defined() ? h0 : Variable(zeros({x.size(1), hs}, TensorOptions(x.dtype(), x.device())));
  std::vector<Variable> out(static_cast<size_t>(steps));
  for (int64_t s = 0; s < steps; ++s) {
    const int64_t t = reverse ? steps - 1 - s : s;
    h = activate(add(xw.select(0, t), linear(h, w.w_hh, w.b_hh)), relu_act);
    out[static_cast<size_t>(t)] = h;
  }
  h_n = h;
  return stack(out, 0);
}

}  // namespace

// ---- RNN ----

RNN::RNN(const RNNOptions& opts) : Cloneable("RNN"), opts_(opts) {
  check_common("RNN", opts_.input_size(), opts_.hidden_size(), opts_.nonlinearity());
  DDL_CHECK(opts_.num_layers() > 0, "RNN: num_layers must be positive, got ", opts_.num_layers());
  DDL_CHECK(opts_.dropout() >= 0 && opts_.dropout() <= 1, "RNN: dropout must be in [0, 1], got ", opts_.dropout());
  reset();
}

void RNN::reset() {
  // PyTorch's order: for each layer, for each direction: w_ih, w_hh, b_ih, b_hh.
  weights_.clear();
  const int64_t dirs = opts_.bidirectional() ? 2 : 1, hs = opts_.hidden_size();
  for (int64_t layer = 0; layer < opts_.num_layers(); ++layer) {
    const int64_t in = layer == 0 ? opts_.input_size() : hs * dirs;
    for (int64_t d = 0; d < dirs; ++d) {
      const std::string sfx = "_l" + std::to_string(layer) + (d == 1 ? "_reverse" : "");
      RecurrentWeights w;
      w.w_ih = uniform_parameter(*this, "weight_ih" + sfx, {hs, in}, hs);
      w.w_hh = uniform_parameter(*this, "weight_hh" + sfx, {hs, hs}, hs);
      if (opts_.bias()) {
        w.b_ih = uniform_parameter(*this, "bias_ih" + sfx, {hs}, hs);
        w.b_hh = uniform_parameter(*this, "bias_hh" + sfx, {hs}, hs);
      }
      weights_.push_back(w);
    }
  }
}

const RecurrentWeights& RNN::weights(int64_t layer, bool reverse) const {
  DDL_CHECK(layer >= 0 && layer < opts_.num_layers() && (!reverse || opts_.bidirectional()), "RNN: no layer ", layer,
            reverse ? " reverse" : "");
  return weights_[static_cast<size_t>(layer * (opts_.bidirectional() ? 2 : 1) + (reverse ? 1 : 0))];
}

RNNOutput RNN::forward(const Variable& input, const Variable& h0) {
  const int64_t dirs = opts_.bidirectional() ? 2 : 1, count = opts_.num_layers() * dirs, hs = opts_.hidden_size();
  DDL_CHECK(input.defined() && (input.dim() == 2 || input.dim() == 3), "RNN: expected input [T, B, I], [B, T, I] ",
            "(batch_first) or unbatched [T, I], got ", input.defined() ? input.shape() : Shape{});
  DDL_CHECK(input.size(-1) == opts_.input_size(), "RNN: input ", input.shape(), " has ", input.size(-1),
            " features, expected ", opts_.input_size());
  check_like_weights("RNN", "input", input, weights_[0].w_ih);
  check_like_weights("RNN", "h0", h0, weights_[0].w_ih);
  const bool unbatched = input.dim() == 2;
  Variable x = unbatched ? input.unsqueeze(1) : (opts_.batch_first() ? input.transpose(0, 1) : input);
  const int64_t batch = x.size(1);
  DDL_CHECK(x.size(0) > 0, "RNN: the sequence is empty");
  Variable h_init = h0;
  if (h_init.defined()) {
    const Shape expected = unbatched ? Shape{count, hs} : Shape{count, batch, hs};
    DDL_CHECK(h0.shape() == expected, "RNN: initial state must be ", expected, ", got ", h0.shape());
    if (unbatched) h_init = h_init.unsqueeze(1);
  }
  const bool relu_act = opts_.nonlinearity() == "relu";
  std::vector<Variable> hs_out(static_cast<size_t>(count));
  for (int64_t layer = 0; layer < opts_.num_layers(); ++layer) {
    std::vector<Variable> ys;
    for (int64_t d = 0; d < dirs; ++d) {
      const int64_t k = layer * dirs + d;
      const Variable hk = h_init.defined() ? h_init.select(0, k) : Variable();
      ys.push_back(
          run_direction(x, hk, weights_[static_cast<size_t>(k)], relu_act, d == 1, hs_out[static_cast<size_t>(k)]));
    }
    Variable y = dirs == 2 ? cat(ys, 2) : ys[0];
    if (layer + 1 < opts_.num_layers() && opts_.dropout() > 0 && is_training())
      y = dropout(y, opts_.dropout(), true, default_generator());
    x = y;
  }
  RNNOutput out;
  out.output = unbatched ? x.squeeze(1) : (opts_.batch_first() ? x.transpose(0, 1) : x);
  out.h_n = stack(hs_out, 0);
  if (unbatched) out.h_n = out.h_n.squeeze(1);
  return out;
}

std::string RNN::extra_repr() const {
  std::ostringstream os;
  os << opts_.input_size() << ", " << opts_.hidden_size();
  if (opts_.num_layers() != 1) os << ", num_layers=" << opts_.num_layers();
  if (opts_.nonlinearity() != "tanh") os << ", nonlinearity=" << opts_.nonlinearity();
  if (!opts_.bias()) os << ", bias=False";
  if (opts_.batch_first()) os << ", batch_first=True";
  if (opts_.dropout() != 0) os << ", dropout=" << opts_.dropout();
  if (opts_.bidirectional()) os << ", bidirectional=True";
  return os.str();
}

// ---- RNNCell ----

RNNCell::RNNCell(const RNNCellOptions& opts) : Cloneable("RNNCell"), opts_(opts) {
  check_common("RNNCell", opts_.input_size(), opts_.hidden_size(), opts_.nonlinearity());
  reset();
}

void RNNCell::reset() {
  const int64_t in = opts_.input_size(), hs = opts_.hidden_size();
  weight_ih = uniform_parameter(*this, "weight_ih", {hs, in}, hs);
  weight_hh = uniform_parameter(*this, "weight_hh", {hs, hs}, hs);
  bias_ih = opts_.bias() ? uniform_parameter(*this, "bias_ih", {hs}, hs) : Variable();
  bias_hh = opts_.bias() ? uniform_parameter(*this, "bias_hh", {hs}, hs) : Variable();
}

Variable RNNCell::forward(const Variable& x, const Variable& h) {
  const int64_t in = opts_.input_size(), hs = opts_.hidden_size();
  DDL_CHECK(x.defined() && (x.dim() == 1 || x.dim() == 2) && x.size(-1) == in, "RNNCell: expected input [B, ", in,
            "] or [", in, "], got ", x.defined() ? x.shape() : Shape{});
  const Shape expected = x.dim() == 2 ? Shape{x.size(0), hs} : Shape{hs};
  DDL_CHECK(!h.defined() || h.shape() == expected, "RNNCell: hidden state must be ", expected, ", got ", h.shape());
  check_like_weights("RNNCell", "input", x, weight_ih);
  check_like_weights("RNNCell", "hx", h, weight_ih);
  // An undefined h is zeros, as PyTorch's: weight_hh still gets a (zero) gradient.
  const Variable h0 = h.defined() ? h : Variable(zeros(expected, TensorOptions(x.dtype(), x.device())));
  return activate(add(linear(x, weight_ih, bias_ih), linear(h0, weight_hh, bias_hh)), opts_.nonlinearity() == "relu");
}

std::string RNNCell::extra_repr() const {
  std::string s = std::to_string(opts_.input_size()) + ", " + std::to_string(opts_.hidden_size());
  if (!opts_.bias()) s += ", bias=False";
  if (opts_.nonlinearity() != "tanh") s += ", nonlinearity=" + opts_.nonlinearity();
  return s;
}

}  // namespace ddl::nn
