// LSTM, GRU, LSTMCell, GRUCell: PyTorch golden values (outputs, states, input and
// parameter gradients, parameter names), finite-difference checks of the fused
// layers and of stacked bidirectional modules, dropout between layers,
// initialisation, errors, and a tiny language model that learns.
#include <catch2/catch.hpp>
#include <cmath>
#include <sstream>

#include "tests/common/gradcheck.h"
#include "tests/nn/sequence_golden.h"
#include "tests/nn/sequence_layers_golden.h"
#include <ddl/ddl.h>

using namespace ddl;
using namespace ddl::nn;
using ddl::test::leaf;
using ddl::test::random_double;

TEST_CASE("LSTM and GRU match PyTorch", "[nn][rnn][golden]") {
  SECTION("LSTM: 2 layers, bidirectional, batch_first, given states") {
    LSTM m(3, 4, {.num_layers = 2, .batch_first = true, .bidirectional = true});
    test::set_golden_params(m);
    const Variable x = leaf({2, 5, 3}, 0.7, 0.3), h0 = leaf({4, 2, 4}, 0.5, 0.1, 0.5),
                   c0 = leaf({4, 2, 4}, 0.6, 0.2, 0.5);
    const LSTMOutput r = m.forward(x, {h0, c0});
    REQUIRE(r.output.shape() == Shape({2, 5, 8}));
    test::check_golden_case(&m, {x, h0, c0}, {r.output, r.state.h, r.state.c}, lstm_outputs, lstm_input_grads,
                            lstm_param_names, lstm_param_grads);
  }
  SECTION("GRU: 2 layers") {
    GRU m(3, 4, {.num_layers = 2});
    test::set_golden_params(m);
    const Variable x = leaf({5, 2, 3}, 0.7, 0.3), h0 = leaf({2, 2, 4}, 0.5, 0.1, 0.5);
    const GRUOutput r = m.forward(x, h0);
    test::check_golden_case(&m, {x, h0}, {r.output, r.h_n}, gru_outputs, gru_input_grads, gru_param_names,
                            gru_param_grads);
  }
  SECTION("GRU: bidirectional, no bias, unbatched input, zero state") {
    GRU m(3, 4, {.bias = false, .bidirectional = true});
    test::set_golden_params(m);
    const Variable x = leaf({4, 3}, 0.7, 0.3);
    const GRUOutput r = m.forward(x, Variable());
    REQUIRE(r.h_n.shape() == Shape({2, 4}));
    test::check_golden_case(&m, {x}, {r.output, r.h_n}, gru_bidir_unbatched_outputs, gru_bidir_unbatched_input_grads,
                            gru_bidir_unbatched_param_names, gru_bidir_unbatched_param_grads);
  }
  SECTION("LSTMCell") {
    LSTMCell m(3, 4);
    test::set_golden_params(m);
    const Variable x = leaf({2, 3}, 0.7, 0.3), h0 = leaf({2, 4}, 0.5, 0.1, 0.5), c0 = leaf({2, 4}, 0.6, 0.2, 0.5);
    const LSTMState s = m.forward(x, {h0, c0});
    test::check_golden_case(&m, {x, h0, c0}, {s.h, s.c}, lstm_cell_outputs, lstm_cell_input_grads,
                            lstm_cell_param_names, lstm_cell_param_grads);
  }
  SECTION("GRUCell") {
    GRUCell m(3, 4);
    test::set_golden_params(m);
    const Variable x = leaf({2, 3}, 0.7, 0.3), h0 = leaf({2, 4}, 0.5, 0.1, 0.5);
    test::check_golden_case(&m, {x, h0}, {m.forward(x, h0)}, gru_cell_outputs, gru_cell_input_grads,
                            gru_cell_param_names, gru_cell_param_grads);
  }
}

namespace {
// Every output of a layer in one tensor, for gradcheck.
Variable joined(const std::vector<Variable>& parts) {
  std::vector<Variable> flat;
  for (const Variable& p : parts) flat.push_back(p.flatten());
  return cat(flat, 0);
}
}  // namespace

TEST_CASE("lstm_layer and gru_layer pass gradient checks in both directions", "[nn][rnn][gradcheck]") {
  const int64_t t = 4, b = 2, in = 3, h = 3;
  for (bool reverse : {false, true}) {
    INFO("reverse " << reverse);
    const std::vector<Tensor> lstm_inputs = {random_double({t, b, in}, 1), random_double({b, h}, 2),
                                             random_double({b, h}, 3),     random_double({4 * h, in}, 4),
                                             random_double({4 * h, h}, 5), random_double({4 * h}, 6),
                                             random_double({4 * h}, 7)};
    REQUIRE_GRADCHECK(
        [&](const std::vector<Variable>& v) {
          const LstmLayerResult r = lstm_layer(v[0], v[1], v[2], v[3], v[4], v[5], v[6], reverse);
          return joined({r.output, r.h_n, r.c_n});
        },
        lstm_inputs);
    const std::vector<Tensor> gru_inputs = {random_double({t, b, in}, 11),  random_double({b, h}, 12),
                                            random_double({3 * h, in}, 13), random_double({3 * h, h}, 14),
                                            random_double({3 * h}, 15),     random_double({3 * h}, 16)};
    REQUIRE_GRADCHECK(
        [&](const std::vector<Variable>& v) {
          const GruLayerResult r = gru_layer(v[0], v[1], Variable(v[2]), v[3], v[4], v[5], reverse);
          return joined({r.output, r.h_n});
        },
        gru_inputs);
  }
}

TEST_CASE("Stacked bidirectional LSTM and GRU modules pass gradient checks", "[nn][rnn][gradcheck]") {
  manual_seed(3);
  LSTM lstm(3, 3, {.num_layers = 2, .bidirectional = true});
  lstm.to(DType::Float64);
  REQUIRE_GRADCHECK(
      [&](const std::vector<Variable>& v) {
        const LSTMOutput r = lstm.forward(v[0], {v[1], v[2]});
        return joined({r.output, r.state.h, r.state.c});
      },
      {random_double({3, 2, 3}, 41), random_double({4, 2, 3}, 42), random_double({4, 2, 3}, 43)});
  GRU gru(3, 3, {.num_layers = 2, .batch_first = true, .bidirectional = true});
  gru.to(DType::Float64);
  REQUIRE_GRADCHECK(
      [&](const std::vector<Variable>& v) {
        const GRUOutput r = gru.forward(v[0], v[1]);
        return joined({r.output, r.h_n});
      },
      {random_double({2, 3, 3}, 44), random_double({4, 2, 3}, 45)});
}

TEST_CASE("Recurrent parameters: PyTorch's shapes and initial range", "[nn][rnn]") {
  manual_seed(1);
  LSTM m(10, 20, {.num_layers = 2, .bidirectional = true});
  const auto params = m.named_parameters();
  REQUIRE(params.size() == 16);
  REQUIRE(params[0].first == "weight_ih_l0");
  REQUIRE(params[0].second.shape() == Shape({80, 10}));
  REQUIRE(params[12].first == "weight_ih_l1_reverse");
  REQUIRE(params[12].second.shape() == Shape({80, 40}));
  REQUIRE(m.weights(1, true).w_ih.impl() == params[12].second.impl());
  const double k = 1.0 / std::sqrt(20.0);
  for (const auto& [name, p] : params) {
    INFO(name);
    REQUIRE(amax(p.data()).item() <= k);
    REQUIRE(amin(p.data()).item() >= -k);
    REQUIRE(amax(p.data()).item() > 0.8 * k);  // spread over the range, not a constant
  }
  REQUIRE(GRU(5, 6, {.bias = false}).named_parameters().size() == 2);
  std::ostringstream os;
  os << m << ' ' << GRUCell(3, 4, false);
  REQUIRE(os.str() == "LSTM(10, 20, num_layers=2, bidirectional=True) GRUCell(3, 4, bias=False)");
}

TEST_CASE("Dropout between recurrent layers acts only in training", "[nn][rnn]") {
  manual_seed(2);
  LSTM with(4, 5, {.num_layers = 2, .dropout = 0.5});
  manual_seed(2);
  LSTM without(4, 5, {.num_layers = 2});
  const Tensor x = random_double({6, 3, 4}, 9).to(DType::Float32);
  REQUIRE(!allclose(with(x).data(), without(x).data()));
  with.eval();
  REQUIRE(allclose(with(x).data(), without(x).data()));
}

TEST_CASE("A cell stepped over a sequence equals the layer", "[nn][rnn]") {
  manual_seed(4);
  LSTM layer(3, 5);
  LSTMCell cell(3, 5);
  for (auto& [name, p] : cell.named_parameters()) {
    Variable h = p;
    for (auto& [n2, q] : layer.named_parameters())
      if (n2 == name + "_l0") h.set_data(q.data().clone());
  }
  const Tensor x = random_double({4, 2, 3}, 5).to(DType::Float32);
  const LSTMOutput r = layer.forward(x, {});
  LSTMState s;
  for (int64_t t = 0; t < 4; ++t) {
    s = cell.forward(x.select(0, t), s);
    REQUIRE(allclose(s.h.data(), r.output.data().select(0, t), 1e-5, 1e-6));
  }
  REQUIRE(allclose(s.c.data(), r.state.c.data().select(0, 0), 1e-5, 1e-6));
}

TEST_CASE("Unbatched LSTM input and states equal a batch of one", "[nn][rnn]") {
  manual_seed(6);
  LSTM m(3, 4, {.num_layers = 2, .bidirectional = true});
  const Tensor x = random_double({5, 3}, 7).to(DType::Float32);
  const Tensor h0 = random_double({4, 4}, 8).to(DType::Float32), c0 = random_double({4, 4}, 9).to(DType::Float32);
  const LSTMOutput single = m.forward(x, {h0, c0});
  const LSTMOutput batched = m.forward(x.unsqueeze(1), {h0.unsqueeze(1), c0.unsqueeze(1)});
  REQUIRE(single.output.shape() == Shape({5, 8}));
  REQUIRE(single.state.h.shape() == Shape({4, 4}));
  REQUIRE(allclose(single.output.data(), batched.output.data().select(1, 0), 1e-6, 1e-6));
  REQUIRE(allclose(single.state.c.data(), batched.state.c.data().select(1, 0), 1e-6, 1e-6));
  // h_n holds each direction's last processed step: the forward one at t = T-1, the reverse one at t = 0.
  REQUIRE(allclose(single.state.h.data().select(0, 2), single.output.data().select(0, 4).narrow(0, 0, 4)));
  REQUIRE(allclose(single.state.h.data().select(0, 3), single.output.data().select(0, 0).narrow(0, 4, 4)));
}

TEST_CASE("Recurrent errors name the layer and the shapes", "[nn][rnn]") {
  LSTM m(3, 4, {.num_layers = 2});
  REQUIRE_THROWS_WITH(m(Variable(zeros({5, 2, 7}))), Catch::Contains("LSTM") && Catch::Contains("[5, 2, 7]"));
  REQUIRE_THROWS_WITH(m.forward(Variable(zeros({5, 2, 3})), {Variable(zeros({1, 2, 4})), Variable()}),
                      Catch::Contains("initial state") && Catch::Contains("[2, 2, 4]"));
  REQUIRE_THROWS_WITH(GRU(3, 4, {.num_layers = 0}), Catch::Contains("num_layers"));
  GRUCell cell(3, 4);
  REQUIRE_THROWS_WITH(cell.forward(Variable(zeros({2, 3})), Variable(zeros({3, 4}))), Catch::Contains("GRUCell"));
  // Operands of another dtype than the input: named by the layer op, not by an inner matmul.
  const Variable x(zeros({5, 2, 3}, DType::Float64)), w_ih(zeros({16, 3})), w_hh(zeros({16, 4}));
  REQUIRE_THROWS_WITH(lstm_layer(x, Variable(), Variable(), w_ih, w_hh, Variable(), Variable()),
                      Catch::StartsWith("lstm_layer: ") && Catch::Contains("float32") && Catch::Contains("float64"));
  REQUIRE_THROWS_WITH(lstm_layer(x, Variable(), Variable(zeros({2, 4})), w_ih.to(DType::Float64),
                                 w_hh.to(DType::Float64), Variable(), Variable()),
                      Catch::StartsWith("lstm_layer: ") && Catch::Contains("c0"));
  REQUIRE_THROWS_WITH(gru_layer(x, Variable(zeros({2, 4})), Variable(zeros({12, 3}, DType::Float64)),
                                Variable(zeros({12, 4}, DType::Float64)), Variable(), Variable()),
                      Catch::StartsWith("gru_layer: ") && Catch::Contains("float32"));
}

TEST_CASE("A character-level LSTM language model learns a repeating string", "[nn][rnn][train]") {
  // Embedding -> LSTM -> Linear on "abcdabcd...", next-character prediction; plain SGD.
  manual_seed(7);
  Embedding embed(4, 8);
  LSTM lstm(8, 16);
  Linear head(16, 4);
  std::vector<int64_t> text;
  for (int64_t i = 0; i < 33; ++i) text.push_back(i % 4);
  const Tensor inputs = from_vector(std::vector<int64_t>(text.begin(), text.end() - 1), {32, 1});
  const Tensor targets = from_vector(std::vector<int64_t>(text.begin() + 1, text.end()), {32});
  std::vector<Variable> params;
  for (Module* m : std::initializer_list<Module*>{&embed, &lstm, &head})
    for (auto& p : m->parameters()) params.push_back(p);
  double first = 0, last = 0;
  for (int step = 0; step < 150; ++step) {
    const Variable logits = head(lstm(embed.forward(inputs))).reshape({32, 4});
    const Variable loss = cross_entropy(logits, targets);
    for (auto& p : params) p.zero_grad();
    loss.backward();
    for (auto& p : params) p.data().add_(p.grad(), -0.5);
    (step == 0 ? first : last) = loss.item();
  }
  INFO("loss " << first << " -> " << last);
  REQUIRE(first > 1.0);
  REQUIRE(last < 0.05);
}
