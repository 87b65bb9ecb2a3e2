// Differentiable embedding lookup (forward and backward in embedding.cpp), as
// torch.nn.functional.embedding without max_norm or sparse gradients.
#pragma once

#include <optional>

#include <ddl/autograd/variable.h>

namespace ddl {

// indices: int64 or int32 of any shape, each in [0, num_embeddings); weight: [num_embeddings, dim]
// of any dtype (only float weights get a gradient).
// Returns [*indices.shape, dim] holding the selected rows. The backward adds each
// output row's gradient into its weight row (repeated indices accumulate); the row
// padding_idx, when given, gets no gradient. No gradient flows to the indices.
Variable embedding(const Tensor& indices, const Variable& weight, std::optional<int64_t> padding_idx = std::nullopt);

namespace detail {
// The path devices other than the CPU take: a one-hot matrix times the weight.
// Same contract as embedding(); public so that a CPU test can check it.
Variable embedding_one_hot(const Tensor& indices, const Variable& weight, std::optional<int64_t> padding_idx);
}  // namespace detail

}  // namespace ddl
