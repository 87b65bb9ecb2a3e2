// embedding on Variables. On the CPU the forward copies rows and the backward
// scatter-adds them serially (so the sum order, and the result, never depends on
// threads). Other devices take a one-hot matrix product instead: exact, and built
// from existing device ops, but O(rows * num_embeddings) — fine for character and
// small vocabularies until a device gather kernel exists.
#include "autograd/ops/embedding.h"

#include <cstring>

#include "autograd/node.h"
#include "autograd/ops/reduce.h"
#include "tensor/elementwise.h"
#include "tensor/factory.h"
#include "tensor/linalg.h"
#include "tensor/reduce.h"

namespace ddl {

namespace {

// out[i, :] = w[idx[i], :]. out: [m, dim], w: [num, dim], both contiguous.
template <typename T>
void gather_rows(const int64_t* idx, int64_t m, const Tensor& w, const Tensor& out) {
  const int64_t dim = w.size(1);
  const T* src = w.data<T>();
  T* dst = out.data<T>();
  for (int64_t i = 0; i < m; ++i) std::memcpy(dst + i * dim, src + idx[i] * dim, static_cast<size_t>(dim) * sizeof(T));
}

// gw[idx[i], :] += g[i, :], skipping the padding row. gw: [num, dim] zeros; g: [m, dim].
template <typename T>
void scatter_add_rows(const int64_t* idx, int64_t m, const Tensor& g, const Tensor& gw, int64_t padding) {
  const int64_t dim = gw.size(1);
  const T* src = g.data<T>();
  T* dst = gw.data<T>();
  for (int64_t i = 0; i < m; ++i) {
    if (idx[i] == padding) continue;
    T* row = dst + idx[i] * dim;
    const T* grow = src + i * dim;
    for (int64_t j = 0; j < dim; ++j) row[j] += grow[j];
  }
}

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
  DDL_CHECK(indices.defined() && indices.dtype() == DType::Int64, "embedding: indices must be int64, got ",
            indices.defined() ? describe(indices) : std::string("undefined"));
  DDL_CHECK(weight.defined() && weight.dim() == 2, "embedding: weight must be [num_embeddings, dim], got ",
            weight.shape());
  const Tensor wd = weight.data();
  DDL_CHECK(wd.dtype() == DType::Float32 || wd.dtype() == DType::Float64,
            "embedding: weight must be float32 or float64, got ", wd.dtype());
  DDL_CHECK(indices.device() == wd.device(), "embedding: indices on ", indices.device(), " but weight on ",
            wd.device());
  const int64_t num = wd.size(0), dim = wd.size(1), m = indices.numel();
  const int64_t padding = padding_idx ? (*padding_idx < 0 ? *padding_idx + num : *padding_idx) : -1;
  DDL_CHECK(!padding_idx || (padding >= 0 && padding < num), "embedding: padding_idx ", *padding_idx,
            " out of range for ", num, " embeddings");
  Shape out_shape = indices.shape();
  out_shape.push_back(dim);

  const Tensor idx = indices.contiguous().reshape({m});
  if (wd.device().is_cpu()) {
    const int64_t* ip = idx.data<int64_t>();
    for (int64_t i = 0; i < m; ++i)
      DDL_CHECK(ip[i] >= 0 && ip[i] < num, "embedding: index ", ip[i], " out of range for ", num, " embeddings");
    const Tensor w = wd.contiguous();
    const Tensor out = empty({m, dim}, {wd.dtype(), wd.device()});
    if (wd.dtype() == DType::Float32)
      gather_rows<float>(ip, m, w, out);
    else
      gather_rows<double>(ip, m, w, out);
    return autograd::make_result(
        out.reshape(out_shape), "EmbeddingBackward", {&weight},
        [idx, num, dim, padding](const Tensor& g, const std::vector<bool>&) -> std::vector<Tensor> {
          const Tensor g2 = g.contiguous().reshape({-1, dim});
          const Tensor gw = zeros({num, dim}, {g.dtype(), g.device()});
          if (g.dtype() == DType::Float32)
            scatter_add_rows<float>(idx.data<int64_t>(), idx.numel(), g2, gw, padding);
          else
            scatter_add_rows<double>(idx.data<int64_t>(), idx.numel(), g2, gw, padding);
          return {gw};
        },
        one_hot_backward(idx, num, dim, padding));
  }
  return detail::embedding_one_hot(indices, weight, padding_idx);
}

namespace detail {

Variable embedding_one_hot(const Tensor& indices, const Variable& weight, std::optional<int64_t> padding_idx) {
  const Tensor wd = weight.data();
  const int64_t num = wd.size(0), dim = wd.size(1), m = indices.numel();
  const int64_t padding = padding_idx ? (*padding_idx < 0 ? *padding_idx + num : *padding_idx) : -1;
  Shape out_shape = indices.shape();
  out_shape.push_back(dim);
  const Tensor idx = indices.contiguous().reshape({m});
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
