// embedding on Variables, on every device: the forward is index_select of the
// weight's rows, the backward index_add of the gradient rows (both deterministic:
// repeated indices add up in index order on the CPU and on CUDA, Note
// [Deterministic scatter on CUDA]), the padding row zeroed. detail::embedding_one_hot
// computes the same as a one-hot matrix product: the tests' cross-check.
#include <ddl/autograd/node.h>
#include <ddl/autograd/ops/embedding.h>
#include <ddl/autograd/ops/reduce.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/ops/elementwise.h>
#include <ddl/tensor/ops/indexing.h>
#include <ddl/tensor/ops/linalg.h>
#include <ddl/tensor/ops/reduce.h>

namespace ddl {

namespace {

// The weight gradient written with Variable ops, one_hot^T g (the padding column
// zeroed), so that create_graph can differentiate it again; built only when asked.
autograd::DiffBackwardFn one_hot_backward(const Tensor& idx, int64_t num, int64_t dim, int64_t padding) {
  return [idx, num, dim, padding](const Variable& g, const std::vector<bool>&) -> std::vector<Variable> {
    const Tensor one_hot =
        eq(idx.reshape({-1, 1}), arange(0.0, static_cast<double>(num), 1.0, {DType::Int64, g.device()})).to(g.dtype());
    if (padding >= 0) one_hot.narrow(1, padding, 1).zero_();
    return {matmul(Variable(one_hot.t()), g.reshape({-1, dim}))};
  };
}

}  // namespace

Variable embedding(const Tensor& indices, const Variable& weight, std::optional<int64_t> padding_idx) {
  DDL_CHECK(indices.defined() && (indices.dtype() == DType::Int64 || indices.dtype() == DType::Int32),
            "embedding: indices must be int64 or int32, got ",
            indices.defined() ? describe(indices) : std::string("undefined"));
  DDL_CHECK(weight.defined() && weight.dim() == 2, "embedding: weight must be [num_embeddings, dim], got ",
            weight.shape());
  const Tensor wd = weight.data();
  DDL_CHECK(indices.device() == wd.device(), "embedding: indices on ", indices.device(), " but weight on ",
            wd.device());
  const int64_t num = wd.size(0), dim = wd.size(1), m = indices.numel();
  const int64_t padding = padding_idx ? (*padding_idx < 0 ? *padding_idx + num : *padding_idx) : -1;
  DDL_CHECK(!padding_idx || (padding >= 0 && padding < num), "embedding: padding_idx ", *padding_idx,
            " out of range for ", num, " embeddings");
  Shape out_shape = indices.shape();
  out_shape.push_back(dim);

  const Tensor idx = indices.to(DType::Int64).contiguous().reshape({m});
  if (m > 0) {  // one read-back of both bounds (a wait for the device on CUDA, as index_select's own check)
    const auto [lo, hi] = detail::index_min_max(idx);
    DDL_CHECK(lo >= 0 && hi < num, "embedding: index ", lo < 0 ? lo : hi, " out of range for ", num, " embeddings");
  }
  // float16/bfloat16 weights: rows copied through float32 (exactly), their gradient
  // summed in float32 and rounded once (Note [Half compute]); the indexing kernels
  // move the other dtypes themselves.
  const bool half = is_reduced_float(wd.dtype());
  const Tensor out = detail::index_select_in_range(half ? wd.to(DType::Float32) : wd, 0, idx).to(wd.dtype());
  return autograd::make_result(
      out.reshape(out_shape), "EmbeddingBackward", {&weight},
      [idx, num, dim, padding](const Tensor& g, const std::vector<bool>&) -> std::vector<Tensor> {
        // idx was checked by the forward: no second read-back of its range.
        const DType acc = is_reduced_float(g.dtype()) ? DType::Float32 : g.dtype();
        const Tensor gw =
            detail::index_add_in_range(zeros({num, dim}, {acc, g.device()}), 0, idx, g.reshape({-1, dim}).to(acc));
        if (padding >= 0) gw.narrow(0, padding, 1).zero_();
        return {gw.to(g.dtype())};
      },
      one_hot_backward(idx, num, dim, padding));
}

namespace detail {

Variable embedding_one_hot(const Tensor& indices, const Variable& weight, std::optional<int64_t> padding_idx) {
  const Tensor wd = weight.data();
  const int64_t num = wd.size(0), dim = wd.size(1), m = indices.numel();
  const int64_t padding = padding_idx ? (*padding_idx < 0 ? *padding_idx + num : *padding_idx) : -1;
  Shape out_shape = indices.shape();
  out_shape.push_back(dim);
  const Tensor idx = indices.to(DType::Int64).contiguous().reshape({m});
  // one_hot [m, num] times weight [num, dim].
  const Tensor out_of_range = add(lt(idx, 0.0).to(DType::Int64), ge(idx, static_cast<double>(num)).to(DType::Int64));
  DDL_CHECK(sum(out_of_range).item() == 0, "embedding: an index is out of range for ", num, " embeddings");
  const Tensor one_hot =
      eq(idx.reshape({m, 1}), arange(0.0, static_cast<double>(num), 1.0, {DType::Int64, wd.device()})).to(wd.dtype());
  return autograd::make_result(
      matmul(one_hot, wd).reshape(out_shape), "EmbeddingBackward", {&weight},
      [one_hot, dim, padding](const Tensor& g, const std::vector<bool>&) -> std::vector<Tensor> {
        const Tensor gw = matmul(one_hot.t(), g.reshape({-1, dim}));
        if (padding >= 0) gw.narrow(0, padding, 1).zero_();
        return {gw};
      },
      one_hot_backward(idx, num, dim, padding));
}

}  // namespace detail

}  // namespace ddl
