// TransformerDecoderLayer, TransformerDecoder and Transformer as torch.nn's (Vaswani et al. 2017;
// norm_first as Xiong et al. 2020), with the same submodule names (self_attn, multihead_attn,
// linear1, linear2, norm1..3; encoder, decoder), so state dicts line up. Transformer builds
// PyTorch's default encoder and decoder (each with a final LayerNorm); custom ones are not offered.
#pragma once

#include <memory>
#include <string>

#include <ddl/nn/transformer.h>
#include <ddl/tensor/core/options_arg.h>

namespace ddl::nn {

// TransformerDecoderLayer(TransformerDecoderLayerOptions(64, 4).dim_feedforward(256).batch_first(true)).
struct TransformerDecoderLayerOptions {
  TransformerDecoderLayerOptions(int64_t d_model, int64_t nhead)  // NOLINT: implicit, as LibTorch's
      : d_model_(d_model), nhead_(nhead) {}
  DDL_ARG(int64_t, d_model);
  DDL_ARG(int64_t, nhead);
  DDL_ARG(int64_t, dim_feedforward) = 2048;
  DDL_ARG(double, dropout) = 0.1;
  DDL_ARG(std::string, activation) = "relu";  // "relu" or "gelu" (exact)
  DDL_ARG(double, layer_norm_eps) = 1e-5;
  DDL_ARG(bool, batch_first) = false;
  DDL_ARG(bool, norm_first) = false;  // pre-norm: x + sa(norm1(x)) instead of norm1(x + sa(x))
};

// Plain tensors, no gradient; each as AttentionMasks' (bool: true = masked; float: added).
struct TransformerDecoderMasks {
  Tensor tgt_mask;                 // [T, T] or [N * heads, T, T], e.g. generate_square_subsequent_mask(T)
  Tensor memory_mask;              // [T, S] or [N * heads, T, S]
  Tensor tgt_key_padding_mask;     // [N, T]
  Tensor memory_key_padding_mask;  // [N, S]
};

class TransformerDecoderLayer : public Cloneable<TransformerDecoderLayer> {
 public:
  TransformerDecoderLayer(const TransformerDecoderLayerOptions& opts);  // NOLINT: implicit, as LibTorch's
  TransformerDecoderLayer(int64_t d_model, int64_t nhead)
      : TransformerDecoderLayer(TransformerDecoderLayerOptions(d_model, nhead)) {}
  void reset() override;
  // tgt: [T, N, E] ([N, T, E] when batch_first, [T, E] unbatched); memory: [S, N, E] likewise.
  using Module::forward;  // it takes two inputs; Sequential's one-input forward stays out of reach
  Variable forward(const Variable& tgt, const Variable& memory, const TransformerDecoderMasks& masks = {});
  const TransformerDecoderLayerOptions& options() const { return opts_; }

  std::shared_ptr<MultiheadAttention> self_attn, multihead_attn;
  std::shared_ptr<Linear> linear1, linear2;
  std::shared_ptr<Dropout> dropout, dropout1, dropout2, dropout3;
  std::shared_ptr<LayerNorm> norm1, norm2, norm3;

 private:
  Variable self_attention_block(const Variable& x, const TransformerDecoderMasks& masks);
  Variable cross_attention_block(const Variable& x, const Variable& memory, const TransformerDecoderMasks& masks);
  Variable feed_forward_block(const Variable& x);

  TransformerDecoderLayerOptions opts_;
};

// num_layers clones of `layer` (independent deep copies, as PyTorch's _get_clones), then an
// optional final norm.
class TransformerDecoder : public Module {
 public:
  TransformerDecoder(const TransformerDecoderLayer& layer, int64_t num_layers,
                     std::shared_ptr<LayerNorm> norm = nullptr);
  using Module::forward;  // it takes two inputs; Sequential's one-input forward stays out of reach
  Variable forward(const Variable& tgt, const Variable& memory, const TransformerDecoderMasks& masks = {});
  std::shared_ptr<Module> clone() const override;

  std::shared_ptr<ModuleList> layers;
  std::shared_ptr<LayerNorm> norm;  // may be null
};

// Transformer(TransformerOptions(64, 4).num_encoder_layers(2).batch_first(true)); the defaults
// are PyTorch's (512, 8, 6 + 6 layers, 2048, dropout 0.1, relu).
struct TransformerOptions {
  TransformerOptions(int64_t d_model = 512, int64_t nhead = 8)  // NOLINT: implicit, as LibTorch's
      : d_model_(d_model), nhead_(nhead) {}
  DDL_ARG(int64_t, d_model);
  DDL_ARG(int64_t, nhead);
  DDL_ARG(int64_t, num_encoder_layers) = 6;
  DDL_ARG(int64_t, num_decoder_layers) = 6;
  DDL_ARG(int64_t, dim_feedforward) = 2048;
  DDL_ARG(double, dropout) = 0.1;
  DDL_ARG(std::string, activation) = "relu";
  DDL_ARG(double, layer_norm_eps) = 1e-5;
  DDL_ARG(bool, batch_first) = false;
  DDL_ARG(bool, norm_first) = false;
};

struct TransformerMasks {
  Tensor src_mask;                 // [S, S] or [N * heads, S, S]
  Tensor tgt_mask;                 // [T, T] or [N * heads, T, T]
  Tensor memory_mask;              // [T, S] or [N * heads, T, S]
  Tensor src_key_padding_mask;     // [N, S]
  Tensor tgt_key_padding_mask;     // [N, T]
  Tensor memory_key_padding_mask;  // [N, S]
};

class Transformer : public Module {
 public:
  explicit Transformer(const TransformerOptions& opts = {});
  // Xavier-uniform for every parameter of two or more dims, as torch.nn.Transformer._reset_parameters.
  void reset_parameters();
  // src: [S, N, E], tgt: [T, N, E] ([N, *, E] when batch_first; [S, E], [T, E] unbatched) -> [T, N, E].
  using Module::forward;  // it takes two inputs; Sequential's one-input forward stays out of reach
  Variable forward(const Variable& src, const Variable& tgt, const TransformerMasks& masks = {});
  std::shared_ptr<Module> clone() const override;
  const TransformerOptions& options() const { return opts_; }
  // [sz, sz] float: -inf above the diagonal, 0 elsewhere (position i attends to j <= i).
  static Tensor generate_square_subsequent_mask(int64_t sz, TensorOptions opts = {});

  std::shared_ptr<TransformerEncoder> encoder;
  std::shared_ptr<TransformerDecoder> decoder;

 private:
  TransformerOptions opts_;
};

}  // namespace ddl::nn
