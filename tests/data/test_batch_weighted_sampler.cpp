// WeightedRandomSampler (the frequencies its weights promise, with and without replacement, and
// PyTorch's refusals) and BatchSampler (PyTorch's exact batches, with and without drop_last).
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <memory>
#include <set>

#include <ddl/base/error.h>
#include <ddl/data/sampler.h>

using namespace ddl;
using namespace ddl::data;

namespace {

// |count - n p| within 5 standard deviations of a binomial(n, p): fails by chance about once in 10^6.
void check_frequency(int64_t count, int64_t n, double p) {
  const double sd = std::sqrt(n * p * (1 - p));
  INFO("count " << count << " of " << n << ", expected probability " << p);
  CHECK(std::abs(static_cast<double>(count) - n * p) <= 5 * sd + 1);
}

}  // namespace

TEST_CASE("WeightedRandomSampler with replacement draws in proportion to the weights", "[sampler]") {
  const std::vector<double> w = {1.0, 0.0, 2.0, 3.0, 4.0};
  const int64_t n = 50000;
  WeightedRandomSampler s(w, n, true, 7);
  REQUIRE(s.size() == n);
  const std::vector<int64_t> idx = s.indices();
  REQUIRE(static_cast<int64_t>(idx.size()) == n);
  std::vector<int64_t> count(w.size(), 0);
  for (int64_t i : idx) {
    REQUIRE((i >= 0 && i < static_cast<int64_t>(w.size())));
    ++count[static_cast<size_t>(i)];
  }
  CHECK(count[1] == 0);  // a zero weight is never drawn
  for (size_t i = 0; i < w.size(); ++i) check_frequency(count[i], n, w[i] / 10.0);
  // Deterministic for an epoch, new for the next.
  CHECK(s.indices() == idx);
  s.set_epoch(1);
  CHECK(s.indices() != idx);
  CHECK(WeightedRandomSampler(w, n, true, 7).indices() == idx);
}

TEST_CASE("WeightedRandomSampler without replacement draws each index once, heavy ones first", "[sampler]") {
  const std::vector<double> w = {1.0, 2.0, 0.0, 3.0, 4.0};
  WeightedRandomSampler s(w, 5, false, 3);
  const int64_t epochs = 20000;
  std::vector<int64_t> first(w.size(), 0), second_given_4_first(w.size(), 0);
  int64_t four_first = 0;
  for (int64_t e = 0; e < epochs; ++e) {
    s.set_epoch(e);
    const std::vector<int64_t> idx = s.indices();
    REQUIRE(idx.size() == 5);
    REQUIRE(std::set<int64_t>(idx.begin(), idx.end()).size() == 5);  // a permutation
    REQUIRE(idx.back() == 2);  // the zero weight only once the others are used up, as PyTorch 1.13
    ++first[static_cast<size_t>(idx[0])];
    if (idx[0] == 4) {
      ++four_first;
      ++second_given_4_first[static_cast<size_t>(idx[1])];
    }
  }
  // The first draw follows the weights; the second the weights left (here without index 4's).
  for (size_t i = 0; i < w.size(); ++i) check_frequency(first[i], epochs, w[i] / 10.0);
  for (size_t i = 0; i < 4; ++i) check_frequency(second_given_4_first[i], four_first, w[i] / 6.0);
  // Fewer samples than indices: a prefix of such a draw.
  s.set_epoch(0);
  const std::vector<int64_t> full = s.indices();
  CHECK(WeightedRandomSampler(w, 2, false, 3).indices() == std::vector<int64_t>(full.begin(), full.begin() + 2));
}

TEST_CASE("WeightedRandomSampler refuses what PyTorch refuses", "[sampler]") {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_WITH(WeightedRandomSampler({1.0, 2.0}, 0), Catch::Contains("num_samples should be a positive integer"));
  CHECK_THROWS_WITH(WeightedRandomSampler({}, 1), Catch::Contains("sum of 0 weights <= 0"));
  CHECK_THROWS_WITH(WeightedRandomSampler({0.0, 0.0}, 1), Catch::Contains("<= 0"));
  CHECK_THROWS_WITH(WeightedRandomSampler({1.0, -2.0}, 1), Catch::Contains("weight 1 is -2 < 0"));
  CHECK_THROWS_WITH(WeightedRandomSampler({1.0, inf}, 1), Catch::Contains("must be finite"));
  CHECK_THROWS_WITH(WeightedRandomSampler({1.0, nan}, 1), Catch::Contains("must be finite"));
  CHECK_THROWS_WITH(WeightedRandomSampler({1.0, 2.0}, 3, false), Catch::Contains("cannot sample 3 > 2"));
  CHECK_NOTHROW(WeightedRandomSampler({1.0, 2.0}, 3, true));
}

TEST_CASE("BatchSampler gives PyTorch's batches", "[sampler]") {
  auto seq = std::make_shared<SequentialSampler>(10);
  BatchSampler keep(seq, 3, false), drop(seq, 3, true);
  using B = std::vector<std::vector<int64_t>>;
  CHECK(keep.batches() == B{{0, 1, 2}, {3, 4, 5}, {6, 7, 8}, {9}});
  CHECK(keep.size() == 4);
  CHECK(drop.batches() == B{{0, 1, 2}, {3, 4, 5}, {6, 7, 8}});
  CHECK(drop.size() == 3);
  // An even split loses nothing to drop_last; an empty sampler has no batches.
  auto nine = std::make_shared<SequentialSampler>(9);
  CHECK(BatchSampler(nine, 3, true).batches() == B{{0, 1, 2}, {3, 4, 5}, {6, 7, 8}});
  CHECK(BatchSampler(std::make_shared<SequentialSampler>(0), 3, false).batches().empty());
  CHECK(BatchSampler(std::make_shared<SequentialSampler>(2), 3, true).size() == 0);
  CHECK(BatchSampler(std::make_shared<SequentialSampler>(2), 3, false).batches() == B{{0, 1}});
  CHECK_THROWS_WITH(BatchSampler(seq, 0, false), Catch::Contains("batch_size should be a positive integer"));
  CHECK_THROWS_WITH(BatchSampler(nullptr, 2, false), Catch::Contains("BatchSampler: no sampler"));
  // The batches are the wrapped sampler's order cut in runs; set_epoch reaches it.
  auto shuffled = std::make_shared<RandomSampler>(10, 5);
  BatchSampler b(shuffled, 4, false);
  b.set_epoch(2);
  CHECK(shuffled->epoch() == 2);
  const std::vector<int64_t> order = shuffled->indices();
  std::vector<int64_t> joined;
  for (const auto& batch : b.batches()) joined.insert(joined.end(), batch.begin(), batch.end());
  CHECK(joined == order);
  // With a weighted sampler (repeats allowed) the batches keep its length.
  auto weighted = std::make_shared<WeightedRandomSampler>(std::vector<double>{1.0, 1.0}, 7);
  CHECK(BatchSampler(weighted, 2, false).size() == 4);
  CHECK(BatchSampler(weighted, 2, false).batches().back().size() == 1);
}
