// DataLoader: batch shapes and counts, identical batches for 0/1/2/4 workers,
// epochs, worker exceptions rethrown in the consumer, the bounded prefetch
// window, and clean shutdown when a loop is left early or the loader dies.
#include <dirent.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <map>
#include <thread>

#include <ddl/data/data.h>
#include <ddl/tensor/ops.h>

using namespace ddl;
using namespace ddl::data;

namespace {

// Counts get() calls; throws for one index; optionally sleeps per example.
class ProbeDataset : public Dataset {
 public:
  ProbeDataset(int64_t n, int64_t bad = -1, int sleep_us = 0) : n_(n), bad_(bad), sleep_us_(sleep_us) {}
  int64_t size() const override { return n_; }
  mutable std::atomic<int64_t> calls{0};

 protected:
  Example load(int64_t index) const override {
    calls++;
    if (sleep_us_ > 0) std::this_thread::sleep_for(std::chrono::microseconds(sleep_us_));
    DDL_CHECK(index != bad_, "ProbeDataset: cannot read example ", index);
    return {full({2}, static_cast<double>(index)), scalar_tensor(static_cast<double>(index), DType::Int64)};
  }

 private:
  int64_t n_, bad_;
  int sleep_us_;
};

std::shared_ptr<Dataset> augmented(int64_t n) {
  return std::make_shared<SyntheticDataset>(n, Shape{3, 32, 32}, 10, 3,
                                            Compose({ToTensor(), RandomCrop(32, 32, 4), RandomHorizontalFlip(),
                                                     Normalize({0.5, 0.4, 0.3}, {0.2, 0.25, 0.3})}));
}

std::vector<std::pair<std::vector<float>, std::vector<int64_t>>> run(const DataLoader& loader) {
  std::vector<std::pair<std::vector<float>, std::vector<int64_t>>> out;
  for (const Batch& b : loader) out.push_back({to_vector<float>(b.data), to_vector<int64_t>(b.target)});
  return out;
}

// Polls `cond` for up to 5 s (loaded CI machines are slow); returns its last value.
template <typename Cond>
bool eventually(Cond cond) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!cond() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  return cond();
}

int thread_count() {
  int n = 0;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d)) n += e->d_name[0] != '.';
    closedir(d);
  }
  return n;
}

}  // namespace

TEST_CASE("DataLoader collates contiguous batches and counts them", "[data][loader]") {
  DataLoaderOptions opts;
  opts.batch_size = 8;
  DataLoader loader(augmented(30), opts);
  REQUIRE(loader.size() == 4);
  int64_t seen = 0, batches = 0;
  for (const Batch& b : loader) {
    REQUIRE(b.data.is_contiguous());
    REQUIRE(b.data.dtype() == DType::Float32);
    REQUIRE(b.target.dtype() == DType::Int64);
    REQUIRE(b.target.dim() == 1);
    REQUIRE(b.data.shape() == Shape{b.target.size(0), 3, 32, 32});
    seen += b.target.size(0);
    ++batches;
  }
  REQUIRE(batches == 4);
  REQUIRE(seen == 30);
  opts.drop_last = true;
  DataLoader dropping(augmented(30), opts);
  REQUIRE(dropping.size() == 3);
  REQUIRE(run(dropping).size() == 3);
  // Sequential order without shuffle.
  DataLoader plain(std::make_shared<ProbeDataset>(5), {.batch_size = 2});
  const auto r = run(plain);
  REQUIRE(r.size() == 3);
  REQUIRE(r[2].second == std::vector<int64_t>{4});
  REQUIRE(r[1].first == std::vector<float>{2, 2, 3, 3});
}

TEST_CASE("batches are identical for 0, 1, 2 and 4 workers", "[data][loader][threads]") {
  auto ds = augmented(61);
  DataLoaderOptions opts{.batch_size = 7, .shuffle = true, .seed = 9};
  opts.num_workers = 0;
  DataLoader serial(ds, opts);
  serial.set_epoch(2);
  const auto expected = run(serial);
  REQUIRE(expected.size() == 9);
  for (int64_t workers : {1, 2, 4}) {
    for (int64_t prefetch : {1, 2}) {
      INFO("workers " << workers << ", prefetch " << prefetch);
      opts.num_workers = workers;
      opts.prefetch_factor = prefetch;
      opts.pin_memory = workers == 2;  // a no-op without CUDA; must not change anything either way
      DataLoader threaded(ds, opts);
      threaded.set_epoch(2);
      REQUIRE(run(threaded) == expected);
    }
  }
}

TEST_CASE("epochs reshuffle and re-augment; the same epoch repeats exactly", "[data][loader]") {
  DataLoader loader(augmented(20), {.batch_size = 5, .shuffle = true, .num_workers = 2, .seed = 1});
  const auto e0 = run(loader);
  REQUIRE(run(loader) == e0);
  loader.set_epoch(1);
  const auto e1 = run(loader);
  REQUIRE(e1 != e0);
  REQUIRE(e1[0].second != e0[0].second);
  // Unshuffled: same examples per epoch, different augmentation.
  DataLoader fixed(augmented(20), {.batch_size = 5, .num_workers = 1});
  const auto f0 = run(fixed);
  fixed.set_epoch(1);
  const auto f1 = run(fixed);
  REQUIRE(f1[0].second == f0[0].second);
  REQUIRE(f1[0].first != f0[0].first);
}

TEST_CASE("DataLoader with DistributedSampler: ranks split each epoch", "[data][loader][sampler]") {
  auto ds = std::make_shared<ProbeDataset>(11);
  std::vector<int64_t> all;
  for (int64_t rank = 0; rank < 3; ++rank) {
    auto sampler = std::make_shared<DistributedSampler>(11, 3, rank, false);
    DataLoader loader(ds, {.batch_size = 2, .sampler = sampler, .num_workers = 2});
    REQUIRE(loader.size() == 2);
    for (const auto& b : run(loader)) all.insert(all.end(), b.second.begin(), b.second.end());
  }
  std::sort(all.begin(), all.end());
  REQUIRE(all == std::vector<int64_t>{0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10});  // 11 + 1 padding
  // The epoch lives in the sampler: set either one.
  auto sampler = std::make_shared<DistributedSampler>(11, 3, 0, true);
  DataLoader loader(ds, {.batch_size = 4, .sampler = sampler});
  sampler->set_epoch(4);
  REQUIRE(loader.epoch() == 4);
}

TEST_CASE("an example's augmentation is the same on any rank and thread count", "[data][loader][sampler]") {
  auto ds = augmented(23);
  // Reference: world of 1, one example per batch, loaded in the calling thread.
  std::map<int64_t, std::vector<float>> reference;
  DataLoader single(ds, {.batch_size = 1, .num_workers = 0, .seed = 4});
  single.set_epoch(1);
  int64_t index = 0;  // sequential: batch j is example j
  for (const Batch& b : single) reference[index++] = to_vector<float>(b.data);
  for (int64_t world : {2, 3}) {
    for (int64_t rank = 0; rank < world; ++rank) {
      auto sampler = std::make_shared<DistributedSampler>(23, world, rank, true, 8);
      DataLoader loader(ds, {.batch_size = 3, .sampler = sampler, .num_workers = rank + 1, .seed = 4});
      loader.set_epoch(1);
      const auto order = sampler->indices();
      size_t k = 0;
      for (const Batch& b : loader)
        for (int64_t i = 0; i < b.target.size(0); ++i, ++k)
          REQUIRE(to_vector<float>(b.data.select(0, i)) == reference.at(order[k]));
      REQUIRE(k == order.size());
    }
  }
}

TEST_CASE("a worker's exception reaches the consumer with its message", "[data][loader][errors]") {
  for (int64_t workers : {0, 1, 2, 4}) {
    INFO("workers " << workers);
    auto ds = std::make_shared<ProbeDataset>(40, 13);
    DataLoader loader(ds, {.batch_size = 4, .num_workers = workers});
    int64_t good = 0;
    auto consume = [&] {
      for (const Batch& b : loader) good += b.target.size(0);
    };
    REQUIRE_THROWS_WITH(consume(), Catch::Contains("cannot read example 13") && Catch::Contains("batch 3") &&
                                       Catch::Contains("example 13"));
    REQUIRE(good == 12);  // batches 0-2 arrived first, in order
    // The failure in the first batch surfaces from begin().
    DataLoader first(std::make_shared<ProbeDataset>(8, 0), {.batch_size = 4, .num_workers = workers});
    REQUIRE_THROWS_WITH(first.begin(), Catch::Contains("cannot read example 0"));
  }
  // Examples that do not stack name the culprit.
  std::vector<Tensor> xs = {zeros({2}), zeros({3})};
  REQUIRE_THROWS_WITH(collate({{xs[0], zeros({})}, {xs[1], zeros({})}}),
                      Catch::Contains("example 1's data") && Catch::Contains("[3]"));
}

TEST_CASE("workers prefetch at most num_workers * prefetch_factor batches", "[data][loader][threads]") {
  auto ds = std::make_shared<ProbeDataset>(400);
  DataLoader loader(ds, {.batch_size = 4, .num_workers = 2, .prefetch_factor = 2});
  auto it = loader.begin();  // holds batch 0; the window then allows batches 1..4
  REQUIRE(eventually([&] { return ds->calls.load() >= 5 * 4; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  REQUIRE(ds->calls.load() == 5 * 4);
  ++it;
  REQUIRE(eventually([&] { return ds->calls.load() >= 6 * 4; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  REQUIRE(ds->calls.load() == 6 * 4);
}

TEST_CASE("leaving the loop early or dropping the loader stops the workers", "[data][loader][threads]") {
  const int base = thread_count();
  auto ds = std::make_shared<ProbeDataset>(100000, -1, 200);
  {
    DataLoader loader(ds, {.batch_size = 8, .num_workers = 4});
    int taken = 0;
    const auto t0 = std::chrono::steady_clock::now();
    for (const Batch& b : loader) {
      (void)b;
      if (++taken == 3) break;
    }
    // Back promptly (no hang), threads gone, and no more loading after the loop.
    REQUIRE(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
    REQUIRE(eventually([&] { return thread_count() == base; }));
    const int64_t calls = ds->calls.load();
    REQUIRE(calls <= (3 + 4 * 2 + 4) * 8);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    REQUIRE(ds->calls.load() == calls);
  }
  {
    // The iterator keeps its epoch alive after the loader is gone.
    auto loader = std::make_unique<DataLoader>(std::make_shared<ProbeDataset>(10),
                                               DataLoaderOptions{.batch_size = 3, .num_workers = 2});
    auto it = loader->begin();
    const auto end = loader->end();
    loader.reset();
    int64_t n = 0;
    for (; it != end; ++it) n += it->target.size(0);
    REQUIRE(n == 10);
  }
  {
    // Destroyed mid-epoch while workers are blocked on a full window.
    DataLoader loader(ds, {.batch_size = 8, .num_workers = 3});
    auto it = loader.begin();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  REQUIRE(eventually([&] { return thread_count() == base; }));
}

TEST_CASE("DataLoader checks its options", "[data][loader][errors]") {
  auto ds = std::make_shared<ProbeDataset>(4);
  REQUIRE_THROWS_WITH(DataLoader(ds, {.batch_size = 0}), Catch::Contains("batch_size"));
  REQUIRE_THROWS_WITH(DataLoader(ds, {.num_workers = -1}), Catch::Contains("num_workers"));
  REQUIRE_THROWS_WITH(DataLoader(nullptr), Catch::Contains("dataset is null"));
  DataLoader empty(std::make_shared<ProbeDataset>(0), {.batch_size = 3, .num_workers = 2});
  REQUIRE(empty.size() == 0);
  REQUIRE(empty.begin() == empty.end());
}
