// The two models' layers and forward passes.
#include <ddl/autograd/grad_mode.h>
#include <ddl/base/error.h>
#include <ddl/nn/attention.h>
#include <ddl/nn/models/char_lm.h>
#include <ddl/tensor/core/factory.h>

namespace ddl::nn::char_lm {

CharTransformer::CharTransformer(const ModelConfig& c) : nn::Module("CharTransformer"), context_(c.context) {
  tok_ = register_module("tok", std::make_shared<nn::Embedding>(c.vocab, c.d_model));
  pos_ = register_module("pos", std::make_shared<nn::Embedding>(c.context, c.d_model));
  const nn::TransformerEncoderLayer layer(nn::TransformerEncoderLayerOptions(c.d_model, c.heads)
                                              .dim_feedforward(c.ff)
                                              .dropout(c.dropout)
                                              .activation("gelu")
                                              .batch_first(true)
                                              .norm_first(true));
  blocks_ = register_module("blocks", std::make_shared<nn::TransformerEncoder>(layer, c.layers));
  norm_ = register_module("norm", std::make_shared<nn::LayerNorm>(Shape{c.d_model}));
  head_ = register_module("head", std::make_shared<nn::Linear>(c.d_model, c.vocab));
  // GPT-2's initialisation of the embeddings (N(0, 0.02)) keeps the first losses near log(vocab).
  NoGradGuard no_grad;
  tok_->weight.data().mul_(0.02);
  pos_->weight.data().mul_(0.02);
}

Variable CharTransformer::forward(const Variable& tokens) {
  const int64_t t = tokens.data().size(1);
  DDL_CHECK(t <= context_, "CharTransformer: ", t, " tokens exceed the context of ", context_);
  const Tensor positions = arange(0, t, 1, DType::Int64);
  const Variable x = tok_->forward(tokens.data()) + pos_->forward(positions);  // [B, T, E] + [T, E]
  nn::AttentionMasks masks;
  masks.attn_mask = nn::causal_mask(t);
  const Variable h = blocks_->forward(x, masks);
  return head_->forward(norm_->forward(h));
}

CharLSTM::CharLSTM(const ModelConfig& c) : nn::Module("CharLSTM") {
  tok_ = register_module("tok", std::make_shared<nn::Embedding>(c.vocab, c.embed));
  lstm_ = register_module(
      "lstm", std::make_shared<nn::LSTM>(
                  nn::LSTMOptions(c.embed, c.hidden).num_layers(c.lstm_layers).batch_first(true).dropout(c.dropout)));
  head_ = register_module("head", std::make_shared<nn::Linear>(c.hidden, c.vocab));
}

Variable CharLSTM::forward(const Variable& tokens) {
  return head_->forward(lstm_->forward(tok_->forward(tokens.data())));  // from zero states
}

std::shared_ptr<nn::Module> make_model(const ModelConfig& c) {
  if (c.kind == "transformer") return std::make_shared<CharTransformer>(c);
  DDL_CHECK(c.kind == "lstm", "char_lm: --model must be transformer or lstm, got '", c.kind, "'");
  return std::make_shared<CharLSTM>(c);
}

}  // namespace ddl::nn::char_lm
