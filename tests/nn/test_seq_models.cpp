// RNN (Elman), RNNCell, TransformerDecoderLayer, TransformerDecoder and Transformer: PyTorch
// golden values (outputs, input and parameter gradients, parameter names; tests/golden/seq_models.py),
// finite-difference checks, dropout between layers, initialisation, masks and errors.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "tests/common/gradcheck.h"
#include "tests/nn/seq_models_golden.h"
#include "tests/nn/sequence_golden.h"
#include <ddl/ddl.h>

using namespace ddl;
using namespace ddl::nn;
using ddl::test::leaf;
using ddl::test::random_double;

namespace {
const int64_t kT = 4, kS = 5, kN = 2, kE = 8;

Tensor bools(std::vector<uint8_t> v, const Shape& s) { return from_vector(v, s).to(DType::Bool); }
// As the script's masks: tgt key 3 of batch 0 padded; memory keys 2 and 4 of batch 1 padded.
Tensor tgt_padding() { return bools({0, 0, 0, 1, 0, 0, 0, 0}, {kN, kT}); }
Tensor memory_padding() { return bools({0, 0, 0, 0, 0, 0, 0, 1, 0, 1}, {kN, kS}); }
Tensor src_padding() { return bools({0, 0, 0, 0, 1, 0, 0, 0, 0, 0}, {kN, kS}); }
Tensor memory_mask() {
  std::vector<uint8_t> v;
  for (int64_t i = 0; i < kT; ++i)
    for (int64_t j = 0; j < kS; ++j) v.push_back((i + 2 * j) % 4 == 3);
  return bools(v, {kT, kS});
}
Tensor causal() { return Transformer::generate_square_subsequent_mask(kT, DType::Float64); }
}  // namespace

TEST_CASE("RNN and RNNCell match PyTorch", "[nn][rnn][golden]") {
  SECTION("tanh, 2 layers, bidirectional, batch_first, given state") {
    RNN m(RNNOptions(3, 4).num_layers(2).bidirectional(true).batch_first(true));
    test::set_golden_params(m);
    const Variable x = leaf({2, 5, 3}, 0.7, 0.3), h0 = leaf({4, 2, 4}, 0.5, 0.1, 0.5);
    const RNNOutput r = m.forward(x, h0);
    REQUIRE(r.output.shape() == Shape({2, 5, 8}));
    REQUIRE(r.h_n.shape() == Shape({4, 2, 4}));
    test::check_golden_case(&m, {x, h0}, {r.output, r.h_n}, rnn_tanh_outputs, rnn_tanh_input_grads,
                            rnn_tanh_param_names, rnn_tanh_param_grads);
  }
  SECTION("relu, 2 layers, no bias, unbatched, zero state") {
    RNN m(RNNOptions(3, 4).num_layers(2).nonlinearity("relu").bias(false));
    test::set_golden_params(m);
    const Variable x = leaf({4, 3}, 0.7, 0.3);
    const RNNOutput r = m.forward(x, Variable());
    REQUIRE(r.h_n.shape() == Shape({2, 4}));
    test::check_golden_case(&m, {x}, {r.output, r.h_n}, rnn_relu_unbatched_outputs, rnn_relu_unbatched_input_grads,
                            rnn_relu_unbatched_param_names, rnn_relu_unbatched_param_grads);
  }
  SECTION("RNNCell tanh") {
    RNNCell m(3, 4);
    test::set_golden_params(m);
    const Variable x = leaf({2, 3}, 0.7, 0.3), h0 = leaf({2, 4}, 0.5, 0.1, 0.5);
    test::check_golden_case(&m, {x, h0}, {m.forward(x, h0)}, rnn_cell_outputs, rnn_cell_input_grads,
                            rnn_cell_param_names, rnn_cell_param_grads);
  }
  SECTION("RNNCell relu, no bias, unbatched, zero state") {
    RNNCell m(RNNCellOptions(3, 4).bias(false).nonlinearity("relu"));
    test::set_golden_params(m);
    const Variable x = leaf({3}, 0.7, 0.3);
    test::check_golden_case(&m, {x}, {m.forward(x)}, rnn_cell_relu_outputs, rnn_cell_relu_input_grads,
                            rnn_cell_relu_param_names, rnn_cell_relu_param_grads);
  }
}

TEST_CASE("RNN passes gradient checks through layers, directions and states", "[nn][rnn][gradcheck]") {
  manual_seed(6);
  for (const char* act : {"tanh", "relu"}) {
    INFO(act);
    RNN m(RNNOptions(3, 3).num_layers(2).bidirectional(true).batch_first(true).nonlinearity(act));
    m.to(DType::Float64);
    REQUIRE_GRADCHECK(
        [&](const std::vector<Variable>& v) {
          const RNNOutput r = m.forward(v[0], v[1]);
          return cat({r.output.flatten(), r.h_n.flatten()}, 0);
        },
        {random_double({2, 4, 3}, 1), random_double({4, 2, 3}, 2)});
  }
  RNNCell cell(3, 4, true, "tanh");
  cell.to(DType::Float64);
  REQUIRE_GRADCHECK([&](const std::vector<Variable>& v) { return cell.forward(v[0], v[1]); },
                    {random_double({2, 3}, 3), random_double({2, 4}, 4)});
}

TEST_CASE("RNN: initialisation, dropout between layers, unbatched and h_n", "[nn][rnn]") {
  manual_seed(3);
  RNN m(RNNOptions(5, 16).num_layers(3).dropout(0.5));
  REQUIRE(m.named_parameters().size() == 12);
  for (auto& [name, p] : m.named_parameters()) {
    INFO(name);
    REQUIRE(to_vector<double>(amax(abs(p.data())))[0] <= 0.25);  // U(-1/sqrt(16), 1/sqrt(16))
  }
  const Tensor x = randn({6, 2, 5});
  m.eval();
  const Tensor a = m.forward(x).data(), b = m.forward(x).data();
  REQUIRE(allclose(a, b));
  m.train();
  REQUIRE(!allclose(m.forward(x).data(), a));  // dropout on the first two layers' outputs
  // unbatched equals a batch of one; h_n holds each direction's last processed step
  RNN bi(RNNOptions(5, 4).bidirectional(true));
  const Tensor x1 = x.narrow(1, 0, 1);
  const RNNOutput batched = bi.forward(x1, Variable()), single = bi.forward(x1.squeeze(1), Variable());
  REQUIRE(single.output.shape() == Shape({6, 8}));
  REQUIRE(allclose(single.output.data(), batched.output.data().squeeze(1), 1e-6, 1e-6));
  REQUIRE(allclose(single.h_n.data().select(0, 0), single.output.data().select(0, 5).narrow(0, 0, 4)));
  REQUIRE(allclose(single.h_n.data().select(0, 1), single.output.data().select(0, 0).narrow(0, 4, 4)));
  REQUIRE(bi.extra_repr() == "5, 4, bidirectional=True");
  // a clone computes the same with its own parameters, which weights() hands out
  auto copy = nn::clone(bi);
  REQUIRE(copy->weights(0, true).w_hh.impl() == copy->named_parameters()[5].second.impl());
  REQUIRE(!copy->weights(0).w_ih.data().shares_storage(bi.weights(0).w_ih.data()));
  REQUIRE(allclose(copy->forward(x1).data(), batched.output.data()));
}

TEST_CASE("RNN errors name the layer and the shapes", "[nn][rnn]") {
  REQUIRE_THROWS_WITH(RNN(RNNOptions(3, 4).nonlinearity("sigmoid")), Catch::Contains("RNN: Unknown nonlinearity"));
  REQUIRE_THROWS_WITH(RNNCell(3, 4, true, "gelu"), Catch::Contains("RNNCell"));
  REQUIRE_THROWS_WITH(RNN(RNNOptions(3, 4).num_layers(0)), Catch::Contains("num_layers"));
  RNN m(RNNOptions(3, 4).num_layers(2));
  REQUIRE_THROWS_WITH(m(Variable(zeros({5, 2, 7}))), Catch::Contains("RNN") && Catch::Contains("[5, 2, 7]"));
  REQUIRE_THROWS_WITH(m.forward(Variable(zeros({5, 2, 3})), Variable(zeros({1, 2, 4}))),
                      Catch::Contains("initial state") && Catch::Contains("[2, 2, 4]"));
  RNNCell cell(3, 4);
  REQUIRE_THROWS_WITH(cell.forward(Variable(zeros({2, 3})), Variable(zeros({3, 4}))), Catch::Contains("RNNCell"));
  // another dtype than the parameters': named by the layer, not by an inner linear
  REQUIRE_THROWS_WITH(m(Variable(zeros({5, 2, 3}, DType::Float64))),
                      Catch::StartsWith("RNN: input") && Catch::Contains("float64"));
  REQUIRE_THROWS_WITH(cell.forward(Variable(zeros({2, 3})), Variable(zeros({2, 4}, DType::Float64))),
                      Catch::StartsWith("RNNCell: hx") && Catch::Contains("float64"));
}

TEST_CASE("TransformerDecoderLayer, TransformerDecoder and Transformer match PyTorch", "[nn][transformer][golden]") {
  SECTION("decoder layer: post-norm, relu, every mask") {
    TransformerDecoderLayer m(TransformerDecoderLayerOptions(kE, 2).dim_feedforward(16).dropout(0.0));
    test::set_golden_params(m);
    m.eval();
    const Variable x = leaf({kT, kN, kE}, 0.7, 0.3), mem = leaf({kS, kN, kE}, 0.5, 0.1);
    const Variable y = m.forward(x, mem, {causal(), memory_mask(), tgt_padding(), memory_padding()});
    test::check_golden_case(&m, {x, mem}, {y}, decoder_post_relu_outputs, decoder_post_relu_input_grads,
                            decoder_post_relu_param_names, decoder_post_relu_param_grads);
  }
  SECTION("decoder layer: pre-norm, gelu, batch_first") {
    TransformerDecoderLayer m(TransformerDecoderLayerOptions(kE, 2)
                                  .dim_feedforward(16)
                                  .dropout(0.0)
                                  .activation("gelu")
                                  .batch_first(true)
                                  .norm_first(true));
    test::set_golden_params(m);
    m.eval();
    const Variable x = leaf({kN, kT, kE}, 0.7, 0.3), mem = leaf({kN, kS, kE}, 0.5, 0.1);
    TransformerDecoderMasks masks;
    masks.tgt_mask = causal();
    masks.memory_key_padding_mask = memory_padding();
    test::check_golden_case(&m, {x, mem}, {m.forward(x, mem, masks)}, decoder_pre_gelu_outputs,
                            decoder_pre_gelu_input_grads, decoder_pre_gelu_param_names, decoder_pre_gelu_param_grads);
  }
  SECTION("decoder: 2 layers and a final norm") {
    TransformerDecoder m(TransformerDecoderLayer(TransformerDecoderLayerOptions(kE, 2).dim_feedforward(16).dropout(0)),
                         2, std::make_shared<LayerNorm>(Shape{kE}));
    test::set_golden_params(m);
    m.eval();
    const Variable x = leaf({kT, kN, kE}, 0.7, 0.3), mem = leaf({kS, kN, kE}, 0.5, 0.1);
    TransformerDecoderMasks masks;
    masks.tgt_mask = causal();
    masks.tgt_key_padding_mask = tgt_padding();
    test::check_golden_case(&m, {x, mem}, {m.forward(x, mem, masks)}, decoder_stack_outputs, decoder_stack_input_grads,
                            decoder_stack_param_names, decoder_stack_param_grads);
  }
  for (bool pre : {false, true}) {
    INFO("Transformer, norm_first and batch_first " << pre);
    Transformer m(TransformerOptions(kE, 2)
                      .num_encoder_layers(2)
                      .num_decoder_layers(2)
                      .dim_feedforward(16)
                      .dropout(0.0)
                      .activation(pre ? "gelu" : "relu")
                      .batch_first(pre)
                      .norm_first(pre));
    test::set_golden_params(m);
    m.eval();
    const Variable src = leaf(pre ? Shape{kN, kS, kE} : Shape{kS, kN, kE}, 0.7, 0.3);
    const Variable tgt = leaf(pre ? Shape{kN, kT, kE} : Shape{kT, kN, kE}, 0.5, 0.1);
    TransformerMasks masks;
    masks.tgt_mask = causal();
    masks.src_key_padding_mask = src_padding();
    masks.tgt_key_padding_mask = tgt_padding();
    masks.memory_key_padding_mask = src_padding();
    const Variable y = m.forward(src, tgt, masks);
    if (pre)
      test::check_golden_case(&m, {src, tgt}, {y}, transformer_pre_gelu_bf_outputs, transformer_pre_gelu_bf_input_grads,
                              transformer_pre_gelu_bf_param_names, transformer_pre_gelu_bf_param_grads);
    else
      test::check_golden_case(&m, {src, tgt}, {y}, transformer_post_relu_outputs, transformer_post_relu_input_grads,
                              transformer_post_relu_param_names, transformer_post_relu_param_grads);
  }
}

TEST_CASE("TransformerDecoderLayer passes gradient checks", "[nn][transformer][gradcheck]") {
  TransformerDecoderLayer m(TransformerDecoderLayerOptions(6, 2).dim_feedforward(8).dropout(0.0).activation("gelu"));
  m.to(DType::Float64);
  TransformerDecoderMasks masks;
  masks.tgt_mask = Transformer::generate_square_subsequent_mask(3, DType::Float64);
  masks.memory_key_padding_mask = bools({0, 0, 0, 0, 0, 1, 0, 0}, {2, 4});
  REQUIRE_GRADCHECK([&](const std::vector<Variable>& v) { return m.forward(v[0], v[1], masks); },
                    {random_double({3, 2, 6}, 5), random_double({4, 2, 6}, 6)});
}

TEST_CASE("generate_square_subsequent_mask, causality and Transformer's initialisation", "[nn][transformer]") {
  const Tensor mask = Transformer::generate_square_subsequent_mask(3);
  REQUIRE(mask.dtype() == DType::Float32);
  const double inf = std::numeric_limits<double>::infinity();
  REQUIRE(to_vector<double>(mask) == std::vector<double>{0, -inf, -inf, 0, 0, -inf, 0, 0, 0});
  REQUIRE(Transformer::generate_square_subsequent_mask(0).shape() == Shape({0, 0}));
  REQUIRE_THROWS_WITH(Transformer::generate_square_subsequent_mask(-1),
                      Catch::Contains("generate_square_subsequent_mask"));

  manual_seed(5);
  Transformer m(TransformerOptions(8, 2).num_encoder_layers(1).num_decoder_layers(2).dim_feedforward(16));
  m.eval();
  const auto params = m.named_parameters();
  REQUIRE(params.size() == 12 + 2 + 2 * 18 + 2);
  REQUIRE(params.front().first == "encoder.layers.0.self_attn.in_proj_weight");
  REQUIRE(params[14].first == "decoder.layers.0.self_attn.in_proj_weight");
  REQUIRE(params.back().first == "decoder.norm.bias");
  // xavier_uniform on every matrix: in_proj_weight [24, 8] has bound sqrt(6 / 32)
  REQUIRE(to_vector<double>(amax(abs(params.front().second.data())))[0] <= std::sqrt(6.0 / 32));
  REQUIRE(to_vector<double>(amax(abs(params.front().second.data())))[0] > 0.2);
  // A causal tgt mask keeps each output position independent of later target positions.
  const Tensor src = randn({5, 1, 8}), tgt = randn({4, 1, 8});
  Tensor tgt2 = tgt.clone();
  tgt2.select(0, 3).fill_(2.0);
  TransformerMasks masks;
  masks.tgt_mask = Transformer::generate_square_subsequent_mask(4);
  const Tensor y = m.forward(src, tgt, masks).data(), y2 = m.forward(src, tgt2, masks).data();
  REQUIRE(allclose(y.narrow(0, 0, 3), y2.narrow(0, 0, 3), 1e-5, 1e-6));
  REQUIRE(!allclose(y.select(0, 3), y2.select(0, 3)));
  // clones are independent deep copies with the same values
  auto copy = std::dynamic_pointer_cast<Transformer>(m.clone());
  REQUIRE(allclose(copy->forward(src, tgt, masks).data(), y));
  REQUIRE(!copy->named_parameters()[0].second.data().shares_storage(params[0].second.data()));
  auto decoder = nn::clone(*m.decoder);
  const Tensor memory = m.encoder->forward(src).data();
  TransformerDecoderMasks causal_only;
  causal_only.tgt_mask = masks.tgt_mask;
  REQUIRE(
      allclose(decoder->forward(tgt, memory, causal_only).data(), m.decoder->forward(tgt, memory, causal_only).data()));
  REQUIRE(!decoder->named_parameters()[0].second.data().shares_storage(params[14].second.data()));
}

TEST_CASE("Transformer errors name the module and the shapes", "[nn][transformer]") {
  Transformer m(TransformerOptions(8, 2).num_encoder_layers(1).num_decoder_layers(1).dim_feedforward(16));
  REQUIRE_THROWS_WITH(m.forward(Variable(zeros({5, 2, 8})), Variable(zeros({4, 3, 8}))),
                      Catch::Contains("batch number of src and tgt"));
  REQUIRE_THROWS_WITH(m.forward(Variable(zeros({5, 2, 8})), Variable(zeros({4, 2, 6}))), Catch::Contains("d_model"));
  REQUIRE_THROWS_WITH(TransformerDecoderLayer(TransformerDecoderLayerOptions(8, 2).activation("tanh")),
                      Catch::Contains("TransformerDecoderLayer") && Catch::Contains("activation"));
  REQUIRE_THROWS_WITH(TransformerDecoderLayer(10, 3), Catch::Contains("divisible"));
  TransformerDecoderLayer layer(8, 2);
  TransformerDecoderMasks bad;
  bad.memory_mask = zeros({4, 3}, DType::Bool);
  REQUIRE_THROWS_WITH(layer.forward(Variable(zeros({4, 2, 8})), Variable(zeros({5, 2, 8})), bad),
                      Catch::Contains("attn_mask"));
}
