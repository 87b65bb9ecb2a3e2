// The recorder behind trace.h: one buffer per live thread, grown in chunks taken from a
// global budget (the cap), thread tracks named by set_thread_name, and snapshot().
// Recording takes no lock: a thread appends to its own buffer and publishes the new size
// with a release store; locks guard only thread start/exit, naming and start().
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include "tensor/error.h"
#include "trace/snapshot.h"

namespace ddl::trace {
namespace detail {

int64_t read_skew_env() {
  const char* v = std::getenv("DDL_TRACE_TEST_CLOCK_SKEW_US");
  return v ? std::strtoll(v, nullptr, 10) * 1000 : 0;  // checked properly by start()
}

std::atomic<bool> g_on{false};
int64_t g_skew_ns = read_skew_env();

}  // namespace detail
namespace {

constexpr int64_t kChunk = 1024;  // events per allocation: ~96 KiB

struct Buffer {
  std::vector<Event*> chunks;  // reserved when created, so readers never see it move
  std::atomic<int64_t> size{0};
  int64_t capacity = 0;
  Buffer(const Buffer&) = delete;
  explicit Buffer(int64_t max_events) { chunks.reserve(static_cast<size_t>(max_events / kChunk + 1)); }
  ~Buffer() {
    for (Event* c : chunks) delete[] c;
  }
};

struct Track {
  std::string name;
  bool in_use = false;
};

// Note [Trace generations]: start() retires every buffer and bumps `gen`; a thread whose
// buffer is of an older generation takes a fresh one at its next event. Retired buffers
// are freed one start() later, so a writer that raced a restart never writes freed memory.
struct Registry {
  std::mutex mu;
  std::vector<std::unique_ptr<Buffer>> buffers, retired;
  std::vector<Buffer*> free;  // buffers of exited threads, reused with their events
  std::vector<Track> tracks;  // index = tid - 1
  std::set<std::string, std::less<>> interned;
  std::string process_name = "process " + std::to_string(::getpid());
  int64_t start_ns = 0, stop_ns = 0;
  int64_t max_events = kDefaultMaxEvents;
  std::atomic<uint64_t> gen{1};
  std::atomic<int64_t> reserved{0};
  std::atomic<int64_t> dropped{0};
};

Registry& reg() {
  static Registry* r = new Registry;  // never destroyed: threads may exit after main returns
  return *r;
}

// Under reg().mu: a tid for `name`, reusing a track of that name no live thread holds.
int32_t take_tid(Registry& r, std::string_view name) {
  for (size_t i = 0; i < r.tracks.size(); ++i)
    if (!r.tracks[i].in_use && r.tracks[i].name == name) {
      r.tracks[i].in_use = true;
      return static_cast<int32_t>(i + 1);
    }
  r.tracks.push_back(Track{std::string(name), true});
  return static_cast<int32_t>(r.tracks.size());
}

struct ThreadState {
  Buffer* buf = nullptr;
  uint64_t gen = 0;
  int32_t tid = 0;
  ~ThreadState() {
    Registry& r = reg();
    std::lock_guard<std::mutex> lock(r.mu);
    if (tid > 0) r.tracks[tid - 1].in_use = false;
    if (buf && gen == r.gen.load()) r.free.push_back(buf);
  }
};
thread_local ThreadState tls;

// Under reg().mu.
void ensure_tid(Registry& r, ThreadState& t) {
  if (t.tid > 0) return;
  const bool main_thread = ::gettid() == ::getpid();
  t.tid = take_tid(r, main_thread ? std::string("main") : "thread " + std::to_string(r.tracks.size() + 1));
}

Buffer* buffer_for(ThreadState& t) {
  Registry& r = reg();
  const uint64_t g = r.gen.load(std::memory_order_acquire);
  if (t.buf && t.gen == g) [[likely]]
    return t.buf;
  std::lock_guard<std::mutex> lock(r.mu);
  ensure_tid(r, t);
  t.gen = r.gen.load();
  if (!r.free.empty()) {
    t.buf = r.free.back();
    r.free.pop_back();
  } else {
    r.buffers.push_back(std::make_unique<Buffer>(r.max_events));
    t.buf = r.buffers.back().get();
  }
  return t.buf;
}

// Takes up to one chunk of the global budget; false when the cap is reached.
bool grow(Registry& r, Buffer& b) {
  if (b.chunks.size() == b.chunks.capacity()) return false;
  int64_t cur = r.reserved.load(std::memory_order_relaxed);
  int64_t take = 0;
  do {
    take = std::min(kChunk, r.max_events - cur);
    if (take <= 0) return false;
  } while (!r.reserved.compare_exchange_weak(cur, cur + take, std::memory_order_relaxed));
  b.chunks.push_back(new Event[kChunk]);
  b.capacity += take;
  return true;
}

// The calling thread's next free slot, or nullptr (counted as dropped) past the cap.
Event* claim(Buffer*& buf, int64_t& n) {
  ThreadState& t = tls;
  buf = buffer_for(t);
  n = buf->size.load(std::memory_order_relaxed);
  Registry& r = reg();
  if (n == buf->capacity && !grow(r, *buf)) [[unlikely]] {
    r.dropped.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  Event* e = &buf->chunks[n / kChunk][n % kChunk];
  e->tid = t.tid;
  return e;
}

int64_t resolve_cap(const Options& o) {
  int64_t cap = o.max_events;
  if (cap == 0) {
    cap = kDefaultMaxEvents;
    if (const char* v = std::getenv("DDL_TRACE_MAX_EVENTS"); v && *v) {
      char* end = nullptr;
      errno = 0;
      cap = std::strtoll(v, &end, 10);
      if (*end != '\0' || errno != 0) cap = -1;
    }
  }
  if (cap < 1 || cap > kMaxEventsLimit)
    throw Error("trace::start: max_events (Options::max_events or DDL_TRACE_MAX_EVENTS) must be an integer in 1.." +
                std::to_string(kMaxEventsLimit) + ", got " +
                (o.max_events ? std::to_string(o.max_events) : std::string(std::getenv("DDL_TRACE_MAX_EVENTS"))));
  return cap;
}

void check_skew_env() {
  const char* v = std::getenv("DDL_TRACE_TEST_CLOCK_SKEW_US");
  if (!v) return;
  char* end = nullptr;
  errno = 0;
  std::strtoll(v, &end, 10);
  if (*v == '\0' || *end != '\0' || errno != 0)
    throw Error(std::string("trace::start: DDL_TRACE_TEST_CLOCK_SKEW_US (a test-only clock skew) must be an integer "
                            "number of microseconds, got '") +
                v + "'");
}

}  // namespace

namespace detail {

void record(char phase, const char* name, const char* cat, int64_t ts, int64_t dur, uint64_t id,
            std::initializer_list<Arg> args) {
  Buffer* buf = nullptr;
  int64_t n = 0;
  Event* e = claim(buf, n);
  if (!e) return;
  e->phase = phase;
  e->name = name;
  e->cat = cat;
  e->ts_ns = ts;
  e->dur_ns = dur;
  e->id = id;
  int k = 0;
  for (const Arg& a : args)
    if (k < kMaxArgs) e->args[k++] = a;
  e->nargs = static_cast<uint8_t>(k);
  buf->size.store(n + 1, std::memory_order_release);
}

void record_span(const char* name, const char* cat, int64_t t0, int64_t t1, const Arg* args, int nargs) {
  Buffer* buf = nullptr;
  int64_t n = 0;
  Event* e = claim(buf, n);
  if (!e) return;
  e->phase = 'X';
  e->name = name;
  e->cat = cat;
  e->ts_ns = t0;
  e->dur_ns = t1 - t0;
  e->id = 0;
  for (int k = 0; k < nargs; ++k) e->args[k] = args[k];
  e->nargs = static_cast<uint8_t>(nargs);
  buf->size.store(n + 1, std::memory_order_release);
}

}  // namespace detail

void start(const Options& options) {
  const int64_t cap = resolve_cap(options);
  check_skew_env();
  Registry& r = reg();
  std::lock_guard<std::mutex> lock(r.mu);
  detail::g_on.store(false);
  r.retired = std::move(r.buffers);  // See Note [Trace generations].
  r.buffers.clear();
  r.free.clear();
  r.max_events = cap;
  r.reserved = 0;
  r.dropped = 0;
  r.gen.fetch_add(1);
  if (!options.process_name.empty()) r.process_name = options.process_name;
  r.start_ns = now_ns();
  r.stop_ns = 0;
  detail::g_on.store(true, std::memory_order_release);
}

void stop() {
  if (!detail::g_on.exchange(false)) return;
  Registry& r = reg();
  std::lock_guard<std::mutex> lock(r.mu);
  r.stop_ns = now_ns();
}

void set_thread_name(std::string_view name) {
  Registry& r = reg();
  std::lock_guard<std::mutex> lock(r.mu);
  ThreadState& t = tls;
  if (t.tid > 0) r.tracks[t.tid - 1].in_use = false;
  t.tid = take_tid(r, name);
}

void set_process_name(std::string_view name) {
  Registry& r = reg();
  std::lock_guard<std::mutex> lock(r.mu);
  r.process_name = std::string(name);
}

const char* intern(std::string_view s) {
  Registry& r = reg();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.interned.find(s);
  if (it == r.interned.end()) it = r.interned.emplace(s).first;
  return it->c_str();
}

Snapshot snapshot() {
  Registry& r = reg();
  std::lock_guard<std::mutex> lock(r.mu);
  Snapshot s;
  std::set<int32_t> tids;
  for (const auto& b : r.buffers) {
    const int64_t n = b->size.load(std::memory_order_acquire);
    for (int64_t i = 0; i < n; ++i) {
      s.events.push_back(b->chunks[i / kChunk][i % kChunk]);
      tids.insert(s.events.back().tid);
    }
  }
  std::stable_sort(s.events.begin(), s.events.end(), [](const Event& a, const Event& b) { return a.ts_ns < b.ts_ns; });
  for (int32_t tid : tids) s.threads.push_back(ThreadTrack{tid, r.tracks[tid - 1].name});
  s.process_name = r.process_name;
  s.start_ns = r.start_ns;
  s.stop_ns = r.stop_ns ? r.stop_ns : now_ns();
  s.max_events = r.max_events;
  s.dropped = r.dropped.load();
  return s;
}

}  // namespace ddl::trace
