// Module::clone(): deep copies with equal values, separate storage, the same
// training flags and requires_grad, independent training; containers and
// encoders; a module that is not Cloneable says how to make it so.
#include <catch2/catch.hpp>

#include "tests/common/gradcheck.h"
#include <ddl/ddl.h>

using namespace ddl;
using namespace ddl::nn;

namespace {

void require_equal_but_separate(const Module& a, const Module& b) {
  const auto sa = a.named_state(), sb = b.named_state();
  REQUIRE(sa.size() == sb.size());
  for (size_t i = 0; i < sa.size(); ++i) {
    INFO(sa[i].first);
    REQUIRE(sa[i].first == sb[i].first);
    REQUIRE(sa[i].second.dtype() == sb[i].second.dtype());
    REQUIRE(allclose(sa[i].second.data(), sb[i].second.data(), 0, 0));
    REQUIRE(!sa[i].second.data().shares_storage(sb[i].second.data()));
    REQUIRE(sa[i].second.impl() != sb[i].second.impl());
    REQUIRE(sa[i].second.requires_grad() == sb[i].second.requires_grad());
  }
}

// A user's module, clonable by the documented rule: derive from Cloneable, register in reset().
struct TinyLM : Cloneable<TinyLM> {
  explicit TinyLM(int64_t vocab) : Cloneable("TinyLM"), vocab_(vocab) { reset(); }
  void reset() override {
    embed = register_module("embed", std::make_shared<Embedding>(vocab_, 6));
    rnn = register_module("rnn", std::make_shared<GRU>(6, 6));
    head = register_module("head", std::make_shared<Linear>(6, vocab_));
  }
  Variable forward(const Variable& tokens) override { return (*head)((*rnn)(embed->forward(tokens.data()))); }
  std::shared_ptr<Embedding> embed;
  std::shared_ptr<GRU> rnn;
  std::shared_ptr<Linear> head;
  int64_t vocab_;
};

}  // namespace

TEST_CASE("clone() copies values, flags and members into separate storage", "[nn][clone]") {
  manual_seed(1);
  TransformerEncoderLayer layer(8, 2, {.dim_feedforward = 16, .dropout = 0.0});
  layer.norm2->eval();  // a mixed training state survives the copy
  layer.linear1->bias.requires_grad_(false);
  auto copy = nn::clone(layer);
  require_equal_but_separate(layer, *copy);
  REQUIRE(copy->is_training());
  REQUIRE(!copy->norm2->is_training());
  REQUIRE(copy->norm1->is_training());
  // The typed members point at the copy's own registered children.
  REQUIRE(copy->self_attn.get() == copy->named_children()[0].second.get());
  REQUIRE(copy->linear1->weight.impl() == copy->named_parameters()[4].second.impl());
  const Tensor x = test::random_double({3, 2, 8}, 2).to(DType::Float32);
  REQUIRE(allclose(layer(x).data(), (*copy)(x).data(), 0, 0));
}

TEST_CASE("Training a clone leaves the original unchanged", "[nn][clone]") {
  manual_seed(2);
  TinyLM model(5);
  auto copy = nn::clone(model);
  const auto before = model.named_state();
  std::vector<Tensor> saved;
  for (const auto& [n, v] : before) saved.push_back(v.data().clone());
  const Tensor tokens = from_vector(std::vector<int64_t>{0, 1, 2, 3, 4, 0}, {6, 1});
  for (int step = 0; step < 3; ++step) {
    const Variable loss = sum((*copy)(Variable(tokens)));
    copy->zero_grad();
    loss.backward();
    for (auto& p : copy->parameters()) p.data().add_(p.grad(), -0.1);
  }
  for (size_t i = 0; i < saved.size(); ++i) REQUIRE(allclose(before[i].second.data(), saved[i], 0, 0));
  for (const auto& p : model.parameters()) REQUIRE(!p.grad().defined());
  REQUIRE(!allclose(model.head->weight.data(), copy->head->weight.data()));
}

TEST_CASE("clone() of containers, float64 modules, gradients", "[nn][clone]") {
  ModuleList list;
  list.push_back(std::make_shared<LayerNorm>(Shape{3}));
  list.push_back(std::make_shared<LSTM>(3, 2, RNNOptions{.num_layers = 2}));
  list.to(DType::Float64);
  list.eval();
  const Variable y = sum(list.at<LayerNorm>(0)->forward(Variable(test::random_double({2, 3}, 3))));
  y.backward();
  auto copy = nn::clone(list);
  require_equal_but_separate(list, *copy);
  REQUIRE(copy->size() == 2);
  REQUIRE(!copy->at<LSTM>(1)->is_training());
  REQUIRE(copy->at<LayerNorm>(0)->weight.grad().defined());
  REQUIRE(allclose(copy->at<LayerNorm>(0)->weight.grad(), list.at<LayerNorm>(0)->weight.grad(), 0, 0));

  ModuleDict dict;
  dict.insert("emb", std::make_shared<Embedding>(4, 2));
  auto dict_copy = nn::clone(dict);
  require_equal_but_separate(dict, *dict_copy);
  REQUIRE(dict_copy->keys() == std::vector<std::string>{"emb"});

  TransformerEncoder enc(TransformerEncoderLayer(4, 2, {.dim_feedforward = 8}), 2);
  auto enc_copy = nn::clone(enc);
  require_equal_but_separate(enc, *enc_copy);
}

TEST_CASE("Sequential of standard layers clones", "[nn][clone]") {
  Sequential seq({std::make_shared<Flatten>(), std::make_shared<Linear>(6, 4), std::make_shared<ReLU>(),
                  std::make_shared<Dropout>(0.5), std::make_shared<Linear>(4, 2, false)});
  seq.eval();
  auto copy = nn::clone(seq);
  require_equal_but_separate(seq, *copy);
  REQUIRE(copy->size() == 5);
  REQUIRE(!(*copy)[3]->is_training());
  REQUIRE(!std::dynamic_pointer_cast<Linear>((*copy)[4])->bias.defined());
  const Tensor x = test::random_double({3, 2, 3}, 4).to(DType::Float32);
  REQUIRE(allclose(seq(x).data(), (*copy)(x).data(), 0, 0));
}

TEST_CASE("BatchNorm clones with its running statistics and its own class", "[nn][clone]") {
  BatchNorm2d bn(3, 1e-3, 0.2);
  bn(Variable(test::random_double({4, 3, 2, 2}, 6).to(DType::Float32)));  // moves the running stats
  bn.eval();
  auto copy = nn::clone(bn);  // a BatchNorm2d, not just a BatchNorm
  require_equal_but_separate(bn, *copy);
  REQUIRE(copy->num_batches_tracked.data().item() == 1.0);
  REQUIRE(!copy->is_training());
  REQUIRE(copy->extra_repr() == bn.extra_repr());
  BatchNorm1d bn1(5, 1e-5, 0.1, false, false);
  REQUIRE(nn::clone(bn1)->parameters().empty());
}

TEST_CASE("A module that is not Cloneable says how to become one", "[nn][clone]") {
  struct Plain : Module {
    Plain() : Module("Plain") { register_parameter("w", zeros({2})); }
  };
  Plain plain;
  REQUIRE_THROWS_WITH(plain.clone(), Catch::Contains("Plain") && Catch::Contains("Cloneable"));
  ModuleList list;
  list.push_back(std::make_shared<Plain>());
  REQUIRE_THROWS_WITH(list.clone(), Catch::Contains("Cloneable"));
}

TEST_CASE("A CNN of convolution, pooling and upsampling layers clones", "[nn][clone]") {
  Sequential cnn({std::make_shared<Conv2d>(2, 4, Size2(3, 2), Conv2dOptions{.stride = {1, 2}, .padding = 1}),
                  std::make_shared<BatchNorm2d>(4), std::make_shared<ReLU>(),
                  std::make_shared<MaxPool2d>(2, 1, 0, 1, true), std::make_shared<AvgPool2d>(Size2(2, 1)),
                  std::make_shared<ConvTranspose2d>(4, 3, 2, ConvTranspose2dOptions{.stride = 2, .bias = false}),
                  std::make_shared<AdaptiveAvgPool2d>(Size2(3, 5)), std::make_shared<AdaptiveMaxPool2d>(3),
                  std::make_shared<Upsample>(Upsample::by_scale(2.0, InterpolateMode::Bilinear))});
  cnn.eval();
  auto copy = nn::clone(cnn);
  require_equal_but_separate(cnn, *copy);
  REQUIRE(std::dynamic_pointer_cast<ConvTranspose2d>((*copy)[5]) != nullptr);
  REQUIRE((*copy)[3]->extra_repr() == cnn[3]->extra_repr());
  const Tensor x = test::random_double({2, 2, 9, 8}, 8).to(DType::Float32);
  REQUIRE(allclose(cnn(x).data(), (*copy)(x).data(), 0, 0));
  Conv1d c1(3, 2, 3, {.padding = 1});
  auto c1_copy = nn::clone(c1);
  require_equal_but_separate(c1, *c1_copy);
}
