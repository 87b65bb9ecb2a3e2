// TransformerEncoderLayer and TransformerEncoder as torch.nn's (Vaswani et al.
// 2017; norm_first as Xiong et al. 2020): same submodule names (self_attn, linear1,
// linear2, norm1, norm2), so state dicts line up. The decoder is not here.
#pragma once

#include <memory>
#include <string>

#include <ddl/nn/attention.h>
#include <ddl/nn/container.h>
#include <ddl/nn/layers.h>
#include <ddl/nn/normalization.h>
#include <ddl/tensor/core/options_arg.h>

namespace ddl::nn {

// LibTorch's options, with Python's layer_norm_eps, batch_first and norm_first:
// TransformerEncoderLayer(TransformerEncoderLayerOptions(64, 4).dim_feedforward(256).batch_first(true)).
struct TransformerEncoderLayerOptions {
  TransformerEncoderLayerOptions(int64_t d_model, int64_t nhead)  // NOLINT: implicit, as LibTorch's
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

class TransformerEncoderLayer : public Cloneable<TransformerEncoderLayer> {
 public:
  TransformerEncoderLayer(const TransformerEncoderLayerOptions& opts);  // NOLINT: implicit, as LibTorch's
  TransformerEncoderLayer(int64_t d_model, int64_t nhead)
      : TransformerEncoderLayer(TransformerEncoderLayerOptions(d_model, nhead)) {}
  void reset() override;
  // src: [S, N, E] ([N, S, E] when batch_first, [S, E] unbatched); masks as MultiheadAttention's.
  Variable forward(const Variable& src, const AttentionMasks& masks);
  Variable forward(const Variable& src) override { return forward(src, AttentionMasks{}); }

  std::shared_ptr<MultiheadAttention> self_attn;
  std::shared_ptr<Linear> linear1, linear2;
  std::shared_ptr<Dropout> dropout, dropout1, dropout2;
  std::shared_ptr<LayerNorm> norm1, norm2;

 private:
  Variable self_attention_block(const Variable& x, const AttentionMasks& masks);
  Variable feed_forward_block(const Variable& x);

  TransformerEncoderLayerOptions opts_;
};

// num_layers clones of `layer` (each an independent deep copy, as PyTorch's
// _get_clones), then an optional final norm.
// LibTorch's TransformerEncoderOptions(TransformerEncoderLayerOptions(512, 8), 6) or
// (layer, 6) with a TransformerEncoderLayer (module or holder), which is cloned
// num_layers times. norm is a LayerNorm here (LibTorch's is an AnyModule).
struct TransformerEncoderOptions {
  TransformerEncoderOptions(const TransformerEncoderLayerOptions& layer_options, int64_t num_layers)
      : encoder_layer_(std::make_shared<TransformerEncoderLayer>(layer_options)), num_layers_(num_layers) {}
  TransformerEncoderOptions(std::shared_ptr<TransformerEncoderLayer> layer, int64_t num_layers)
      : encoder_layer_(std::move(layer)), num_layers_(num_layers) {}
  template <typename Holder>
  requires requires(const Holder& h) { std::shared_ptr<TransformerEncoderLayer>(h.ptr()); }
  TransformerEncoderOptions(const Holder& layer, int64_t num_layers)
      : TransformerEncoderOptions(std::shared_ptr<TransformerEncoderLayer>(layer.ptr()), num_layers) {}
  DDL_ARG(std::shared_ptr<TransformerEncoderLayer>, encoder_layer);
  DDL_ARG(int64_t, num_layers);
  DDL_ARG(std::shared_ptr<LayerNorm>, norm);
};

class TransformerEncoder : public Module {
 public:
  explicit TransformerEncoder(const TransformerEncoderOptions& o);
  TransformerEncoder(const TransformerEncoderLayer& layer, int64_t num_layers,
                     std::shared_ptr<LayerNorm> norm = nullptr);
  Variable forward(const Variable& src, const AttentionMasks& masks);
  Variable forward(const Variable& src) override { return forward(src, AttentionMasks{}); }
  std::shared_ptr<Module> clone() const override;

  std::shared_ptr<ModuleList> layers;
  std::shared_ptr<LayerNorm> norm;  // may be null
};

}  // namespace ddl::nn
