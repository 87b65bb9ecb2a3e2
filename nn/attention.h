// MultiheadAttention as torch.nn.MultiheadAttention (Vaswani et al. 2017, sec. 3.2):
// the same parameters (in_proj_weight [3E, E], in_proj_bias [3E], out_proj), masks
// and returned head-averaged weights. Not supported: kdim/vdim != embed_dim,
// add_bias_kv, add_zero_attn. Built from differentiable Variable ops.
#pragma once

#include <memory>

#include <ddl/autograd/functions.h>
#include <ddl/nn/layers.h>
#include <ddl/nn/module.h>
#include <ddl/tensor/core/options_arg.h>

namespace ddl::nn {

struct AttentionOutput {
  Variable output;   // [L, N, E] ([N, L, E] when batch_first, [L, E] unbatched)
  Variable weights;  // [N, L, S] averaged over heads, or [N, heads, L, S]; undefined unless need_weights
};

// Masks are plain tensors (no gradient). A bool mask marks positions that may NOT
// be attended (true = masked, as PyTorch); a float mask is added to the scores.
struct AttentionMasks {
  Tensor attn_mask;         // [L, S] or [N * heads, L, S]; e.g. causal_mask(L)
  Tensor key_padding_mask;  // [N, S] (or [S] unbatched): true for padding keys
};

// LibTorch's MultiheadAttentionOptions(20, 10).bias(false), with Python's batch_first.
// ddl refuses add_bias_kv, add_zero_attn and a kdim/vdim other than embed_dim.
struct MultiheadAttentionOptions {
  MultiheadAttentionOptions(int64_t embed_dim, int64_t num_heads)
      : embed_dim_(embed_dim), num_heads_(num_heads), kdim_(embed_dim), vdim_(embed_dim) {}
  DDL_ARG(int64_t, embed_dim);
  DDL_ARG(int64_t, num_heads);
  DDL_ARG(double, dropout) = 0.0;
  DDL_ARG(bool, bias) = true;
  DDL_ARG(bool, add_bias_kv) = false;
  DDL_ARG(bool, add_zero_attn) = false;
  DDL_ARG(int64_t, kdim);
  DDL_ARG(int64_t, vdim);
  DDL_ARG(bool, batch_first) = false;
};

class MultiheadAttention : public Cloneable<MultiheadAttention> {
 public:
  explicit MultiheadAttention(const MultiheadAttentionOptions& o);
  MultiheadAttention(int64_t embed_dim, int64_t num_heads, double dropout = 0.0, bool bias = true,
                     bool batch_first = false);
  void reset() override;
  // query: [L, N, E]; key, value: [S, N, E] (batch-first or unbatched forms likewise).
  AttentionOutput forward(const Variable& query, const Variable& key, const Variable& value,
                          const AttentionMasks& masks = {}, bool need_weights = true, bool average_attn_weights = true);
  // Self-attention without masks; the output only.
  Variable forward(const Variable& x) override { return forward(x, x, x, {}, false).output; }
  std::string extra_repr() const override;
  int64_t embed_dim() const { return embed_dim_; }
  int64_t num_heads() const { return num_heads_; }

  Variable in_proj_weight, in_proj_bias;  // [3E, E] (q, k, v stacked), [3E] or undefined
  std::shared_ptr<Linear> out_proj;       // E -> E

 private:
  int64_t embed_dim_, num_heads_;
  double dropout_;
  bool bias_, batch_first_;
};

// [size, size] bool, true above the diagonal: position i may attend only j <= i
// (torch.nn.Transformer.generate_square_subsequent_mask, as a bool mask).
Tensor causal_mask(int64_t size, Device device = Device::cpu());

}  // namespace ddl::nn
