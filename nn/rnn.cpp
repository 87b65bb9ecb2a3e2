// LSTM, GRU and their cells: parameter registration with PyTorch's names, the
// stacking of layers and directions, batch_first and unbatched inputs. The
// recurrence itself is autograd/ops/rnn.cpp.
#include <cmath>
#include <functional>
#include <sstream>

#include <ddl/nn/init.h>
#include <ddl/nn/rnn.h>
#include <ddl/tensor/core/factory.h>

namespace ddl::nn {

namespace {

template <typename O>
void check_sizes(const char* type, int64_t input_size, int64_t hidden_size, const O& o) {
  DDL_CHECK(input_size > 0 && hidden_size > 0, type, ": input_size and hidden_size must be positive, got ", input_size,
            " and ", hidden_size);
  DDL_CHECK(o.num_layers() > 0, type, ": num_layers must be positive, got ", o.num_layers());
  DDL_CHECK(o.dropout() >= 0 && o.dropout() <= 1, type, ": dropout must be in [0, 1], got ", o.dropout());
}

// U(-1/sqrt(H), 1/sqrt(H)) for every weight and bias, as torch.nn.RNNBase.reset_parameters.
Variable uniform_parameter(Module& m, const std::string& name, const Shape& shape, int64_t hidden_size) {
  Variable v = m.register_parameter(name, empty(shape));
  const double k = 1.0 / std::sqrt(static_cast<double>(hidden_size));
  init::uniform_(v.data(), -k, k);
  return v;
}

// PyTorch's order: for each layer, for each direction: w_ih, w_hh, b_ih, b_hh.
template <typename O>
std::vector<RecurrentWeights> register_weights(Module& m, int64_t gates, int64_t input_size, int64_t hidden_size,
                                               const O& o) {
  std::vector<RecurrentWeights> out;
  const int64_t dirs = o.bidirectional() ? 2 : 1;
  for (int64_t layer = 0; layer < o.num_layers(); ++layer) {
    const int64_t in = layer == 0 ? input_size : hidden_size * dirs;
    for (int64_t d = 0; d < dirs; ++d) {
      const std::string sfx = "_l" + std::to_string(layer) + (d == 1 ? "_reverse" : "");
      RecurrentWeights w;
      w.w_ih = uniform_parameter(m, "weight_ih" + sfx, {gates * hidden_size, in}, hidden_size);
      w.w_hh = uniform_parameter(m, "weight_hh" + sfx, {gates * hidden_size, hidden_size}, hidden_size);
      if (o.bias()) {
        w.b_ih = uniform_parameter(m, "bias_ih" + sfx, {gates * hidden_size}, hidden_size);
        w.b_hh = uniform_parameter(m, "bias_hh" + sfx, {gates * hidden_size}, hidden_size);
      }
      out.push_back(w);
    }
  }
  return out;
}

template <typename O>
std::string rnn_repr(int64_t input_size, int64_t hidden_size, const O& o) {
  std::ostringstream os;
  os << input_size << ", " << hidden_size;
  if (o.num_layers() != 1) os << ", num_layers=" << o.num_layers();
  if (!o.bias()) os << ", bias=False";
  if (o.batch_first()) os << ", batch_first=True";
  if (o.dropout() != 0) os << ", dropout=" << o.dropout();
  if (o.bidirectional()) os << ", bidirectional=True";
  return os.str();
}

// Joins two [T, B, H] outputs along the feature dim (forward direction first).
Variable join_directions(const Variable& fwd, const Variable& bwd) { return cat({fwd, bwd}, 2); }

// The shared multi-layer driver. `run(x, layer_dir_index, reverse)` runs one layer
// direction on x [T, B, I] and returns its [T, B, H] output, recording its final
// states itself. Returns the last layer's output, in [T, B, *] layout.
template <typename O>
Variable run_layers(const Variable& x_tbi, const O& o, bool training,
                    const std::function<Variable(const Variable&, int64_t, bool)>& run) {
  const int64_t dirs = o.bidirectional() ? 2 : 1;
  Variable x = x_tbi;
  for (int64_t layer = 0; layer < o.num_layers(); ++layer) {
    Variable y = run(x, layer * dirs, false);
    if (dirs == 2) y = join_directions(y, run(x, layer * dirs + 1, true));
    if (layer + 1 < o.num_layers() && o.dropout() > 0 && training)
      y = dropout(y, o.dropout(), true, default_generator());
    x = y;
  }
  return x;
}

// Brings input to [T, B, I]; `unbatched` tells whether it was [T, I].
Variable to_time_major(const char* type, const Variable& input, int64_t input_size, bool batch_first, bool& unbatched) {
  DDL_CHECK(input.defined() && (input.dim() == 2 || input.dim() == 3), type,
            ": expected input [T, B, I], [B, T, I] (batch_first) or unbatched [T, I], got ",
            input.defined() ? input.shape() : Shape{});
  DDL_CHECK(input.size(-1) == input_size, type, ": input ", input.shape(), " has ", input.size(-1),
            " features, expected ", input_size);
  unbatched = input.dim() == 2;
  if (unbatched) return input.unsqueeze(1);
  return batch_first ? input.transpose(0, 1) : input;
}

Variable from_time_major(const Variable& y, bool batch_first, bool unbatched) {
  if (unbatched) return y.squeeze(1);
  return batch_first ? y.transpose(0, 1) : y;
}

// The initial state of layer-direction k from [L * D, B, H] (or undefined).
Variable initial_state(const char* type, const Variable& s, int64_t k, int64_t count, int64_t batch,
                       int64_t hidden_size, bool unbatched) {
  if (!s.defined()) return Variable();
  const Shape expected = unbatched ? Shape{count, hidden_size} : Shape{count, batch, hidden_size};
  DDL_CHECK(s.shape() == expected, type, ": initial state must be ", expected, ", got ", s.shape());
  return unbatched ? s.select(0, k).unsqueeze(0) : s.select(0, k);
}

Variable stack_states(const std::vector<Variable>& states, bool unbatched) {
  Variable s = stack(states, 0);
  return unbatched ? s.squeeze(1) : s;
}

}  // namespace

// ---- LSTM ----

LSTM::LSTM(const LSTMOptions& opts) : Cloneable("LSTM"), opts_(opts) {
  check_sizes("LSTM", opts.input_size(), opts.hidden_size(), opts);
  reset();
}

void LSTM::reset() { weights_ = register_weights(*this, 4, opts_.input_size(), opts_.hidden_size(), opts_); }

const RecurrentWeights& LSTM::weights(int64_t layer, bool reverse) const {
  const size_t k = static_cast<size_t>(layer * (opts_.bidirectional() ? 2 : 1) + (reverse ? 1 : 0));
  DDL_CHECK(layer >= 0 && layer < opts_.num_layers() && (!reverse || opts_.bidirectional()), "LSTM: no layer ", layer,
            reverse ? " reverse" : "");
  return weights_[k];
}

LSTMOutput LSTM::forward(const Variable& input, const LSTMState& state) {
  bool unbatched = false;
  const Variable x = to_time_major("LSTM", input, opts_.input_size(), opts_.batch_first(), unbatched);
  const int64_t count = opts_.num_layers() * (opts_.bidirectional() ? 2 : 1), batch = x.size(1);
  std::vector<Variable> hs(static_cast<size_t>(count)), cs(static_cast<size_t>(count));
  const Variable y = run_layers(x, opts_, is_training(), [&](const Variable& in, int64_t k, bool reverse) {
    const RecurrentWeights& w = weights_[static_cast<size_t>(k)];
    LstmLayerResult r = lstm_layer(in, initial_state("LSTM", state.h, k, count, batch, opts_.hidden_size(), unbatched),
                                   initial_state("LSTM", state.c, k, count, batch, opts_.hidden_size(), unbatched),
                                   w.w_ih, w.w_hh, w.b_ih, w.b_hh, reverse);
    hs[static_cast<size_t>(k)] = r.h_n;
    cs[static_cast<size_t>(k)] = r.c_n;
    return r.output;
  });
  LSTMOutput out;
  out.output = from_time_major(y, opts_.batch_first(), unbatched);
  out.state.h = stack_states(hs, unbatched);
  out.state.c = stack_states(cs, unbatched);
  return out;
}

std::string LSTM::extra_repr() const { return rnn_repr(opts_.input_size(), opts_.hidden_size(), opts_); }

// ---- GRU ----

GRU::GRU(const GRUOptions& opts) : Cloneable("GRU"), opts_(opts) {
  check_sizes("GRU", opts.input_size(), opts.hidden_size(), opts);
  reset();
}

void GRU::reset() { weights_ = register_weights(*this, 3, opts_.input_size(), opts_.hidden_size(), opts_); }

const RecurrentWeights& GRU::weights(int64_t layer, bool reverse) const {
  const size_t k = static_cast<size_t>(layer * (opts_.bidirectional() ? 2 : 1) + (reverse ? 1 : 0));
  DDL_CHECK(layer >= 0 && layer < opts_.num_layers() && (!reverse || opts_.bidirectional()), "GRU: no layer ", layer,
            reverse ? " reverse" : "");
  return weights_[k];
}

GRUOutput GRU::forward(const Variable& input, const Variable& h0) {
  bool unbatched = false;
  const Variable x = to_time_major("GRU", input, opts_.input_size(), opts_.batch_first(), unbatched);
  const int64_t count = opts_.num_layers() * (opts_.bidirectional() ? 2 : 1), batch = x.size(1);
  std::vector<Variable> hs(static_cast<size_t>(count));
  const Variable y = run_layers(x, opts_, is_training(), [&](const Variable& in, int64_t k, bool reverse) {
    const RecurrentWeights& w = weights_[static_cast<size_t>(k)];
    GruLayerResult r = gru_layer(in, initial_state("GRU", h0, k, count, batch, opts_.hidden_size(), unbatched), w.w_ih,
                                 w.w_hh, w.b_ih, w.b_hh, reverse);
    hs[static_cast<size_t>(k)] = r.h_n;
    return r.output;
  });
  GRUOutput out;
  out.output = from_time_major(y, opts_.batch_first(), unbatched);
  out.h_n = stack_states(hs, unbatched);
  return out;
}

std::string GRU::extra_repr() const { return rnn_repr(opts_.input_size(), opts_.hidden_size(), opts_); }

// ---- cells: one step of the fused layer ----

namespace {
// x: [B, I] or [I]; a state: [B, H] or [H] to match, or undefined.
void check_cell(const char* type, const Variable& x, const Variable& s, int64_t input_size, int64_t hidden_size) {
  DDL_CHECK(x.defined() && (x.dim() == 1 || x.dim() == 2) && x.size(-1) == input_size, type, ": expected input [B, ",
            input_size, "] or [", input_size, "], got ", x.defined() ? x.shape() : Shape{});
  if (!s.defined()) return;
  const Shape expected = x.dim() == 2 ? Shape{x.size(0), hidden_size} : Shape{hidden_size};
  DDL_CHECK(s.shape() == expected, type, ": state must be ", expected, ", got ", s.shape());
}
Variable batched(const Variable& v) { return v.defined() && v.dim() == 1 ? v.unsqueeze(0) : v; }
Variable unbatch_like(const Variable& v, const Variable& x) { return x.dim() == 1 ? v.squeeze(0) : v; }
std::string cell_repr(int64_t i, int64_t h, bool bias) {
  return std::to_string(i) + ", " + std::to_string(h) + (bias ? "" : ", bias=False");
}
}  // namespace

LSTMCell::LSTMCell(int64_t input_size, int64_t hidden_size, bool bias)
    : Cloneable("LSTMCell"), input_size_(input_size), hidden_size_(hidden_size), bias_(bias) {
  check_sizes("LSTMCell", input_size, hidden_size, LSTMOptions(input_size, hidden_size));
  reset();
}

void LSTMCell::reset() {
  weight_ih = uniform_parameter(*this, "weight_ih", {4 * hidden_size_, input_size_}, hidden_size_);
  weight_hh = uniform_parameter(*this, "weight_hh", {4 * hidden_size_, hidden_size_}, hidden_size_);
  bias_ih = bias_ ? uniform_parameter(*this, "bias_ih", {4 * hidden_size_}, hidden_size_) : Variable();
  bias_hh = bias_ ? uniform_parameter(*this, "bias_hh", {4 * hidden_size_}, hidden_size_) : Variable();
}

LSTMState LSTMCell::forward(const Variable& x, const LSTMState& state) {
  check_cell("LSTMCell", x, state.h, input_size_, hidden_size_);
  check_cell("LSTMCell", x, state.c, input_size_, hidden_size_);
  LstmLayerResult r =
      lstm_layer(batched(x).unsqueeze(0), batched(state.h), batched(state.c), weight_ih, weight_hh, bias_ih, bias_hh);
  return {unbatch_like(r.h_n, x), unbatch_like(r.c_n, x)};
}

std::string LSTMCell::extra_repr() const { return cell_repr(input_size_, hidden_size_, bias_); }

GRUCell::GRUCell(int64_t input_size, int64_t hidden_size, bool bias)
    : Cloneable("GRUCell"), input_size_(input_size), hidden_size_(hidden_size), bias_(bias) {
  check_sizes("GRUCell", input_size, hidden_size, GRUOptions(input_size, hidden_size));
  reset();
}

void GRUCell::reset() {
  weight_ih = uniform_parameter(*this, "weight_ih", {3 * hidden_size_, input_size_}, hidden_size_);
  weight_hh = uniform_parameter(*this, "weight_hh", {3 * hidden_size_, hidden_size_}, hidden_size_);
  bias_ih = bias_ ? uniform_parameter(*this, "bias_ih", {3 * hidden_size_}, hidden_size_) : Variable();
  bias_hh = bias_ ? uniform_parameter(*this, "bias_hh", {3 * hidden_size_}, hidden_size_) : Variable();
}

Variable GRUCell::forward(const Variable& x, const Variable& h) {
  check_cell("GRUCell", x, h, input_size_, hidden_size_);
  GruLayerResult r = gru_layer(batched(x).unsqueeze(0), batched(h), weight_ih, weight_hh, bias_ih, bias_hh);
  return unbatch_like(r.h_n, x);
}

std::string GRUCell::extra_repr() const { return cell_repr(input_size_, hidden_size_, bias_); }

}  // namespace ddl::nn
