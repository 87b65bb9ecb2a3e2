// ddl::trace: a timeline recorder for training runs (docs/trace.md). Spans, instants,
// counters and async spans go into per-thread buffers with a global cap, and are written
// as Chrome trace-event JSON (json_writer.h; dist/trace_merge.h merges a job's ranks).
// Off, every call costs one relaxed atomic load; on, an event is a clock read and a copy
// into the thread's own buffer, without a lock except a thread's first event of a trace,
// and allocating only at every 1,024th (a new chunk). Names must outlive the trace: string
// literals, or intern() for names built at run time. Std only: every layer uses it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

namespace ddl::trace {

// Events kept at most, over all threads of a process, when Options::max_events is 0 and
// DDL_TRACE_MAX_EVENTS is unset: 524,288 events × 96 B ≈ 48 MiB per process for the
// recorder's buffers (writing the file copies them once more: snapshot.h).
inline constexpr int64_t kDefaultMaxEvents = int64_t{1} << 19;
// The largest cap accepted (start() throws above it).
inline constexpr int64_t kMaxEventsLimit = int64_t{1} << 26;

struct Options {
  // Cap on recorded events (0: DDL_TRACE_MAX_EVENTS, else kDefaultMaxEvents). Events past
  // the cap are dropped, counted, and the count is written into the file's metadata.
  int64_t max_events = 0;
  // The process track's name ("" keeps the last one set, by default "process <pid>").
  std::string process_name;
};

// An event argument: a key (a string literal) and an integer (bytes, index, peer, ...).
struct Arg {
  const char* key = nullptr;
  int64_t value = 0;
};
inline constexpr int kMaxArgs = 3;

namespace detail {
extern std::atomic<bool> g_on;
extern int64_t g_skew_ns;  // DDL_TRACE_TEST_CLOCK_SKEW_US, read once: for tests of clock alignment only
void record(char phase, const char* name, const char* cat, int64_t ts, int64_t dur, uint64_t id,
            std::initializer_list<Arg> args);
void record_span(const char* name, const char* cat, int64_t t0, int64_t t1, const Arg* args, int nargs);
}  // namespace detail

// True while recording. The only cost of an instrumented site when tracing is off.
inline bool enabled() { return detail::g_on.load(std::memory_order_relaxed); }

// The trace clock in nanoseconds: steady_clock (CLOCK_MONOTONIC, shared by the processes
// of one machine) plus the test-only skew. Timestamps of every event come from it.
inline int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
             .count() +
         detail::g_skew_ns;
}

// A steady_clock time point on the trace clock (for code that already reads steady_clock).
inline int64_t to_trace_ns(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count() + detail::g_skew_ns;
}

// Starts recording, dropping whatever an earlier trace kept; safe while other threads
// record. Events stamped before this call (a Span opened in an earlier trace) are not
// recorded. Throws ddl::Error when the cap (from options or DDL_TRACE_MAX_EVENTS) is not
// in 1..kMaxEventsLimit.
void start(const Options& options = {});
// Stops recording; the events stay readable (snapshot(), json_writer.h) until the next
// start(). A Span open at stop() is still recorded when it closes.
void stop();

// Names the calling thread's track ("compute", "data loader 0", "comm"). Threads that share
// a name share a track while they do not overlap (a loader's workers of successive epochs).
// Works whether or not tracing is on; the main thread is "main" until named.
void set_thread_name(std::string_view name);
// Names this process's track (dist/trace_merge.h names merged ranks "rank r" itself).
void set_process_name(std::string_view name);
// A copy of `s` that lives until the process exits (same text, same pointer): for names
// built at run time. Takes a lock: call it once per name, not per event.
const char* intern(std::string_view s);

// A complete event ("X") from construction to destruction, on the calling thread. Spans of
// one thread nest because their lifetimes do. Arguments are evaluated even when tracing is
// off: guard expensive ones with enabled().
class Span {
 public:
  Span(const char* name, const char* category) {
    if (enabled()) [[unlikely]] {
      name_ = name;
      cat_ = category;
      t0_ = now_ns();
    }
  }
  Span(const char* name, const char* category, std::initializer_list<Arg> args) : Span(name, category) {
    for (const Arg& a : args) arg(a.key, a.value);
  }
  ~Span() {
    if (name_) [[unlikely]]
      detail::record_span(name_, cat_, t0_, now_ns(), args_, nargs_);
  }
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;
  // Adds an argument (at most kMaxArgs; later ones are ignored).
  void arg(const char* key, int64_t value) {
    if (name_ && nargs_ < kMaxArgs) args_[nargs_++] = Arg{key, value};
  }
  bool active() const { return name_ != nullptr; }

 private:
  const char* name_ = nullptr;
  const char* cat_ = nullptr;
  int64_t t0_ = 0;
  Arg args_[kMaxArgs];
  int nargs_ = 0;
};

// A point in time on the calling thread's track ("i", thread scope).
inline void instant(const char* name, const char* category, std::initializer_list<Arg> args = {}) {
  if (enabled()) [[unlikely]]
    detail::record('i', name, category, now_ns(), 0, 0, args);
}
// A complete span with explicit times (now_ns() values), for spans that no scope delimits.
inline void complete(const char* name, const char* category, int64_t t0_ns, int64_t t1_ns) {
  if (enabled()) [[unlikely]]
    detail::record_span(name, category, t0_ns, t1_ns, nullptr, 0);
}
// A counter track `name` with one series per argument ("C"), e.g. {{"sent", s}, {"received", r}}.
inline void counter(const char* name, std::initializer_list<Arg> series) {
  if (enabled()) [[unlikely]]
    detail::record('C', name, "counter", now_ns(), 0, 0, series);
}
// An async span ("b" ... "e") that may begin and end on different threads: the pair is
// matched by (name, category, id), so give concurrent ones distinct ids.
inline void async_begin(const char* name, const char* category, uint64_t id, std::initializer_list<Arg> args = {}) {
  if (enabled()) [[unlikely]]
    detail::record('b', name, category, now_ns(), 0, id, args);
}
inline void async_end(const char* name, const char* category, uint64_t id, std::initializer_list<Arg> args = {}) {
  if (enabled()) [[unlikely]]
    detail::record('e', name, category, now_ns(), 0, id, args);
}

}  // namespace ddl::trace

#define DDL_TRACE_CONCAT2(a, b) a##b
#define DDL_TRACE_CONCAT(a, b) DDL_TRACE_CONCAT2(a, b)
// A span for the rest of the enclosing scope: DDL_TRACE_SPAN("forward", "phase").
#define DDL_TRACE_SPAN(name, category) ::ddl::trace::Span DDL_TRACE_CONCAT(ddl_trace_span_, __LINE__)(name, category)
