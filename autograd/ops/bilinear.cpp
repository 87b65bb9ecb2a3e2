// bilinear as one matmul against weight viewed [in1, out * in2], then a product with x2
// summed over in2; embedding_bag as one index_select per bag and a reduction over it. Both
// are compositions, so their gradients (and bilinear's double backward) come with them.
#include <vector>

#include <ddl/autograd/ops/bilinear.h>
#include <ddl/autograd/ops/elementwise.h>
#include <ddl/autograd/ops/indexing.h>
#include <ddl/autograd/ops/join.h>
#include <ddl/autograd/ops/reduce.h>
#include <ddl/tensor/core/factory.h>

namespace ddl {

Variable bilinear(const Variable& x1, const Variable& x2, const Variable& weight, const Variable& bias) {
  DDL_CHECK(x1.dim() >= 1 && x2.dim() >= 1, "bilinear: expected inputs of at least 1 dim, got ", x1.shape(), " and ",
            x2.shape());
  DDL_CHECK(x1.dim() == x2.dim(), "bilinear: input batch dimensions do not match: ", x1.shape(), " and ", x2.shape());
  for (int64_t d = 0; d + 1 < x1.dim(); ++d)
    DDL_CHECK(x1.size(d) == x2.size(d), "bilinear: input batch dimensions do not match at dim ", d, ": ", x1.shape(),
              " and ", x2.shape());
  DDL_CHECK(weight.dim() == 3, "bilinear: expected weight [out, in1, in2], got ", weight.shape());
  const int64_t out = weight.size(0), in1 = weight.size(1), in2 = weight.size(2);
  DDL_CHECK(x1.size(-1) == in1, "bilinear: input1 size does not match weight size: got ", x1.size(-1), " but expected ",
            in1);
  DDL_CHECK(x2.size(-1) == in2, "bilinear: input2 size does not match weight size: got ", x2.size(-1), " but expected ",
            in2);
  DDL_CHECK(!bias.defined() || (bias.dim() == 1 && bias.size(0) == out), "bilinear: bias should be [", out, "], got ",
            bias.defined() ? bias.shape() : Shape{});
  DDL_CHECK(x1.dtype() == x2.dtype() && x1.dtype() == weight.dtype() && (!bias.defined() || bias.dtype() == x1.dtype()),
            "bilinear: expected inputs, weight and bias of one dtype, got ", x1.dtype(), ", ", x2.dtype(), " and ",
            weight.dtype());
  const Variable a = x1.reshape({-1, in1}), b = x2.reshape({-1, in2});
  // [B, in1] @ [in1, out * in2] -> [B, out, in2], then contract in2 with x2.
  const Variable t = matmul(a, weight.permute({1, 0, 2}).reshape({in1, out * in2})).reshape({-1, out, in2});
  Variable y = (t * b.unsqueeze(1)).sum(std::vector<int64_t>{2});
  if (bias.defined()) y = y + bias;
  Shape shape = x1.shape();
  shape[shape.size() - 1] = out;
  return y.reshape(shape);
}

namespace {
std::vector<int64_t> to_int64s(const Tensor& t) {
  const Tensor c = t.to(DType::Int64).to(Device::cpu()).contiguous();
  const int64_t* p = c.data<int64_t>();
  return std::vector<int64_t>(p, p + c.numel());
}
}  // namespace

Variable embedding_bag(const Tensor& input, const Variable& weight, const Tensor& offsets, EmbeddingBagMode mode,
                       const Variable& per_sample_weights, bool include_last_offset,
                       std::optional<int64_t> padding_idx) {
  DDL_CHECK(input.dtype() == DType::Int64 || input.dtype() == DType::Int32,
            "embedding_bag: expected int64 or int32 indices, got ", input.dtype());
  DDL_CHECK(input.dim() == 1 || input.dim() == 2, "embedding_bag: input has to be 1-D or 2-D, got ", input.shape());
  DDL_CHECK(weight.dim() == 2, "embedding_bag: expected weight [num_embeddings, dim], got ", weight.shape());
  const int64_t num = weight.size(0), n = input.numel();
  if (padding_idx) {
    DDL_CHECK(*padding_idx >= -num && *padding_idx < num, "embedding_bag: padding_idx must be within the number of ",
              "embeddings, ", -num, " through ", num - 1, ", but got ", *padding_idx);
    if (*padding_idx < 0) *padding_idx += num;
  }
  DDL_CHECK(!per_sample_weights.defined() || mode == EmbeddingBagMode::Sum,
            "embedding_bag: per_sample_weights is only supported for mode Sum");
  DDL_CHECK(!per_sample_weights.defined() || per_sample_weights.shape() == input.shape(),
            "embedding_bag: per_sample_weights ", per_sample_weights.defined() ? per_sample_weights.shape() : Shape{},
            " must have the input's shape ", input.shape());
  DDL_CHECK(!per_sample_weights.defined() || per_sample_weights.dtype() == weight.dtype(),
            "embedding_bag: per_sample_weights must have weight's dtype ", weight.dtype());
  std::vector<int64_t> starts;
  if (input.dim() == 2) {
    DDL_CHECK(!offsets.defined(), "embedding_bag: a 2-D input is a batch of fixed-length bags; offsets must be ",
              "undefined, got ", offsets.shape());
    for (int64_t b = 0; b <= input.size(0); ++b) starts.push_back(b * input.size(1));
  } else {
    DDL_CHECK(offsets.defined() && offsets.dim() == 1, "embedding_bag: a 1-D input needs 1-D offsets, got ",
              offsets.defined() ? offsets.shape() : Shape{});
    DDL_CHECK(offsets.dtype() == DType::Int64 || offsets.dtype() == DType::Int32,
              "embedding_bag: expected int64 or int32 offsets, got ", offsets.dtype());
    starts = to_int64s(offsets);
    DDL_CHECK(starts.empty() || starts[0] == 0, "embedding_bag: offsets[0] has to be 0, got ", starts[0]);
    for (size_t i = 1; i < starts.size(); ++i)
      DDL_CHECK(starts[i] >= starts[i - 1], "embedding_bag: offsets must be non-decreasing, got ", starts[i - 1],
                " then ", starts[i]);
    DDL_CHECK(starts.empty() || starts.back() <= n, "embedding_bag: offsets[-1] can not be greater than input's ",
              "length ", n, ", got ", starts.back());
    if (!include_last_offset) starts.push_back(n);
  }
  const std::vector<int64_t> idx = to_int64s(input);
  for (int64_t i : idx)
    DDL_CHECK(i >= 0 && i < num, "embedding_bag: index ", i, " is out of range for ", num, " embeddings");
  const Variable psw = per_sample_weights.defined() ? per_sample_weights.reshape({-1}) : Variable();
  const int64_t bags = starts.empty() ? 0 : static_cast<int64_t>(starts.size()) - 1;
  // Zeros that still hang off weight, so the output has a gradient function even when
  // every bag is empty (PyTorch's does).
  const Variable no_rows = weight.narrow(0, 0, 0);
  std::vector<Variable> rows;
  for (int64_t b = 0; b < bags; ++b) {
    std::vector<int64_t> pos;  // positions in input of this bag's entries, padding left out
    for (int64_t i = starts[b]; i < starts[b + 1]; ++i)
      if (!padding_idx || idx[i] != *padding_idx) pos.push_back(i);
    if (pos.empty()) {
      rows.push_back(no_rows.sum(std::vector<int64_t>{0}));
      continue;
    }
    std::vector<int64_t> ids;
    for (int64_t i : pos) ids.push_back(idx[i]);
    const Tensor id_t = from_vector(ids).to(weight.device());
    Variable r = index_select(weight, 0, id_t);  // [k, dim]
    if (psw.defined()) r = r * index_select(psw, 0, from_vector(pos).to(weight.device())).unsqueeze(1);
    if (mode == EmbeddingBagMode::Max)
      rows.push_back(amax(r, {0}));
    else if (mode == EmbeddingBagMode::Mean)
      rows.push_back(r.sum(std::vector<int64_t>{0}) / static_cast<double>(pos.size()));
    else
      rows.push_back(r.sum(std::vector<int64_t>{0}));
  }
  if (rows.empty()) return no_rows;
  return stack(rows, 0);
}

}  // namespace ddl
