// parallel_for and parallel_for_dynamic (tensor/core/parallel.h): every index once, in
// chunks of the size asked for, exceptions carried out of the region, and the dynamic
// form handing chunks to whichever thread is free.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include <ddl/ddl.h>

namespace {

struct ThreadsGuard {
  int saved = ddl::get_num_threads();
  explicit ThreadsGuard(int n) { ddl::set_num_threads(n); }
  ~ThreadsGuard() { ddl::set_num_threads(saved); }
};

}  // namespace

TEST_CASE("parallel_for_dynamic visits every index once, in chunks of at most the size asked for") {
  for (int threads : {1, 2, 3}) {
    const ThreadsGuard guard(threads);
    for (int64_t n : {1, 7, 64, 1000}) {
      for (int64_t chunk : {1, 3, 64, 5000}) {
        std::vector<std::atomic<int>> seen(size_t(n + 10));
        std::atomic<int64_t> biggest{0};
        ddl::parallel_for_dynamic(10, 10 + n, chunk, [&](int64_t b, int64_t e) {
          REQUIRE(b < e);
          int64_t seen_max = biggest.load();
          while (e - b > seen_max && !biggest.compare_exchange_weak(seen_max, e - b)) {
          }
          for (int64_t i = b; i < e; ++i) seen[size_t(i)]++;
        });
        INFO("threads " << threads << " n " << n << " chunk " << chunk);
        for (int64_t i = 0; i < 10; ++i) REQUIRE(seen[size_t(i)] == 0);
        for (int64_t i = 10; i < 10 + n; ++i) REQUIRE(seen[size_t(i)] == 1);
        if (threads > 1) REQUIRE(biggest.load() <= chunk);  // one thread takes the range whole
      }
    }
  }
}

TEST_CASE("parallel_for_dynamic carries an exception out of the region") {
  const ThreadsGuard guard(2);
  REQUIRE_THROWS_WITH(ddl::parallel_for_dynamic(0, 100, 1,
                                                [&](int64_t b, int64_t) {
                                                  if (b == 57) throw std::runtime_error("chunk 57 failed");
                                                }),
                      "chunk 57 failed");
  REQUIRE_THROWS_WITH(ddl::parallel_for(0, 100, 1,
                                        [&](int64_t b, int64_t e) {
                                          if (b <= 99 && 99 < e) throw std::runtime_error("the last chunk failed");
                                        }),
                      "the last chunk failed");
}

TEST_CASE("parallel_for_dynamic gives the chunks to the thread that is free") {
  if (std::thread::hardware_concurrency() < 2) return;  // one CPU: nothing to balance
  const ThreadsGuard guard(2);
  // Chunk 0 waits (up to 10 s) until all the others are done: with chunks handed out as
  // threads come free, the other thread takes them all meanwhile. A static split would
  // leave chunks 1-9 behind chunk 0 on its thread, and this test would wait and fail.
  std::mutex mu;
  std::set<std::thread::id> others;
  std::atomic<int> done{0};
  std::thread::id slow;
  ddl::parallel_for_dynamic(0, 20, 1, [&](int64_t b, int64_t) {
    if (b == 0) {
      slow = std::this_thread::get_id();
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (done.load() < 19 && std::chrono::steady_clock::now() < give_up)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mu);
      others.insert(std::this_thread::get_id());
    }
    done++;
  });
  REQUIRE(done.load() == 19);
  REQUIRE(others.size() == 1);
  REQUIRE(others.count(slow) == 0);
}
