// Bilinear and EmbeddingBag (torch.nn's), over autograd/ops/bilinear.h's functions.
// Embedding is in embedding.h.
#pragma once

#include <optional>

#include <ddl/autograd/ops/bilinear.h>
#include <ddl/nn/module.h>
#include <ddl/tensor/core/options_arg.h>

namespace ddl::nn {

struct BilinearOptions {
  BilinearOptions(int64_t in1_features, int64_t in2_features, int64_t out_features)
      : in1_features_(in1_features), in2_features_(in2_features), out_features_(out_features) {}
  DDL_ARG(int64_t, in1_features);
  DDL_ARG(int64_t, in2_features);
  DDL_ARG(int64_t, out_features);
  DDL_ARG(bool, bias) = true;
};

// y = x1^T W x2 + b; weight [out, in1, in2] and bias [out] start uniform in
// [-1/sqrt(in1), 1/sqrt(in1)], as PyTorch's.
class Bilinear : public Cloneable<Bilinear> {
 public:
  Bilinear(const BilinearOptions& options);  // NOLINT: LibTorch's form
  Bilinear(int64_t in1_features, int64_t in2_features, int64_t out_features, bool bias = true)
      : Bilinear(BilinearOptions(in1_features, in2_features, out_features).bias(bias)) {}
  void reset() override;
  Variable forward(const Variable& x1, const Variable& x2) { return bilinear(x1, x2, weight, bias); }
  // One input alone is refused: Bilinear needs two (Sequential cannot hold it).
  Variable forward(const Variable& x) override;
  std::string extra_repr() const override;
  Variable weight, bias;

 private:
  BilinearOptions options_;
};

struct EmbeddingBagOptions {
  EmbeddingBagOptions(int64_t num_embeddings, int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
  DDL_ARG(int64_t, num_embeddings);
  DDL_ARG(int64_t, embedding_dim);
  DDL_ARG(EmbeddingBagMode, mode) = EmbeddingBagMode::Mean;
  DDL_ARG(bool, include_last_offset) = false;
  DDL_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
};

// Sums, averages or takes the max of bags of embeddings (embedding_bag); weight starts
// N(0, 1) with the padding_idx row zero, as PyTorch's.
class EmbeddingBag : public Cloneable<EmbeddingBag> {
 public:
  EmbeddingBag(const EmbeddingBagOptions& options);  // NOLINT: LibTorch's form
  EmbeddingBag(int64_t num_embeddings, int64_t embedding_dim, EmbeddingBagMode mode = EmbeddingBagMode::Mean)
      : EmbeddingBag(EmbeddingBagOptions(num_embeddings, embedding_dim).mode(mode)) {}
  void reset() override;
  // input [B, L] (offsets undefined) or [n] with offsets; returns [B, embedding_dim].
  Variable forward(const Tensor& input, const Tensor& offsets = Tensor(),
                   const Variable& per_sample_weights = Variable());
  // For Sequential: x holds [B, L] indices.
  Variable forward(const Variable& x) override { return forward(x.data()); }
  std::string extra_repr() const override;
  Variable weight;  // [num_embeddings, embedding_dim]

 private:
  EmbeddingBagOptions options_;
};

}  // namespace ddl::nn
