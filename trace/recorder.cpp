// The recorder behind trace.h: one buffer per live thread, grown in chunks and charged to
// the trace's budget (the cap) 64 events at a time, thread tracks named by set_thread_name,
// and snapshot(). An event takes no lock: a thread appends to its own buffer and publishes
// the new size with a release store. The lock guards a thread's first event of a trace
// (its buffer), thread exit, naming, start() and snapshot(); every 1,024th event allocates
// a chunk and every 64th takes budget with a compare-and-swap.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include <ddl/base/error.h>
#include <ddl/trace/snapshot.h>

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
constexpr int64_t kTake = 64;     // events of the cap charged at a time (divides kChunk)
static_assert(kChunk % kTake == 0);

// One trace's cap and its accounting. Buffers hold the budget of the trace they were made
// for, so a writer that raced a restart charges the old trace, never the new one's count.
struct Budget {
  const int64_t max_events;
  const int64_t start_ns;  // events stamped earlier belong to no part of this trace
  std::atomic<int64_t> reserved{0};
  std::atomic<int64_t> dropped{0};
  Budget(int64_t cap, int64_t start) : max_events(cap), start_ns(start) {}
};

struct Buffer {
  std::shared_ptr<Budget> budget;
  std::vector<Event*> chunks;  // reserved when created, so readers never see it move
  std::atomic<int64_t> size{0};
  int64_t capacity = 0;
  Buffer(const Buffer&) = delete;
  explicit Buffer(std::shared_ptr<Budget> b) : budget(std::move(b)) {
    chunks.reserve(static_cast<size_t>(budget->max_events / kChunk + 1));
  }
  ~Buffer() {
    for (Event* c : chunks) delete[] c;
  }
};

struct Track {
  std::string name;
  bool in_use = false;
};

struct ThreadState;

// Note [Trace generations]: start() bumps `gen`; a thread whose buffer is of an older
// generation takes a fresh one at its next event. A thread writes only inside a busy
// section: it sets its `busy` flag, then checks the generation (both sequentially
// consistent). start() bumps `gen`, then waits until it has seen every thread's flag clear
// once: a writer that set its flag after that sees the new generation, so none can still
// be inside an old buffer, and start() frees them at once. A busy section holds no lock
// and calls no user code (a chunk allocation at most), so the wait is short.
struct Registry {
  std::mutex mu;
  std::vector<std::unique_ptr<Buffer>> buffers;
  std::vector<Buffer*> free;          // buffers of exited threads, reused with their events
  std::vector<ThreadState*> writers;  // threads that have recorded: their busy flags
  std::vector<Track> tracks;          // index = tid - 1
  std::set<std::string, std::less<>> interned;
  std::string process_name = "process " + std::to_string(::getpid());
  int64_t stop_ns = 0;
  std::shared_ptr<Budget> budget = std::make_shared<Budget>(kDefaultMaxEvents, 0);
  std::atomic<uint64_t> gen{1};
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
  bool registered = false;
  std::atomic<int> busy{0};  // See Note [Trace generations].
  ~ThreadState() {
    Registry& r = reg();
    std::lock_guard<std::mutex> lock(r.mu);
    if (tid > 0) r.tracks[tid - 1].in_use = false;
    if (buf && gen == r.gen.load()) r.free.push_back(buf);
    std::erase(r.writers, this);
  }
};
thread_local ThreadState tls;

// Under reg().mu.
void ensure_tid(Registry& r, ThreadState& t) {
  if (t.tid > 0) return;
  const bool main_thread = ::gettid() == ::getpid();
  t.tid = take_tid(r, main_thread ? std::string("main") : "thread " + std::to_string(r.tracks.size() + 1));
}

// The slow path, outside any busy section: a buffer of the current generation.
void refresh_buffer(ThreadState& t) {
  Registry& r = reg();
  std::lock_guard<std::mutex> lock(r.mu);
  ensure_tid(r, t);
  if (!t.registered) {
    r.writers.push_back(&t);
    t.registered = true;
  }
  t.gen = r.gen.load();
  if (!r.free.empty()) {
    t.buf = r.free.back();
    r.free.pop_back();
  } else {
    r.buffers.push_back(std::make_unique<Buffer>(r.budget));
    t.buf = r.buffers.back().get();
  }
}

// Takes up to kTake more events of the buffer's budget, allocating a chunk when the last
// one is full; false when the cap is reached. The budget is charged in small steps, not
// whole chunks, so a small cap is not held by the first threads to record.
bool grow(Buffer& b) {
  const bool need_chunk = b.capacity == static_cast<int64_t>(b.chunks.size()) * kChunk;
  if (need_chunk && b.chunks.size() == b.chunks.capacity()) return false;
  Budget& budget = *b.budget;
  int64_t cur = budget.reserved.load(std::memory_order_relaxed);
  int64_t take = 0;
  do {
    take = std::min(kTake, budget.max_events - cur);
    if (take <= 0) return false;
  } while (!budget.reserved.compare_exchange_weak(cur, cur + take, std::memory_order_relaxed));
  if (need_chunk) b.chunks.push_back(new Event[kChunk]);
  b.capacity += take;
  return true;
}

// A busy section (Note [Trace generations]) around one event: slot() is the calling
// thread's next free slot in a buffer of the current trace, or nullptr when the event is
// past the cap (counted as dropped) or stamped before the trace started (not counted:
// a span opened in an earlier trace). The destructor publishes a filled slot.
class Slot {
 public:
  explicit Slot(int64_t ts) : t_(tls) {
    Registry& r = reg();
    for (;;) {
      t_.busy.store(1, std::memory_order_seq_cst);
      if (t_.buf && t_.gen == r.gen.load(std::memory_order_seq_cst)) [[likely]]
        break;
      t_.busy.store(0, std::memory_order_release);
      refresh_buffer(t_);
    }
    buf_ = t_.buf;
    if (ts < buf_->budget->start_ns) [[unlikely]]
      return;
    n_ = buf_->size.load(std::memory_order_relaxed);
    if (n_ == buf_->capacity && !grow(*buf_)) [[unlikely]] {
      buf_->budget->dropped.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    e_ = &buf_->chunks[n_ / kChunk][n_ % kChunk];
    e_->tid = t_.tid;
  }
  ~Slot() {
    if (e_) buf_->size.store(n_ + 1, std::memory_order_release);
    t_.busy.store(0, std::memory_order_release);
  }
  Slot(const Slot&) = delete;
  Slot& operator=(const Slot&) = delete;
  Event* get() const { return e_; }

 private:
  ThreadState& t_;
  Buffer* buf_ = nullptr;
  Event* e_ = nullptr;
  int64_t n_ = 0;
};

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
  Slot slot(ts);
  Event* e = slot.get();
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
}

void record_span(const char* name, const char* cat, int64_t t0, int64_t t1, const Arg* args, int nargs) {
  Slot slot(t0);
  Event* e = slot.get();
  if (!e) return;
  e->phase = 'X';
  e->name = name;
  e->cat = cat;
  e->ts_ns = t0;
  e->dur_ns = t1 - t0;
  e->id = 0;
  for (int k = 0; k < nargs; ++k) e->args[k] = args[k];
  e->nargs = static_cast<uint8_t>(nargs);
}

}  // namespace detail

void start(const Options& options) {
  const int64_t cap = resolve_cap(options);
  check_skew_env();
  Registry& r = reg();
  std::lock_guard<std::mutex> lock(r.mu);
  detail::g_on.store(false);
  r.budget = std::make_shared<Budget>(cap, now_ns());
  r.gen.fetch_add(1, std::memory_order_seq_cst);  // See Note [Trace generations].
  for (ThreadState* t : r.writers)
    while (t->busy.load(std::memory_order_seq_cst)) std::this_thread::yield();
  r.buffers.clear();
  r.free.clear();
  if (!options.process_name.empty()) r.process_name = options.process_name;
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

namespace {

// Note [Event order]: by start time; at equal starts the longer span first, because
// viewers nest complete events in file order and a child written before its parent of the
// same start (a block's first module) is drawn beside it. Equal spans of one thread are
// written last-recorded first: spans close innermost first, so that is the parent.
void sort_events(std::vector<Event>& events) {
  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    if (a.ts_ns != b.ts_ns) return a.ts_ns < b.ts_ns;
    if (a.dur_ns != b.dur_ns) return a.dur_ns > b.dur_ns;
    return a.tid < b.tid;
  });
  const auto same = [](const Event& a, const Event& b) {
    return a.phase == 'X' && b.phase == 'X' && a.ts_ns == b.ts_ns && a.dur_ns == b.dur_ns && a.tid == b.tid;
  };
  for (size_t i = 0; i < events.size();) {
    size_t j = i + 1;
    while (j < events.size() && same(events[i], events[j])) ++j;
    std::reverse(events.begin() + static_cast<std::ptrdiff_t>(i), events.begin() + static_cast<std::ptrdiff_t>(j));
    i = j;
  }
}

}  // namespace

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
  sort_events(s.events);  // See Note [Event order].
  for (int32_t tid : tids) s.threads.push_back(ThreadTrack{tid, r.tracks[tid - 1].name});
  s.process_name = r.process_name;
  s.start_ns = r.budget->start_ns;
  s.stop_ns = r.stop_ns ? r.stop_ns : now_ns();
  s.max_events = r.budget->max_events;
  s.dropped = r.budget->dropped.load();
  return s;
}

}  // namespace ddl::trace
