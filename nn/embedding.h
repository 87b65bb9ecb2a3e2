// Embedding: a lookup table of learned vectors (torch.nn.Embedding, without
// max_norm or sparse gradients). The math is in autograd/ops/embedding.cpp.
#pragma once

#include <optional>

#include <ddl/autograd/functions.h>
#include <ddl/nn/module.h>
#include <ddl/tensor/core/options_arg.h>

namespace ddl::nn {

// LibTorch's EmbeddingOptions(10, 3).padding_idx(0). ddl refuses max_norm,
// scale_grad_by_freq and sparse with an error naming the option; norm_type only matters
// with max_norm.
struct EmbeddingOptions {
  EmbeddingOptions(int64_t num_embeddings, int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
  DDL_ARG(int64_t, num_embeddings);
  DDL_ARG(int64_t, embedding_dim);
  DDL_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
  DDL_ARG(std::optional<double>, max_norm) = std::nullopt;
  DDL_ARG(double, norm_type) = 2.;
  DDL_ARG(bool, scale_grad_by_freq) = false;
  DDL_ARG(bool, sparse) = false;
};

class Embedding : public Cloneable<Embedding> {
 public:
  explicit Embedding(const EmbeddingOptions& o);
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
