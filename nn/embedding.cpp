// Embedding: construction (N(0, 1) as PyTorch, padding row zeroed) and printing.
#include <ddl/nn/embedding.h>
#include <ddl/nn/init.h>
#include <ddl/tensor/core/factory.h>

namespace ddl::nn {

namespace {
// What ddl's embedding does not implement, refused before the table is made.
const EmbeddingOptions& supported(const EmbeddingOptions& o) {
  DDL_CHECK(!o.max_norm(), "Embedding: max_norm (renormalising rows in forward) is not supported");
  DDL_CHECK(!o.scale_grad_by_freq(), "Embedding: scale_grad_by_freq is not supported");
  DDL_CHECK(!o.sparse(), "Embedding: sparse gradients are not supported");
  return o;
}
}  // namespace

Embedding::Embedding(const EmbeddingOptions& o)
    : Embedding(supported(o).num_embeddings(), o.embedding_dim(), o.padding_idx()) {}

Embedding::Embedding(int64_t num_embeddings, int64_t embedding_dim, std::optional<int64_t> padding_idx)
    : Cloneable("Embedding"), num_(num_embeddings), dim_(embedding_dim), padding_idx_(padding_idx) {
  DDL_CHECK(num_embeddings > 0 && embedding_dim > 0, "Embedding: sizes must be positive, got ", num_embeddings, "x",
            embedding_dim);
  if (padding_idx) {
    DDL_CHECK(*padding_idx >= -num_embeddings && *padding_idx < num_embeddings, "Embedding: padding_idx ", *padding_idx,
              " out of range for ", num_embeddings, " embeddings");
    if (*padding_idx < 0) padding_idx_ = *padding_idx + num_embeddings;
  }
  reset();
}

void Embedding::reset() {
  weight = register_parameter("weight", empty({num_, dim_}));
  init::normal_(weight.data(), 0.0, 1.0);
  if (padding_idx_) weight.data().select(0, *padding_idx_).zero_();
}

std::string Embedding::extra_repr() const {
  std::string s = std::to_string(num_) + ", " + std::to_string(dim_);
  if (padding_idx_) s += ", padding_idx=" + std::to_string(*padding_idx_);
  return s;
}

}  // namespace ddl::nn
