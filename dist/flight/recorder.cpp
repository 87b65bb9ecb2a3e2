// The flight recorder's ring buffer and its JSON dump (see recorder.h). The dump is formatted
// without allocating, into a buffer made up front, and written with open/write/rename only, so
// a fatal-signal handler can use the same code (signal-safety(7)). Signals and the dump
// thread live in signals.cpp.
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <thread>

#include <ddl/dist/flight/recorder.h>
#include <ddl/dist/flight/recorder_internal.h>
#include <ddl/trace/json_writer.h>
#include <ddl/trace/trace.h>

namespace ddl::dist::flight {
namespace detail {

Globals& globals() {
  static Globals* g = new Globals;  // never destroyed: a signal may dump during exit
  return *g;
}

int64_t wall_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

void copy_text(char* dst, size_t cap, const char* src) {
  size_t n = 0;
  for (; src && src[n] && n + 1 < cap; ++n) dst[n] = src[n];
  dst[n] = '\0';
}

void Writer::raw(const char* s) {
  while (*s && len + 1 < cap) buf[len++] = *s++;
}

void Writer::str(const char* s) {
  raw("\"");
  for (; *s && len + 8 < cap; ++s) {
    const unsigned char c = static_cast<unsigned char>(*s);
    if (c == '"' || c == '\\') {
      buf[len++] = '\\';
      buf[len++] = char(c);
    } else if (c < 0x20) {
      static const char hex[] = "0123456789abcdef";
      raw("\\u00");
      buf[len++] = hex[c >> 4];
      buf[len++] = hex[c & 15];
    } else {
      buf[len++] = char(c);
    }
  }
  raw("\"");
}

void Writer::num(int64_t v) {
  char digits[24];
  int n = 0;
  const bool neg = v < 0;
  uint64_t u = neg ? uint64_t(0) - uint64_t(v) : uint64_t(v);
  do {
    digits[n++] = char('0' + u % 10);
    u /= 10;
  } while (u);
  if (neg) digits[n++] = '-';
  while (n && len + 1 < cap) buf[len++] = digits[--n];
}

void Writer::key(const char* k) {
  str(k);
  raw(":");
}

const char* kind_name(uint8_t kind) {
  return kind == kRendezvous ? "rendezvous" : op_kind_name(static_cast<OpKind>(kind));
}

const char* state_name(uint8_t s) {
  return s == uint8_t(State::Completed) ? "completed" : s == uint8_t(State::Failed) ? "failed" : "started";
}

// Async-signal-safe: reads the ring without its lock (a torn entry is possible and harmless).
size_t format_dump(Writer& w, const char* reason) {
  Globals& g = globals();
  w.raw("{");
  w.key("version"), w.num(1), w.raw(",");
  w.key("rank"), w.num(g.rank), w.raw(",");
  w.key("world"), w.num(g.world), w.raw(",");
  w.key("host"), w.str(g.host), w.raw(",");
  w.key("pid"), w.num(getpid()), w.raw(",");
  w.key("time_ns"), w.num(wall_ns()), w.raw(",");
  w.key("reason"), w.str(reason), w.raw(",");
  w.key("failure"), w.str(g.first_failure), w.raw(",");
  w.key("capacity"), w.num(g.capacity), w.raw(",");
  w.key("groups"), w.raw("[");
  bool first = true;
  for (int i = 0; i < kMaxGroups; ++i) {
    const GroupSlot& s = g.groups[i];
    if (!s.used.load()) continue;
    if (!first) w.raw(",");
    first = false;
    w.raw("{");
    w.key("id"), w.num(i), w.raw(",");
    w.key("backend"), w.str(s.backend), w.raw(",");
    w.key("rank"), w.num(s.rank), w.raw(",");
    w.key("size"), w.num(s.size), w.raw(",");
    w.key("last_started"), w.num(int64_t(s.next_seq.load()) - 1), w.raw(",");
    w.key("last_completed"), w.num(int64_t(s.last_completed.load())), w.raw(",");
    w.key("suspect"), w.num(s.suspect.load()), w.raw(",");
    w.key("suspect_note"), w.str(s.note);
    w.raw("}");
  }
  w.raw("],");
  w.key("entries"), w.raw("[");
  const uint64_t last = g.next_id.load();
  const uint64_t cap = uint64_t(g.capacity);
  first = true;
  for (uint64_t id = last > cap ? last - cap : 1; id < last; ++id) {
    const Entry& e = g.ring[(id - 1) % cap];
    if (e.id.load() != id) continue;
    if (!first) w.raw(",");
    first = false;
    w.raw("{");
    w.key("group"), w.num(e.group), w.raw(",");
    w.key("seq"), w.num(int64_t(e.seq)), w.raw(",");
    w.key("op"), w.str(kind_name(e.kind)), w.raw(",");
    w.key("p2p"), w.raw(e.peer >= 0 ? "true" : "false"), w.raw(",");
    w.key("peer"), w.num(e.peer), w.raw(",");
    w.key("desc"), w.str(e.desc), w.raw(",");
    w.key("bytes"), w.num(e.bytes), w.raw(",");
    w.key("bytes_sent"), w.num(e.sent), w.raw(",");
    w.key("bytes_received"), w.num(e.received), w.raw(",");
    w.key("state"), w.str(state_name(e.state.load())), w.raw(",");
    w.key("start_ns"), w.num(e.start_ns), w.raw(",");
    w.key("end_ns"), w.num(e.end_ns.load());
    w.raw("}");
  }
  w.raw("]}\n");
  w.buf[w.len] = '\0';
  return w.len;
}

// Async-signal-safe: a fresh temporary file (O_EXCL, O_NOFOLLOW: never one planted there),
// renamed over the dump, which rename(2) replaces even if it is a planted symlink.
bool write_dump(const char* text, size_t n) {
  Globals& g = globals();
  if (!g.final_path[0]) return false;
  unlink(g.tmp_path);
  const int fd = open(g.tmp_path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  size_t done = 0;
  while (done < n) {
    const ssize_t k = write(fd, text + done, n - done);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    done += size_t(k);
  }
  close(fd);
  if (done != n) {
    unlink(g.tmp_path);
    return false;
  }
  return rename(g.tmp_path, g.final_path) == 0;
}

bool dump_from_signal(const char* reason) {
  Globals& g = globals();
  if (!g.dump_buf || g.dumping.test_and_set()) return false;  // a dump in progress: it stands
  Writer w{g.dump_buf, g.dump_cap, 0};
  const bool ok = write_dump(g.dump_buf, format_dump(w, reason));
  g.dumping.clear();
  return ok;
}

}  // namespace detail

using namespace detail;

int capacity() {
  static const int n = [] {
    const char* v = std::getenv("DDL_FLIGHT_RECORDER");
    if (!v || !*v) return 256;
    char* end = nullptr;
    const long k = std::strtol(v, &end, 10);
    return (end && *end == '\0' && k >= 0) ? int(std::min<long>(k, 1 << 20)) : 256;
  }();
  return n;
}

std::string host_name() {
  if (const char* h = std::getenv("DDL_HOST"); h && *h) return h;
  char name[256] = "";
  gethostname(name, sizeof name - 1);
  return name;
}

void detail::set_up(int rank, int world) {
  Globals& g = globals();
  std::lock_guard<std::mutex> lock(g.mu);
  if (g.capacity == 0 && capacity() > 0) {
    g.capacity = capacity();
    g.ring = new Entry[size_t(g.capacity)];
    g.dump_cap = size_t(g.capacity) * 640 + 16384;
    g.dump_buf = new char[g.dump_cap];
  }
  if (g.rank >= 0 || g.capacity == 0) return;
  g.rank = rank;
  g.world = world;
  copy_text(g.host, sizeof g.host, host_name().c_str());
  const char* dir = std::getenv("DDL_FLIGHT_DIR");
  if (dir && *dir) {
    const std::string base = std::string(dir) + "/rank" + std::to_string(rank);
    copy_text(g.final_path, sizeof g.final_path, (base + ".json").c_str());
    copy_text(g.tmp_path, sizeof g.tmp_path, (base + ".json.tmp").c_str());
    install_signal_handlers();
    // Tells ddlrun this process handles SIGUSR2 (whose default action would end it), and
    // which process it is: the worker ddlrun started may be a wrapper script around it.
    const int fd =
        open((base + ".armed").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
    if (fd >= 0) {
      const std::string pid = std::to_string(getpid()) + "\n";
      // Unwritten, the marker still arms the rank: ddlrun then signals the worker it started.
      [[maybe_unused]] const ssize_t written = write(fd, pid.data(), pid.size());
      close(fd);
    }
  }
}

void begin_process(int rank, int world) {
  set_up(rank, world);
  Globals& g = globals();
  if (g.rendezvous_id == 0)
    g.rendezvous_id = record(-1, kRendezvous, 0, "rendezvous of " + std::to_string(world) + " ranks", 0, -1);
}

uint64_t detail::record(int group, uint8_t kind, uint64_t seq, const std::string& desc, int64_t bytes, int peer) {
  Globals& g = globals();
  if (g.capacity == 0) return 0;
  std::lock_guard<std::mutex> lock(g.mu);
  const uint64_t id = g.next_id.load();
  Entry& e = g.ring[(id - 1) % uint64_t(g.capacity)];
  e.id.store(0);  // invalid while it is rewritten
  e.group = group;
  e.seq = seq;
  e.kind = kind;
  e.peer = peer;
  e.bytes = bytes;
  e.sent = e.received = -1;
  e.start_ns = wall_ns();
  e.end_ns.store(0);
  e.state.store(uint8_t(State::Started));
  copy_text(e.desc, sizeof e.desc, desc.c_str());
  e.id.store(id);
  g.next_id.store(id + 1);
  return id;
}

Entry* detail::find(uint64_t id) {
  Globals& g = globals();
  if (id == 0 || g.capacity == 0) return nullptr;
  Entry& e = g.ring[(id - 1) % uint64_t(g.capacity)];
  return e.id.load() == id ? &e : nullptr;
}

void detail::finish(uint64_t id, State s, int64_t sent, int64_t received) {
  std::lock_guard<std::mutex> lock(globals().mu);
  if (Entry* e = find(id)) {
    if (sent >= 0) e->sent = sent;
    if (received >= 0) e->received = received;
    e->end_ns.store(wall_ns());
    e->state.store(uint8_t(s));
  }
}

void detail::note_failure(const std::string& reason) {
  Globals& g = globals();
  std::lock_guard<std::mutex> lock(g.mu);
  if (!g.first_failure[0]) copy_text(g.first_failure, sizeof g.first_failure, reason.c_str());
}

void end_rendezvous(const std::string& error) {
  Globals& g = globals();
  if (g.capacity == 0) return;
  finish(g.rendezvous_id, error.empty() ? State::Completed : State::Failed, -1, -1);
  if (!error.empty()) {
    note_failure(error);
    dump("rendezvous failed: " + error);
  }
}

std::string to_json(const std::string& reason) {
  Globals& g = globals();
  if (g.capacity == 0) return "";
  std::string out(g.dump_cap, '\0');
  Writer w{out.data(), out.size(), 0};
  std::lock_guard<std::mutex> lock(g.mu);  // only a signal's dump reads the ring unlocked
  out.resize(format_dump(w, reason.c_str()));
  return out;
}

std::string dump(const std::string& reason) {
  Globals& g = globals();
  if (g.capacity == 0 || !g.final_path[0]) return "";
  std::lock_guard<std::mutex> one(g.dump_mu);
  // A signal's dump may hold the buffer for a moment: wait for it, bounded.
  bool mine = false;
  for (int i = 0; i < 200 && !(mine = !g.dumping.test_and_set()); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  if (!mine) return "";
  bool ok;
  {
    std::lock_guard<std::mutex> lock(g.mu);
    copy_text(g.reason, sizeof g.reason, reason.c_str());
    Writer w{g.dump_buf, g.dump_cap, 0};
    ok = write_dump(g.dump_buf, format_dump(w, g.reason));
  }
  g.dumping.clear();
  return ok ? std::string(g.final_path) : "";
}

void set_trace_path(const std::string& path) {
  Globals& g = globals();
  std::lock_guard<std::mutex> lock(g.mu);
  g.trace_path = path;
}

void detail::write_partial_trace() {
  Globals& g = globals();
  // One writer; a second caller (SIGTERM's thread while a failure writes) waits for it, bounded,
  // so the process does not end halfway through the file.
  // (try_lock in a loop, not a timed mutex: ThreadSanitizer does not follow timed locks.)
  std::unique_lock<std::mutex> writing(g.trace_mu, std::defer_lock);
  for (const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5); !writing.try_lock();) {
    if (std::chrono::steady_clock::now() > until) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::string path;
  {
    std::lock_guard<std::mutex> lock(g.mu);
    if (g.trace_path.empty() || g.trace_written) return;
    g.trace_written = true;
    path = g.trace_path;
  }
  // The merge needs every rank; a failed job has this rank's part only. See docs/dist.md,
  // "When a job hangs".
  const std::string stem = path.size() > 5 && path.ends_with(".json") ? path.substr(0, path.size() - 5) : path;
  try {
    trace::write_file(stem + ".rank" + std::to_string(std::max(g.rank, 0)) + ".partial.json");
  } catch (const std::exception&) {
  }
}

}  // namespace ddl::dist::flight
