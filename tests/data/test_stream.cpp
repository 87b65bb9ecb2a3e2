// Stream datasets (data/stream.h): StreamLoader batches consecutive examples as PyTorch's
// DataLoader does for an IterableDataset (the last batch shorter unless drop_last), a pass per
// epoch, and errors that name the loader.
#include <catch2/catch.hpp>
#include <memory>

#include <ddl/data/stream.h>
#include <ddl/tensor/core/factory.h>

using namespace ddl;
using namespace ddl::data;

namespace {

// Examples n, n + 1, ... up to `count` of them, starting at 100 * epoch: data [2] = {i, -i}, target i.
std::shared_ptr<GeneratorDataset> counting(int64_t count) {
  return std::make_shared<GeneratorDataset>([count](int64_t epoch) {
    auto i = std::make_shared<int64_t>(0);
    return [count, epoch, i]() -> std::optional<Example> {
      if (*i >= count) return std::nullopt;
      const double v = static_cast<double>(100 * epoch + (*i)++);
      return Example{from_vector<double>({v, -v}), scalar_tensor(v, DType::Int64)};
    };
  });
}

std::vector<std::vector<int64_t>> targets(const StreamLoader& loader) {
  std::vector<std::vector<int64_t>> out;
  for (const Batch& b : loader) out.push_back(to_vector<int64_t>(b.target));
  return out;
}

}  // namespace

TEST_CASE("StreamLoader batches a stream as PyTorch's DataLoader batches an IterableDataset", "[stream]") {
  using B = std::vector<std::vector<int64_t>>;
  CHECK(targets(StreamLoader(counting(7), 3)) == B{{0, 1, 2}, {3, 4, 5}, {6}});
  CHECK(targets(StreamLoader(counting(7), 3, true)) == B{{0, 1, 2}, {3, 4, 5}});
  CHECK(targets(StreamLoader(counting(6), 3, true)) == B{{0, 1, 2}, {3, 4, 5}});
  CHECK(targets(StreamLoader(counting(0), 3)).empty());
  CHECK(targets(StreamLoader(counting(2), 3, true)).empty());
  // The data are stacked as the DataLoader's: [B, 2].
  StreamLoader loader(counting(4), 4);
  const Batch first = *loader.begin();
  CHECK(first.data.shape() == Shape{4, 2});
  CHECK(to_vector<double>(first.data) == std::vector<double>{0, -0.0, 1, -1, 2, -2, 3, -3});
  // Each pass opens the stream afresh for the loader's epoch.
  loader.set_epoch(2);
  CHECK(targets(loader) == B{{200, 201, 202, 203}});
  CHECK(targets(loader) == B{{200, 201, 202, 203}});
}

TEST_CASE("StreamLoader: a custom collate, a stream that ends for good, and refusals", "[stream]") {
  // A collate_fn sees each batch's examples (here it counts them into the target).
  StreamLoader sizes(counting(5), 2, false, [](const std::vector<Example>& ex) {
    return Batch{empty({0}, DType::Float32), scalar_tensor(static_cast<double>(ex.size()), DType::Int64)};
  });
  std::vector<int64_t> n;
  for (const Batch& b : sizes) n.push_back(static_cast<int64_t>(b.target.item()));
  CHECK(n == std::vector<int64_t>{2, 2, 1});
  // A generator that would resume after its first end is not asked again within the pass.
  auto flaky = std::make_shared<GeneratorDataset>([](int64_t) {
    auto calls = std::make_shared<int64_t>(0);
    return [calls]() -> std::optional<Example> {
      if (++*calls == 2) return std::nullopt;
      return Example{from_vector<double>({1.0}), scalar_tensor(0.0, DType::Int64)};
    };
  });
  int64_t batches = 0;
  for (const Batch& b : StreamLoader(flaky, 1)) batches += b.data.size(0);
  CHECK(batches == 1);
  CHECK_THROWS_WITH(StreamLoader(counting(3), 0), Catch::Contains("StreamLoader: batch_size should be a positive"));
  CHECK_THROWS_WITH(StreamLoader(nullptr, 2), Catch::Contains("StreamLoader: no dataset"));
  CHECK_THROWS_WITH(GeneratorDataset(nullptr), Catch::Contains("GeneratorDataset: no generator function"));
  // Examples of different shapes fail in collate, naming the example.
  auto ragged = std::make_shared<GeneratorDataset>([](int64_t) {
    auto i = std::make_shared<int64_t>(0);
    return [i]() -> std::optional<Example> {
      if (*i >= 2) return std::nullopt;
      return Example{zeros({++*i}, DType::Float32), scalar_tensor(0.0, DType::Int64)};
    };
  });
  CHECK_THROWS_WITH(StreamLoader(ragged, 2).begin(), Catch::Contains("collate: example 1"));
}
