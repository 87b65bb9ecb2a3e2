// embedding's dtypes as PyTorch 1.13 takes them: int32 or int64 indices, and weights of
// any dtype (float16/bfloat16 rows copied exactly and their gradient summed in float32,
// then rounded once; integer and bool weights looked up without a gradient). Values and
// errors; the layer itself is tested in tests/nn.
#include <catch2/catch.hpp>
#include <vector>

#include <ddl/autograd/functions.h>
#include <ddl/tensor/ops.h>

using namespace ddl;

TEST_CASE("embedding: int32 indices select the rows int64 ones do") {
  const Tensor w = arange(12, DType::Float32).reshape({4, 3});
  const Tensor i64 = from_vector<int64_t>({1, 3, 1, 0}, {2, 2});
  const Variable y = embedding(i64.to(DType::Int32), Variable(w));
  REQUIRE(y.shape() == Shape{2, 2, 3});
  CHECK(to_vector<float>(y.data()) == to_vector<float>(embedding(i64, Variable(w)).data()));
  REQUIRE_THROWS_WITH(embedding(i64.to(DType::Float32), Variable(w)),
                      Catch::StartsWith("embedding: indices must be int64 or int32"));
  REQUIRE_THROWS_WITH(embedding(from_vector<int64_t>({4}, {1}).to(DType::Int32), Variable(w)),
                      Catch::Contains("embedding: index 4 out of range for 4 embeddings"));
}

TEST_CASE("embedding: 16-bit weights and their gradients, as PyTorch") {
  for (DType dt : {DType::BFloat16, DType::Float16}) {
    INFO(dt);
    const Tensor w = arange(12, DType::Float32).reshape({4, 3});
    Variable wv(w.to(dt), true);
    const Tensor idx = from_vector<int64_t>({1, 3, 1, 0}, {2, 2});
    const Variable y = embedding(idx.to(DType::Int32), wv, /*padding_idx=*/0);
    REQUIRE(y.dtype() == dt);
    CHECK(to_vector<float>(y.data().to(DType::Float32)) == std::vector<float>{3, 4, 5, 9, 10, 11, 3, 4, 5, 0, 1, 2});
    y.backward(ones({2, 2, 3}, dt));
    REQUIRE(wv.grad().dtype() == dt);
    // Row 1 twice, row 3 once, row 0 is the padding row (torch.nn.functional.embedding).
    CHECK(to_vector<float>(wv.grad().to(DType::Float32)) == std::vector<float>{0, 0, 0, 2, 2, 2, 0, 0, 0, 1, 1, 1});
  }
}

TEST_CASE("embedding: integer and bool weights are looked up") {
  const Tensor idx = from_vector<int64_t>({2, 0}, {2});
  const Tensor w = arange(12).reshape({4, 3});
  for (DType dt : {DType::Int64, DType::Int32, DType::UInt8, DType::Bool}) {
    INFO(dt);
    const Variable y = embedding(idx, Variable(w.to(dt)));
    REQUIRE(y.dtype() == dt);
    CHECK(to_vector<int64_t>(y.data().to(DType::Int64)) ==
          to_vector<int64_t>(from_vector<int64_t>({6, 7, 8, 0, 1, 2}, {6}).to(dt).to(DType::Int64)));
  }
}
