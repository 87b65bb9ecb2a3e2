// Samplers: DistributedSampler against PyTorch's index lists (shuffle false and
// true), torch_randperm against torch.randperm, the shuffled partition's
// structure, Sequential/Random, the default world.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <set>

#include <ddl/base/error.h>
#include <ddl/data/sampler.h>

using namespace ddl;
using namespace ddl::data;

namespace {

struct Golden {
  int64_t n, replicas;
  bool drop_last;
  std::vector<std::vector<int64_t>> per_rank;
};

// From tests/golden/sampler.py (torch.utils.data.DistributedSampler, shuffle=False).
const std::vector<Golden> kGolden = {
    {10, 1, false, {{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}}},
    {10, 1, true, {{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}}},
    {10, 3, false, {{0, 3, 6, 9}, {1, 4, 7, 0}, {2, 5, 8, 1}}},
    {10, 3, true, {{0, 3, 6}, {1, 4, 7}, {2, 5, 8}}},
    {10, 4, false, {{0, 4, 8}, {1, 5, 9}, {2, 6, 0}, {3, 7, 1}}},
    {10, 4, true, {{0, 4}, {1, 5}, {2, 6}, {3, 7}}},
    {7, 5, false, {{0, 5}, {1, 6}, {2, 0}, {3, 1}, {4, 2}}},
    {7, 5, true, {{0}, {1}, {2}, {3}, {4}}},
    {11, 2, false, {{0, 2, 4, 6, 8, 10}, {1, 3, 5, 7, 9, 0}}},
    {11, 2, true, {{0, 2, 4, 6, 8}, {1, 3, 5, 7, 9}}},
    {3, 5, false, {{0}, {1}, {2}, {0}, {1}}},
    {3, 5, true, {{}, {}, {}, {}, {}}},
    {13, 4, false, {{0, 4, 8, 12}, {1, 5, 9, 0}, {2, 6, 10, 1}, {3, 7, 11, 2}}},
    {13, 4, true, {{0, 4, 8}, {1, 5, 9}, {2, 6, 10}, {3, 7, 11}}},
    {5, 5, false, {{0}, {1}, {2}, {3}, {4}}},
    {5, 5, true, {{0}, {1}, {2}, {3}, {4}}},
    {2, 3, false, {{0}, {1}, {0}}},
    {2, 3, true, {{}, {}, {}}},
    {2, 5, false, {{0}, {1}, {0}, {1}, {0}}},
    {2, 5, true, {{}, {}, {}, {}, {}}},
    {1, 4, false, {{0}, {0}, {0}, {0}}},
    {1, 4, true, {{}, {}, {}, {}}},
};

struct ShuffledGolden {
  int64_t n, replicas;
  uint64_t seed;
  int64_t epoch;
  bool drop_last;
  std::vector<std::vector<int64_t>> per_rank;
};

// From tests/golden/sampler.py (torch.utils.data.DistributedSampler, shuffle=True, set_epoch(epoch)).
const std::vector<ShuffledGolden> kShuffledGolden = {
    {10, 3, 0u, 0, false, {{4, 5, 0, 2}, {1, 3, 8, 4}, {7, 9, 6, 1}}},
    {10, 3, 0u, 0, true, {{4, 5, 0}, {1, 3, 8}, {7, 9, 6}}},
    {10, 4, 5u, 2, false, {{5, 1, 8}, {0, 7, 2}, {3, 9, 5}, {4, 6, 0}}},
    {10, 4, 5u, 2, true, {{5, 1}, {0, 7}, {3, 9}, {4, 6}}},
    {13, 4, 42u, 1, false, {{4, 8, 5, 9}, {1, 2, 12, 4}, {7, 0, 11, 1}, {10, 3, 6, 7}}},
    {13, 4, 42u, 1, true, {{4, 8, 5}, {1, 2, 12}, {7, 0, 11}, {10, 3, 6}}},
    {3, 5, 7u, 0, false, {{0}, {1}, {2}, {0}, {1}}},
    {3, 5, 7u, 0, true, {{}, {}, {}, {}, {}}},
    {23, 2, 1u, 3, false, {{2, 21, 3, 14, 20, 22, 10, 18, 0, 17, 1, 7}, {13, 16, 19, 15, 4, 5, 9, 12, 6, 11, 8, 2}}},
    {23, 2, 1u, 3, true, {{2, 21, 3, 14, 20, 22, 10, 18, 0, 17, 1}, {13, 16, 19, 15, 4, 5, 9, 12, 6, 11, 8}}},
    {7, 3, 4294967301u, 0, false, {{1, 2, 3}, {0, 6, 1}, {4, 5, 0}}},
    {7, 3, 4294967301u, 0, true, {{1, 2}, {0, 6}, {4, 5}}},
};

}  // namespace

TEST_CASE("torch_randperm is torch.randperm with a seeded CPU generator", "[sampler]") {
  // From tests/golden/sampler.py.
  REQUIRE(torch_randperm(0, 3).empty());
  REQUIRE(torch_randperm(1, 3) == std::vector<int64_t>{0});
  REQUIRE(torch_randperm(2, 9) == std::vector<int64_t>{0, 1});
  REQUIRE(torch_randperm(17, 123) == std::vector<int64_t>{15, 14, 1, 0, 4, 7, 16, 2, 13, 11, 3, 12, 8, 5, 10, 6, 9});
  REQUIRE_THROWS_AS(torch_randperm(-1, 0), Error);
}

TEST_CASE("DistributedSampler with shuffle matches PyTorch's index lists", "[sampler]") {
  for (const ShuffledGolden& g : kShuffledGolden) {
    for (int64_t r = 0; r < g.replicas; ++r) {
      INFO("N " << g.n << ", R " << g.replicas << ", seed " << g.seed << ", epoch " << g.epoch << ", drop_last "
                << g.drop_last << ", rank " << r);
      DistributedSampler s(g.n, g.replicas, r, /*shuffle=*/true, g.seed, g.drop_last);
      s.set_epoch(g.epoch);
      REQUIRE(s.indices() == g.per_rank[static_cast<size_t>(r)]);
      REQUIRE(s.size() == static_cast<int64_t>(g.per_rank[static_cast<size_t>(r)].size()));
    }
  }
}

TEST_CASE("DistributedSampler without shuffle matches PyTorch's index lists", "[sampler]") {
  for (const Golden& g : kGolden) {
    for (int64_t r = 0; r < g.replicas; ++r) {
      INFO("N " << g.n << ", R " << g.replicas << ", drop_last " << g.drop_last << ", rank " << r);
      DistributedSampler s(g.n, g.replicas, r, /*shuffle=*/false, 0, g.drop_last);
      REQUIRE(s.indices() == g.per_rank[static_cast<size_t>(r)]);
      REQUIRE(s.size() == static_cast<int64_t>(g.per_rank[static_cast<size_t>(r)].size()));
      s.set_epoch(3);  // no effect without shuffle
      REQUIRE(s.indices() == g.per_rank[static_cast<size_t>(r)]);
    }
  }
}

TEST_CASE("DistributedSampler with shuffle: same permutation on every rank, disjoint, covering", "[sampler]") {
  for (int64_t n : {1, 7, 10, 11, 23, 64}) {
    for (int64_t world = 1; world <= 5; ++world) {
      for (bool drop_last : {false, true}) {
        INFO("N " << n << ", world " << world << ", drop_last " << drop_last);
        std::vector<int64_t> interleaved(
            static_cast<size_t>(world * (drop_last ? n / world : (n + world - 1) / world)));
        for (int64_t r = 0; r < world; ++r) {
          DistributedSampler s(n, world, r, true, /*seed=*/42, drop_last);
          s.set_epoch(1);
          const auto idx = s.indices();
          REQUIRE(static_cast<int64_t>(idx.size()) == s.size());
          for (size_t k = 0; k < idx.size(); ++k) interleaved[k * world + r] = idx[k];
        }
        // Rank r's k-th index sits at position r + k * world of one shared order:
        // its first min(N, total) entries are distinct, the rest repeat its start.
        const int64_t total = static_cast<int64_t>(interleaved.size());
        const int64_t distinct = std::min(n, total);
        std::set<int64_t> seen(interleaved.begin(), interleaved.begin() + distinct);
        REQUIRE(static_cast<int64_t>(seen.size()) == distinct);
        for (int64_t v : seen) REQUIRE((v >= 0 && v < n));
        if (!drop_last) REQUIRE(static_cast<int64_t>(seen.size()) == n);                    // covers the data set
        for (int64_t i = n; i < total; ++i) REQUIRE(interleaved[i] == interleaved[i % n]);  // wrap-around padding
      }
    }
  }
}

TEST_CASE("DistributedSampler reshuffles with set_epoch and repeats for equal seed + epoch", "[sampler]") {
  DistributedSampler a(100, 3, 1, true, 7), b(100, 3, 1, true, 7), other_seed(100, 3, 1, true, 8);
  a.set_epoch(0);
  const auto e0 = a.indices();
  a.set_epoch(1);
  const auto e1 = a.indices();
  REQUIRE(e0 != e1);
  b.set_epoch(1);
  REQUIRE(b.indices() == e1);
  REQUIRE(other_seed.indices() != e0);
  // PyTorch seeds the permutation with seed + epoch: (seed 7, epoch 1) == (seed 8, epoch 0).
  REQUIRE(other_seed.indices() == e1);
  // Shuffled lists are permutations of the unshuffled partition's sizes.
  REQUIRE(e0.size() == 34);
}

TEST_CASE("Sequential and Random samplers", "[sampler]") {
  SequentialSampler seq(5);
  REQUIRE(seq.indices() == std::vector<int64_t>{0, 1, 2, 3, 4});
  RandomSampler r(50, 3), same(50, 3);
  auto i0 = r.indices();
  REQUIRE(i0 == same.indices());
  auto sorted = i0;
  std::sort(sorted.begin(), sorted.end());
  REQUIRE(sorted == SequentialSampler(50).indices());
  r.set_epoch(1);
  REQUIRE(r.indices() != i0);
  REQUIRE(r.size() == 50);
}

TEST_CASE("sampler arguments are checked", "[sampler][errors]") {
  REQUIRE_THROWS_WITH(DistributedSampler(10, 3, 3), Catch::Contains("rank 3") && Catch::Contains("num_replicas 3"));
  REQUIRE_THROWS_WITH(DistributedSampler(10, 0, 0), Catch::Contains("DistributedSampler"));
  REQUIRE_THROWS_WITH(SequentialSampler(-1), Catch::Contains("non-negative"));
}
