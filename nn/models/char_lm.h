// Two small character-level language models built only from ddl's public nn API:
// a decoder-only Transformer (token + learned position embeddings, pre-norm encoder
// layers under a causal mask, a final LayerNorm and a linear head: GPT-style,
// Radford et al. 2018) and a 2-layer LSTM (Karpathy's char-rnn). Both map int64
// tokens [B, T] to logits [B, T, vocab]. apps/examples/char_lm trains them; bench/ times and
// measures them (ddl-bench seq-step, the ZeRO and FSDP memory programs).
#pragma once

#include <memory>
#include <string>

#include <ddl/nn/embedding.h>
#include <ddl/nn/layers.h>
#include <ddl/nn/normalization.h>
#include <ddl/nn/rnn.h>
#include <ddl/nn/transformer.h>

namespace ddl::nn::char_lm {

struct ModelConfig {
  std::string kind = "transformer";  // or "lstm"
  int64_t vocab = 0, context = 128;
  int64_t d_model = 128, heads = 4, layers = 4, ff = 512;  // transformer
  int64_t embed = 64, hidden = 256, lstm_layers = 2;       // lstm
  double dropout = 0.0;
};

class CharTransformer : public ddl::nn::Module {
 public:
  explicit CharTransformer(const ModelConfig& c);
  ddl::Variable forward(const ddl::Variable& tokens) override;

 private:
  std::shared_ptr<ddl::nn::Embedding> tok_, pos_;
  std::shared_ptr<ddl::nn::TransformerEncoder> blocks_;
  std::shared_ptr<ddl::nn::LayerNorm> norm_;
  std::shared_ptr<ddl::nn::Linear> head_;
  int64_t context_;
};

class CharLSTM : public ddl::nn::Module {
 public:
  explicit CharLSTM(const ModelConfig& c);
  ddl::Variable forward(const ddl::Variable& tokens) override;

 private:
  std::shared_ptr<ddl::nn::Embedding> tok_;
  std::shared_ptr<ddl::nn::LSTM> lstm_;
  std::shared_ptr<ddl::nn::Linear> head_;
};

std::shared_ptr<ddl::nn::Module> make_model(const ModelConfig& c);

}  // namespace ddl::nn::char_lm
