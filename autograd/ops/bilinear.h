// The bilinear form and bags of embeddings on Variables, as torch.nn.functional.bilinear
// and embedding_bag (without max_norm, scale_grad_by_freq or sparse gradients).
// Compositions of matmul, index_select and reductions (autograd/ops/bilinear.cpp).
#pragma once

#include <optional>

#include <ddl/autograd/variable.h>

namespace ddl {

// x1: [*, in1], x2: [*, in2] (the same leading dims), weight: [out, in1, in2], bias: [out]
// or undefined. y[..., o] = sum_ij x1[..., i] weight[o, i, j] x2[..., j] + bias[o]: [*, out].
Variable bilinear(const Variable& x1, const Variable& x2, const Variable& weight, const Variable& bias = Variable());

enum class EmbeddingBagMode { Sum, Mean, Max };

// Reduces bags of weight's rows. input: int64 or int32, either [B, L] (B bags of L indices;
// offsets undefined) or [n] with offsets [B] (bag b is input[offsets[b] : offsets[b + 1]],
// the last running to n; with include_last_offset, offsets has B + 1 entries and its last
// ends the last bag). offsets[0] must be 0, offsets non-decreasing and at most n. Entries
// equal to padding_idx (negative: counted from the end) are left out of their bag. An empty
// bag gives zeros. per_sample_weights: input's shape and weight's dtype, Sum mode only; each
// row is scaled by its weight. Returns [B, dim]; gradients flow to weight and
// per_sample_weights.
Variable embedding_bag(const Tensor& input, const Variable& weight, const Tensor& offsets = Tensor(),
                       EmbeddingBagMode mode = EmbeddingBagMode::Mean, const Variable& per_sample_weights = Variable(),
                       bool include_last_offset = false, std::optional<int64_t> padding_idx = std::nullopt);

}  // namespace ddl
