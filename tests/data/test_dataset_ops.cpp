// Subset, random_split, ConcatDataset and DataLoader's collate_fn: which examples they
// give, that sources' random transforms still see the loader's context, PyTorch 1.13's
// rounding of fractional splits, and the errors for bad arguments.
#include <catch2/catch.hpp>
#include <set>

#include <ddl/data/data.h>
#include <ddl/tensor/ops.h>

using namespace ddl;
using namespace ddl::data;

namespace {
// Example i: data [i, i], target i; an optional transform.
std::shared_ptr<TensorDataset> numbered(int64_t n, double first = 0, Transform t = {}) {
  std::vector<double> data(static_cast<size_t>(2 * n)), targets(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    data[static_cast<size_t>(2 * i)] = data[static_cast<size_t>(2 * i + 1)] = first + static_cast<double>(i);
    targets[static_cast<size_t>(i)] = first + static_cast<double>(i);
  }
  return std::make_shared<TensorDataset>(from_vector<double>(data).reshape({n, 2}),
                                         from_vector<double>(targets).to(DType::Int64), std::move(t));
}

int64_t target_of(const Dataset& d, int64_t i) { return static_cast<int64_t>(d.get(i).target.item()); }
}  // namespace

TEST_CASE("Subset gives the source's examples at its indices", "[data]") {
  auto src = numbered(10);
  Subset s(src, {7, 2, 2, 9});
  REQUIRE(s.size() == 4);
  REQUIRE(target_of(s, 0) == 7);
  REQUIRE(target_of(s, 2) == 2);
  REQUIRE(to_vector<double>(s.get(3).data) == std::vector<double>{9, 9});
  REQUIRE_THROWS_WITH(Subset(src, {0, 10}), Catch::Contains("index 10 (entry 1) is out of range for a source of 10"));
  REQUIRE_THROWS_WITH(s.get(4), Catch::Contains("out of range"));
}

TEST_CASE("a source's random transform still draws from the loader's context", "[data]") {
  // The transform adds a number drawn from the context: equal contexts give equal draws.
  Transform noisy = [](const Tensor& x, TransformContext& ctx) { return add(x, ctx.uniform()); };
  auto src = numbered(6, 0, noisy);
  Subset s(src, {3, 4});
  TransformContext a(5, 2, 3), b(5, 2, 3), other_epoch(5, 3, 3);
  REQUIRE(to_vector<double>(s.get(0, a).data) == to_vector<double>(src->get(3, b).data));
  TransformContext c(5, 2, 3);
  REQUIRE(to_vector<double>(s.get(0, c).data) != to_vector<double>(s.get(0, other_epoch).data));
}

TEST_CASE("random_split: disjoint, covering, repeatable; fractions rounded as PyTorch", "[data]") {
  auto src = numbered(11);
  const auto parts = random_split(src, std::vector<int64_t>{3, 8}, 42);
  REQUIRE(parts.size() == 2);
  std::set<int64_t> seen;
  for (const auto& p : parts)
    for (int64_t i = 0; i < p->size(); ++i) seen.insert(target_of(*p, i));
  REQUIRE(seen.size() == 11);
  REQUIRE(random_split(src, std::vector<int64_t>{3, 8}, 42)[0]->indices() == parts[0]->indices());
  REQUIRE(random_split(src, std::vector<int64_t>{3, 8}, 43)[0]->indices() != parts[0]->indices());
  // torch.utils.data.random_split(range(11), [1/3, 1/3, 1/3]) gives lengths 4, 4, 3.
  const auto thirds = random_split(src, std::vector<double>{1.0 / 3, 1.0 / 3, 1.0 / 3});
  REQUIRE(thirds[0]->size() == 4);
  REQUIRE(thirds[1]->size() == 4);
  REQUIRE(thirds[2]->size() == 3);
  REQUIRE_THROWS_WITH(random_split(src, std::vector<int64_t>{3, 7}), Catch::Contains("lengths sum to 10"));
  // Braced lists work as in PyTorch: whole numbers are lengths, fractions are fractions.
  REQUIRE(random_split(src, {5, 6}, 42)[1]->size() == 6);
  REQUIRE(random_split(src, {0.5, 0.5}, 42)[0]->size() == 6);
  REQUIRE_THROWS_WITH(random_split(src, std::vector<double>{0.5, 0.6}), Catch::Contains("fractions sum to 1.1"));
}

TEST_CASE("ConcatDataset chains its sources", "[data]") {
  ConcatDataset c({numbered(3), numbered(0), numbered(2, 100)});
  REQUIRE(c.size() == 5);
  REQUIRE(target_of(c, 2) == 2);
  REQUIRE(target_of(c, 3) == 100);
  REQUIRE(c.locate(4) == std::pair<size_t, int64_t>{2, 1});
  REQUIRE_THROWS_WITH(c.get(5), Catch::Contains("out of range"));
  REQUIRE_THROWS_WITH(ConcatDataset({}), Catch::Contains("needs at least one dataset"));
  REQUIRE_THROWS_WITH(ConcatDataset({numbered(1), nullptr}), Catch::Contains("dataset 1 is null"));
}

TEST_CASE("DataLoader's collate_fn pads sequences of different lengths, with workers", "[data]") {
  // Example i is a sequence of i + 1 tokens; the collate pads with -1 to the longest.
  class Ragged : public Dataset {
   public:
    int64_t size() const override { return 7; }

   protected:
    Example load(int64_t i) const override {
      return {full({i + 1}, static_cast<double>(i), DType::Int64), scalar_tensor(static_cast<double>(i), DType::Int64)};
    }
  };
  auto pad = [](const std::vector<Example>& ex) {
    int64_t longest = 0;
    for (const auto& e : ex) longest = std::max(longest, e.data.size(0));
    Tensor data = full({static_cast<int64_t>(ex.size()), longest}, -1, DType::Int64);
    Tensor target = empty({static_cast<int64_t>(ex.size())}, DType::Int64);
    for (size_t i = 0; i < ex.size(); ++i) {
      data.select(0, static_cast<int64_t>(i)).narrow(0, 0, ex[i].data.size(0)).copy_(ex[i].data);
      target.select(0, static_cast<int64_t>(i)).copy_(ex[i].target);
    }
    return Batch{data, target};
  };
  DataLoader loader(std::make_shared<Ragged>(), {.batch_size = 3, .num_workers = 2, .collate_fn = pad});
  std::vector<Shape> shapes;
  for (const Batch& b : loader) shapes.push_back(b.data.shape());
  REQUIRE(shapes == std::vector<Shape>{Shape{3, 3}, Shape{3, 6}, Shape{1, 7}});
  // Without it, the default collate names the example whose shape differs.
  DataLoader plain(std::make_shared<Ragged>(), {.batch_size = 3});
  REQUIRE_THROWS_WITH(plain.begin(), Catch::Contains("example 1"));
}
