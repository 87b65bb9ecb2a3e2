// TensorDataset and SyntheticDataset: indexing, transforms with their context,
// determinism, and that the synthetic classes are learnable.
#include <catch2/catch.hpp>
#include <cmath>

#include <ddl/data/dataset.h>
#include <ddl/data/synthetic.h>
#include <ddl/tensor/ops.h>

using namespace ddl;
using namespace ddl::data;

TEST_CASE("TensorDataset pairs rows of data and targets", "[data][datasets]") {
  const Tensor x = arange(0.0, 12.0, 1.0, DType::Float32).reshape({4, 3});
  const Tensor y = from_vector<int64_t>({3, 1, 4, 1});
  TensorDataset ds(x, y);
  REQUIRE(ds.size() == 4);
  const Example ex = ds.get(2);
  REQUIRE(to_vector<float>(ex.data) == std::vector<float>{6, 7, 8});
  REQUIRE(ex.target.dim() == 0);
  REQUIRE(ex.target.item<int64_t>() == 4);
  REQUIRE_THROWS_WITH(ds.get(4), Catch::Contains("index 4 out of range") && Catch::Contains("4 examples"));
  REQUIRE_THROWS_WITH(ds.get(-1), Catch::Contains("index -1"));
  REQUIRE_THROWS_WITH(TensorDataset(x, from_vector<int64_t>({1, 2})), Catch::Contains("first dim"));
}

TEST_CASE("a dataset's transform sees the caller's (seed, epoch, index)", "[data][datasets]") {
  const Transform tag = [](const Tensor& x, TransformContext& c) {
    return from_vector<double>(
        {static_cast<double>(c.seed()), static_cast<double>(c.epoch()), static_cast<double>(c.index())});
  };
  TensorDataset ds(zeros({5, 1}), zeros({5}, DType::Int64), tag);
  TransformContext ctx(7, 2, 3);
  REQUIRE(to_vector<double>(ds.get(3, ctx).data) == std::vector<double>{7, 2, 3});
  REQUIRE(to_vector<double>(ds.get(4).data) == std::vector<double>{0, 0, 4});
}

TEST_CASE("SyntheticDataset is deterministic per (seed, index)", "[data][datasets]") {
  SyntheticDataset a(100, {3, 8, 8}, 10, 5), b(100, {3, 8, 8}, 10, 5), c(100, {3, 8, 8}, 10, 6);
  REQUIRE(a.size() == 100);
  for (int64_t i : {0, 17, 99}) {
    const Example ea = a.get(i), eb = b.get(i);
    REQUIRE(ea.data.shape() == Shape{3, 8, 8});
    REQUIRE(ea.data.dtype() == DType::UInt8);
    REQUIRE(to_vector<int>(ea.data) == to_vector<int>(eb.data));
    REQUIRE(ea.target.item<int64_t>() == a.label(i));
    REQUIRE(to_vector<int>(ea.data) != to_vector<int>(c.get(i).data));
  }
  REQUIRE(to_vector<int>(a.get(1).data) != to_vector<int>(a.get(2).data));
  std::vector<int> counts(10, 0);
  for (int64_t i = 0; i < 100; ++i) counts[static_cast<size_t>(a.label(i))]++;
  for (int n : counts) REQUIRE(n > 0);
}

TEST_CASE("SyntheticDataset classes are learnable: nearest class mean classifies well", "[data][datasets]") {
  const int64_t classes = 5, d = 3 * 8 * 8;
  SyntheticDataset ds(500, {3, 8, 8}, classes, 1);  // fit on 0..399, test on 400..499
  std::vector<std::vector<double>> mean(classes, std::vector<double>(d, 0.0));
  std::vector<int> count(classes, 0);
  for (int64_t i = 0; i < 400; ++i) {
    const Example ex = ds.get(i);
    const auto v = to_vector<int>(ex.data);
    const int64_t c = ex.target.item<int64_t>();
    for (int64_t k = 0; k < d; ++k) mean[c][k] += v[k];
    count[c]++;
  }
  int correct = 0;
  for (int64_t i = 400; i < 500; ++i) {
    const Example ex = ds.get(i);
    const auto v = to_vector<int>(ex.data);
    int64_t best = -1;
    double best_dist = 1e300;
    for (int64_t c = 0; c < classes; ++c) {
      double dist = 0;
      for (int64_t k = 0; k < d; ++k) dist += std::pow(v[k] - mean[c][k] / std::max(count[c], 1), 2);
      if (dist < best_dist) best_dist = dist, best = c;
    }
    correct += best == ex.target.item<int64_t>();
  }
  REQUIRE(correct > 90);  // chance is 20 of 100
}
