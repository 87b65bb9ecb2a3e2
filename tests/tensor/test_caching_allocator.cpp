// The caching allocator's bookkeeping (tensor/core/caching_allocator.h) over a fake
// RawMemory that counts calls and can run out; plus the CPU-only face of the
// CUDA API (no GPU here: clear errors, device_count() == 0).
#include <catch2/catch.hpp>
#include <cstdlib>
#include <set>
#include <thread>
#include <vector>

#include <ddl/ddl.h>
#include <ddl/tensor/core/caching_allocator.h>
#include <ddl/tensor/core/devices.h>

using namespace ddl;
using detail::CachingAllocator;

namespace {
constexpr size_t kKiB = 1024, kMiB = 1024 * 1024;

// Real (untouched) host memory, so pointers are valid; `capacity` simulates a device's size.
struct FakeRaw : detail::RawMemory {
  size_t capacity = size_t{1} << 40;
  size_t in_use = 0;
  int allocs = 0, frees = 0, failures = 0;
  std::vector<std::pair<void*, size_t>> live;

  void* alloc(size_t n) override {
    if (in_use + n > capacity) {
      failures += 1;
      return nullptr;
    }
    void* p = std::malloc(n);
    REQUIRE(p != nullptr);
    allocs += 1;
    in_use += n;
    live.emplace_back(p, n);
    return p;
  }
  void free(void* p) override {
    for (auto it = live.begin(); it != live.end(); ++it) {
      if (it->first == p) {
        in_use -= it->second;
        live.erase(it);
        frees += 1;
        std::free(p);
        return;
      }
    }
    FAIL("free of a pointer RawMemory did not hand out");
  }
  ~FakeRaw() override {
    for (auto& [p, n] : live) std::free(p);
  }
};

int64_t i64(size_t n) { return static_cast<int64_t>(n); }
}  // namespace

TEST_CASE("sizes round to 512 B and segments follow the pool rules", "[caching_allocator]") {
  REQUIRE(CachingAllocator::round_size(1) == 512);
  REQUIRE(CachingAllocator::round_size(512) == 512);
  REQUIRE(CachingAllocator::round_size(513) == 1024);
  REQUIRE(CachingAllocator::segment_size(512) == 2 * kMiB);
  REQUIRE(CachingAllocator::segment_size(kMiB) == 2 * kMiB);
  REQUIRE(CachingAllocator::segment_size(kMiB + 512) == 20 * kMiB);
  REQUIRE(CachingAllocator::segment_size(10 * kMiB - 512) == 20 * kMiB);
  REQUIRE(CachingAllocator::segment_size(10 * kMiB) == 10 * kMiB);
  REQUIRE(CachingAllocator::segment_size(11 * kMiB) == 12 * kMiB);
}

TEST_CASE("freed blocks are reused without new raw allocations", "[caching_allocator]") {
  FakeRaw raw;
  CachingAllocator a(&raw, "fake:0");
  REQUIRE(a.allocate(0) == nullptr);
  void* p = a.allocate(1000);
  REQUIRE(raw.allocs == 1);
  a.deallocate(p);
  void* q = a.allocate(900);  // same rounded size: same block
  REQUIRE(q == p);
  REQUIRE(raw.allocs == 1);
  a.deallocate(q);
  a.deallocate(nullptr);
  REQUIRE(raw.frees == 0);  // cached, not returned
}

TEST_CASE("small requests are carved from one 2 MiB segment", "[caching_allocator]") {
  FakeRaw raw;
  CachingAllocator a(&raw, "fake:0");
  char* p0 = static_cast<char*>(a.allocate(512));
  char* p1 = static_cast<char*>(a.allocate(100 * kKiB));
  char* p2 = static_cast<char*>(a.allocate(kMiB));
  REQUIRE(raw.allocs == 1);
  REQUIRE(p1 == p0 + 512);  // split: the remainder is handed out next
  REQUIRE(p2 == p1 + 100 * kKiB);
  // 2 MiB - 512 - 100 KiB - 1 MiB remains; a second 1 MiB request needs a new segment.
  void* p3 = a.allocate(kMiB);
  REQUIRE(raw.allocs == 2);
  REQUIRE(a.segment_count() == 2);
  for (void* p : {static_cast<void*>(p0), static_cast<void*>(p1), static_cast<void*>(p2), p3}) a.deallocate(p);
}

TEST_CASE("best fit picks the smallest free block that is large enough", "[caching_allocator]") {
  FakeRaw raw;
  CachingAllocator a(&raw, "fake:0");
  // Fill one segment with blocks separated by live blocks, so frees cannot merge.
  void* big = a.allocate(64 * kKiB);
  void* sep1 = a.allocate(512);
  void* mid = a.allocate(8 * kKiB);
  void* sep2 = a.allocate(512);
  a.deallocate(big);
  a.deallocate(mid);
  void* p = a.allocate(6 * kKiB);
  REQUIRE(p == mid);  // the 8 KiB hole, not the 64 KiB one
  REQUIRE(raw.allocs == 1);
  for (void* x : {p, sep1, sep2}) a.deallocate(x);
}

TEST_CASE("large-pool splits keep only remainders over 1 MiB", "[caching_allocator]") {
  FakeRaw raw;
  CachingAllocator a(&raw, "fake:0");
  char* p = static_cast<char*>(a.allocate(2 * kMiB));  // 20 MiB segment, 18 MiB remainder split off
  char* q = static_cast<char*>(a.allocate(3 * kMiB));
  REQUIRE(raw.allocs == 1);
  REQUIRE(q == p + 2 * kMiB);
  REQUIRE(a.stats().allocated_bytes == i64(5 * kMiB));
  // A 16 MiB request does not fit the 15 MiB free tail: it gets its own 16 MiB segment.
  void* r = a.allocate(16 * kMiB);
  REQUIRE(raw.allocs == 2);
  REQUIRE(a.stats().reserved_bytes == i64(36 * kMiB));
  a.deallocate(r);
  // 15.5 MiB best-fits the 16 MiB block and takes it whole: 0.5 MiB is not worth a block.
  void* s = a.allocate(15 * kMiB + 512 * kKiB);
  REQUIRE(s == r);
  REQUIRE(a.stats().allocated_bytes == i64(21 * kMiB));
  for (void* x : {static_cast<void*>(p), static_cast<void*>(q), s}) a.deallocate(x);
}

TEST_CASE("freeing merges adjacent free blocks back into the segment", "[caching_allocator]") {
  FakeRaw raw;
  CachingAllocator a(&raw, "fake:0");
  void* p0 = a.allocate(512 * kKiB);
  void* p1 = a.allocate(512 * kKiB);
  void* p2 = a.allocate(512 * kKiB);
  a.deallocate(p0);
  a.deallocate(p2);  // merges with the free tail of the segment
  a.deallocate(p1);  // merges both sides: the segment is one free block again
  a.empty_cache();
  REQUIRE(raw.frees == 1);  // only a whole free segment can be released
  REQUIRE(a.segment_count() == 0);
  // After a merge the whole 2 MiB is one block: a 1 MiB request fits without a new segment.
  void* q0 = a.allocate(kMiB);
  void* q1 = a.allocate(kMiB);
  REQUIRE(raw.allocs == 2);  // the first segment was released above; this is its replacement
  a.deallocate(q0);
  a.deallocate(q1);
  void* r = a.allocate(kMiB);
  REQUIRE(raw.allocs == 2);
  a.deallocate(r);
}

TEST_CASE("blocks are reused only on the stream they were allocated on", "[caching_allocator]") {
  FakeRaw raw;
  CachingAllocator a(&raw, "fake:0");
  void* p = a.allocate(4 * kKiB, /*stream=*/1);
  a.deallocate(p);
  void* q = a.allocate(4 * kKiB, /*stream=*/2);
  REQUIRE(q != p);
  REQUIRE(raw.allocs == 2);  // stream 1's free memory is not handed to stream 2
  void* r = a.allocate(4 * kKiB, /*stream=*/1);
  REQUIRE(r == p);
  REQUIRE(raw.allocs == 2);
  a.deallocate(q);
  a.deallocate(r);
}

TEST_CASE("stats track allocated, reserved and peak bytes", "[caching_allocator]") {
  FakeRaw raw;
  CachingAllocator a(&raw, "fake:0");
  REQUIRE(a.stats().allocated_bytes == 0);
  void* p = a.allocate(1000);      // 1024 B in a 2 MiB segment
  void* q = a.allocate(3 * kMiB);  // 20 MiB segment
  MemoryStats s = a.stats();
  REQUIRE(s.allocated_bytes == i64(1024 + 3 * kMiB));
  REQUIRE(s.reserved_bytes == i64(22 * kMiB));
  REQUIRE(s.peak_allocated_bytes == s.allocated_bytes);
  a.deallocate(q);
  s = a.stats();
  REQUIRE(s.allocated_bytes == 1024);
  REQUIRE(s.reserved_bytes == i64(22 * kMiB));  // cached
  REQUIRE(s.peak_allocated_bytes == i64(1024 + 3 * kMiB));
  a.reset_peak();
  REQUIRE(a.stats().peak_allocated_bytes == 1024);
  a.empty_cache();  // releases the free 20 MiB segment, keeps the one holding p
  s = a.stats();
  REQUIRE(s.reserved_bytes == i64(2 * kMiB));
  REQUIRE(raw.frees == 1);
  a.deallocate(p);
  a.empty_cache();
  REQUIRE(a.stats().reserved_bytes == 0);
  REQUIRE(raw.in_use == 0);
}

TEST_CASE("running out releases the cache and retries once, then names the size", "[caching_allocator]") {
  FakeRaw raw;
  raw.capacity = 24 * kMiB;
  CachingAllocator a(&raw, "fake:0");
  void* p = a.allocate(3 * kMiB);                 // 20 MiB segment
  a.deallocate(p);                                // cached: 20 MiB reserved, nothing allocated
  void* q = a.allocate(12 * kMiB, /*stream=*/7);  // does not fit beside the cache
  REQUIRE(q != nullptr);
  REQUIRE(raw.failures == 1);
  REQUIRE(raw.frees == 1);  // the cached 20 MiB went back first
  REQUIRE(a.stats().reserved_bytes == i64(12 * kMiB));
  try {
    a.allocate(16 * kMiB);
    FAIL("expected an out-of-memory error");
  } catch (const Error& e) {
    const std::string msg = e.what();
    REQUIRE_THAT(msg, Catch::Contains("fake:0: out of memory"));
    REQUIRE_THAT(msg, Catch::Contains("16.00 MiB"));
    REQUIRE_THAT(msg, Catch::Contains("12.00 MiB allocated"));
  }
  REQUIRE(raw.failures == 3);  // first try and the retry
  a.deallocate(q);
  REQUIRE(a.stats().allocated_bytes == 0);
}

TEST_CASE("concurrent allocations from several threads keep the books straight", "[caching_allocator]") {
  FakeRaw raw;
  CachingAllocator a(&raw, "fake:0");
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&a, t] {
      for (int i = 0; i < 500; ++i) {
        void* p = a.allocate(static_cast<size_t>(512 * (1 + (i + t) % 17)), static_cast<uintptr_t>(t % 2));
        void* q = a.allocate(kMiB + static_cast<size_t>(i % 3) * kMiB);
        a.deallocate(p);
        a.deallocate(q);
      }
    });
  }
  for (auto& th : threads) th.join();
  REQUIRE(a.stats().allocated_bytes == 0);
  a.empty_cache();
  REQUIRE(a.stats().reserved_bytes == 0);
  REQUIRE(raw.in_use == 0);
}

namespace {
// FakeRaw plus events: each record_event makes an event the test completes by hand.
struct FakeStreams : FakeRaw {
  struct Event {
    uintptr_t stream;
    bool done = false;
  };
  std::vector<Event*> events;  // every event ever recorded, in order
  int waits = 0, released = 0;
  void* record_event(uintptr_t stream) override {
    events.push_back(new Event{stream});
    return events.back();
  }
  bool event_done(void* e) override { return static_cast<Event*>(e)->done; }
  void wait_event(void* e) override {
    waits += 1;
    static_cast<Event*>(e)->done = true;  // a blocking wait returns once the work is done
  }
  void release_event(void*) override { released += 1; }
  ~FakeStreams() override {
    for (Event* e : events) delete e;
  }
};
}  // namespace

TEST_CASE("record_stream: a freed block waits for the other stream's work", "[caching_allocator]") {
  FakeStreams raw;
  CachingAllocator a(&raw, "fake:0");
  void* p = a.allocate(4 * kKiB, /*stream=*/1);
  a.record_stream(p, 2);
  a.record_stream(p, 2);  // recorded once per stream
  a.deallocate(p);
  REQUIRE(raw.events.size() == 1);
  REQUIRE(raw.events[0]->stream == 2);
  REQUIRE(a.pending_free_count() == 1);
  REQUIRE(a.stats().allocated_bytes == 0);  // no tensor holds it any more
  // Stream 2 has not finished: the same request on stream 1 gets other memory.
  void* q = a.allocate(4 * kKiB, 1);
  REQUIRE(q != p);
  a.deallocate(q);
  raw.events[0]->done = true;
  void* r = a.allocate(4 * kKiB, 1);  // the event is seen at this allocate
  REQUIRE(r == p);
  REQUIRE(a.pending_free_count() == 0);
  REQUIRE(raw.released == 1);
  a.deallocate(r);
  REQUIRE(raw.events.size() == 1);  // nothing recorded on this later free: the mark went with the first
}

TEST_CASE("record_stream: every recorded stream must finish; the own stream needs no event", "[caching_allocator]") {
  FakeStreams raw;
  CachingAllocator a(&raw, "fake:0");
  void* own = a.allocate(kKiB, 1);
  a.record_stream(own, 1);
  a.deallocate(own);
  REQUIRE(raw.events.empty());
  REQUIRE(a.pending_free_count() == 0);

  void* p = a.allocate(kKiB, 1);
  REQUIRE(p == own);
  a.record_stream(p, 2);
  a.record_stream(p, 3);
  a.deallocate(p);
  REQUIRE(raw.events.size() == 2);
  raw.events[1]->done = true;  // stream 3 done, stream 2 not: still held
  void* q = a.allocate(kKiB, 1);
  REQUIRE(q != p);
  a.deallocate(q);
  raw.events[0]->done = true;
  void* again = a.allocate(kKiB, 1);
  REQUIRE(again == p);
  REQUIRE(raw.released == 2);
  REQUIRE_THROWS_WITH(a.record_stream(reinterpret_cast<void*>(0x10), 2), Catch::Contains("not a live block"));
  a.deallocate(again);  // a block still live when the allocator dies is never freed (LeakSanitizer sees it)
}

TEST_CASE("record_stream: a pending block does not merge until released, then the segment is whole",
          "[caching_allocator]") {
  FakeStreams raw;
  CachingAllocator a(&raw, "fake:0");
  void* x = a.allocate(kKiB, 1);
  void* y = a.allocate(kKiB, 1);
  REQUIRE(static_cast<char*>(y) == static_cast<char*>(x) + kKiB);
  a.record_stream(y, 2);
  a.deallocate(y);
  a.deallocate(x);  // its neighbour y is still in use by stream 2: no merge
  a.empty_cache();  // waits for the event, returns y, merges, and frees the whole segment
  REQUIRE(raw.waits == 1);
  REQUIRE(raw.frees == 1);
  REQUIRE(a.segment_count() == 0);
  REQUIRE(a.stats().reserved_bytes == 0);
}

TEST_CASE("record_stream: running out waits for pending blocks before giving up", "[caching_allocator]") {
  FakeStreams raw;
  raw.capacity = 2 * kMiB;  // one small segment
  CachingAllocator a(&raw, "fake:0");
  void* p = a.allocate(kMiB, 1);
  a.record_stream(p, 2);
  a.deallocate(p);
  // A request on stream 3 needs a segment of its own, which fits only once the first
  // segment is released, which needs p back, which needs stream 2's event.
  void* q = a.allocate(kMiB, 3);
  REQUIRE(q != nullptr);
  REQUIRE(raw.waits == 1);
  REQUIRE(raw.frees == 1);
  REQUIRE(raw.allocs == 2);
  a.deallocate(q);
}

TEST_CASE("without a GPU, CUDA requests fail with a clear error", "[cuda][cpu_only]") {
  if (cuda::is_available()) return;  // the CUDA suite covers machines with a GPU
  REQUIRE(cuda::device_count() == 0);
  REQUIRE_THROWS_WITH(empty({2, 3}, TensorOptions(DType::Float32, Device::cuda())),
                      Catch::Contains("no GPU is available") || Catch::Contains("built without CUDA"));
  REQUIRE_THROWS_WITH(ones({2}).to(Device::cuda(0)),
                      Catch::Contains("no GPU is available") || Catch::Contains("built without CUDA"));
  REQUIRE_THROWS_AS(cuda::Stream::create(0), Error);
  REQUIRE_THROWS_AS(cuda::memory_stats(0), Error);
  REQUIRE_THROWS_WITH(ones({2}).pin_memory(), Catch::Contains("pin_memory"));
  REQUIRE_FALSE(ones({2}).is_pinned());
  data::DataLoaderOptions opts;
  opts.batch_size(2);
  opts.pin_memory(true);
  auto ds = std::make_shared<data::TensorDataset>(ones({4, 3}), zeros({4}, DType::Int64));
  for (const data::Batch& b : data::DataLoader(ds, opts)) REQUIRE_FALSE(b.data.is_pinned());  // ignored
  cuda::empty_cache();                                                                        // harmless without a GPU
  REQUIRE_FALSE(cuda::allow_tf32());
  cuda::set_allow_tf32(true);
  REQUIRE(cuda::allow_tf32());
  cuda::set_allow_tf32(false);
}
