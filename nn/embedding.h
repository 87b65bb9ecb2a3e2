// Embedding: a lookup table of learned vectors (torch.nn.Embedding, without
// max_norm or sparse gradients). The math is in autograd/ops/embedding.cpp.
#pragma once

#include <optional>

#include <ddl/autograd/functions.h>
#include <ddl/nn/module.h>

namespace ddl::nn {

class Embedding : public Cloneable<Embedding> {
 public:
  // padding_idx (may be negative, counted from the end): that row starts at zero
  // and never receives a gradient, as in PyTorch.
  Embedding(int64_t num_embeddings, int64_t embedding_dim, std::optional<int64_t> padding_idx = std::nullopt);
  void reset() override;
  // indices: int64 of any shape; returns [*indices.shape, embedding_dim].
  Variable forward(const Tensor& indices) { return embedding(indices, weight, padding_idx_); }
  // The same, for Sequential: x holds the int64 indices.
  Variable forward(const Variable& x) override { return forward(x.data()); }
  std::string extra_repr() const override;
  Variable weight;  // [num_embeddings, embedding_dim], N(0, 1) initially

 private:
  int64_t num_, dim_;
  std::optional<int64_t> padding_idx_;
};

}  // namespace ddl::nn
