// Views change shape, strides and offset only; reshape copies only when it must.
#include <catch2/catch.hpp>

#include <ddl/ddl.h>

using namespace ddl;

namespace {
Tensor iota(const Shape& s) { return arange(0.0, static_cast<double>(s.numel()), 1.0).reshape(s); }
}  // namespace

TEST_CASE("reshape and view share storage and infer -1", "[views]") {
  Tensor a = iota({2, 3, 4});
  Tensor v = a.view({6, -1});
  REQUIRE(v.shape() == Shape{6, 4});
  REQUIRE(v.shares_storage(a));
  REQUIRE(a.reshape({-1}).shape() == Shape{24});
  REQUIRE_THROWS_WITH(a.view({5, -1}), Catch::Contains("cannot reshape [2, 3, 4]"));
  REQUIRE_THROWS_WITH(a.view({-1, -1}), Catch::Contains("only one dimension can be -1"));
}

TEST_CASE("permute and transpose reorder strides", "[views]") {
  Tensor a = iota({2, 3, 4});
  Tensor p = a.permute({2, 0, 1});
  REQUIRE(p.shape() == Shape{4, 2, 3});
  REQUIRE(p.strides() == Strides{1, 12, 4});
  REQUIRE_FALSE(p.is_contiguous());
  REQUIRE(p.shares_storage(a));
  // element [k, i, j] of p is a[i, j, k]
  REQUIRE(p.select(0, 3).select(0, 1).select(0, 2).item() == 1 * 12 + 2 * 4 + 3);
  Tensor c = p.contiguous();
  REQUIRE(c.is_contiguous());
  REQUIRE_FALSE(c.shares_storage(a));
  REQUIRE(to_vector<float>(c)[1] == 4);  // c[0, 0, 1] = a[0, 1, 0]
  REQUIRE(a.transpose(0, 2).shape() == Shape{4, 3, 2});
  REQUIRE_THROWS_WITH(a.permute({0, 0, 1}), Catch::Contains("repeated"));
}

TEST_CASE("view of a non-contiguous tensor: allowed when dims stay contiguous, else an error", "[views]") {
  Tensor a = iota({4, 6});
  Tensor cols = a.slice(1, 0, 6, 2);  // [4, 3], strides [6, 2]: uniformly strided, so still one view
  REQUIRE(cols.view({12}).strides() == Strides{2});
  REQUIRE(cols.view({4, 3, 1}).shares_storage(a));
  Tensor left = a.narrow(1, 0, 4);  // [4, 4], strides [6, 1]: rows are not adjacent
  REQUIRE_THROWS_WITH(left.view({16}), Catch::Contains("without a copy"));
  REQUIRE(left.view({4, 2, 2}).shares_storage(a));
  Tensor r = left.reshape({16});  // copies
  REQUIRE_FALSE(r.shares_storage(a));
  REQUIRE(to_vector<float>(r) == std::vector<float>{0, 1, 2, 3, 6, 7, 8, 9, 12, 13, 14, 15, 18, 19, 20, 21});
  // Splitting a dim of a transposed tensor is a view.
  Tensor t = iota({4, 6}).t();  // [6, 4], strides [1, 6]
  Tensor s = t.view({2, 3, 4});
  REQUIRE(s.shares_storage(t));
  REQUIRE(s.strides() == Strides{3, 1, 6});
}

TEST_CASE("slice, narrow and select pick regions", "[views]") {
  Tensor a = iota({3, 4});
  Tensor s = a.slice(1, 1, 4, 2);
  REQUIRE(s.shape() == Shape{3, 2});
  REQUIRE(to_vector<float>(s) == std::vector<float>{1, 3, 5, 7, 9, 11});
  REQUIRE(to_vector<float>(a.narrow(0, 1, 2)) == std::vector<float>{4, 5, 6, 7, 8, 9, 10, 11});
  REQUIRE(to_vector<float>(a.select(1, -1)) == std::vector<float>{3, 7, 11});
  REQUIRE(a.slice(0, -2, 100).size(0) == 2);
  REQUIRE_THROWS_WITH(a.narrow(0, 2, 2), Catch::Contains("outside dimension 0 of shape [3, 4]"));
  REQUIRE_THROWS_WITH(a.select(0, 3), Catch::Contains("index 3 out of range"));
  // Writing through a view changes the base.
  a.select(0, 0).fill_(-1);
  REQUIRE(to_vector<float>(a)[3] == -1);
}

TEST_CASE("expand broadcasts with zero strides; squeeze and unsqueeze", "[views]") {
  Tensor a = iota({3, 1});
  Tensor e = a.expand({2, 3, 4});
  REQUIRE(e.strides() == Strides{0, 1, 0});
  REQUIRE(to_vector<float>(e.contiguous())[4 * 3 + 5] == 1);  // [1, 1, 1]
  REQUIRE_THROWS_WITH(a.expand({2, 2}), Catch::Contains("cannot expand [3, 1] to [2, 2]"));
  REQUIRE(a.unsqueeze(0).shape() == Shape{1, 3, 1});
  REQUIRE(a.unsqueeze(-1).shape() == Shape{3, 1, 1});
  REQUIRE(a.squeeze().shape() == Shape{3});
  REQUIRE(a.squeeze(0).shape() == Shape{3, 1});
  REQUIRE(iota({2, 3, 4}).flatten(1).shape() == Shape{2, 12});
}

TEST_CASE("elementwise ops read strided and broadcast views correctly", "[views]") {
  Tensor a = iota({3, 4});
  Tensor t = a.t();  // [4, 3]
  Tensor r = add(t, iota({3}));
  REQUIRE(r.shape() == Shape{4, 3});
  // r[i, j] = a[j, i] + j = 4j + i + j
  std::vector<float> v = to_vector<float>(r);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j) REQUIRE(v[i * 3 + j] == 5 * j + i);
  // In-place on a strided view.
  a.t().add_(ones({3}));
  REQUIRE(to_vector<float>(a)[11] == 12);
}
