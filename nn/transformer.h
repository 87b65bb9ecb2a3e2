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

namespace ddl::nn {

// PyTorch's keyword arguments: TransformerEncoderLayer(64, 4, {.dim_feedforward = 256, .batch_first = true}).
struct TransformerEncoderLayerOptions {
  int64_t dim_feedforward = 2048;
  double dropout = 0.1;
  std::string activation = "relu";  // "relu" or "gelu" (exact)
  double layer_norm_eps = 1e-5;
  bool batch_first = false;
  bool norm_first = false;  // pre-norm: x + sa(norm1(x)) instead of norm1(x + sa(x))
};

class TransformerEncoderLayer : public Cloneable<TransformerEncoderLayer> {
 public:
  TransformerEncoderLayer(int64_t d_model, int64_t nhead, TransformerEncoderLayerOptions opts = {});
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

  int64_t d_model_, nhead_;
  TransformerEncoderLayerOptions opts_;
};

// num_layers clones of `layer` (each an independent deep copy, as PyTorch's
// _get_clones), then an optional final norm.
class TransformerEncoder : public Module {
 public:
  TransformerEncoder(const TransformerEncoderLayer& layer, int64_t num_layers,
                     std::shared_ptr<LayerNorm> norm = nullptr);
  Variable forward(const Variable& src, const AttentionMasks& masks);
  Variable forward(const Variable& src) override { return forward(src, AttentionMasks{}); }
  std::shared_ptr<Module> clone() const override;

  std::shared_ptr<ModuleList> layers;
  std::shared_ptr<LayerNorm> norm;  // may be null
};

}  // namespace ddl::nn
