// The shared-memory all-reduce (see shm_all_reduce.h): segment set-up through the store,
// futex barriers that notice dead peers, and the reduction itself.
#include "dist/shm_all_reduce.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <fstream>
#include <new>
#include <random>
#include <sstream>
#include <utility>

#include "tensor/dtype.h"
#include "tensor/error.h"

namespace ddl::dist::detail {

// Note [Shared-memory all-reduce]
// The segment holds a header and two buffer sets of `size` slots each. A tensor goes
// through in pieces of at most slot_bytes; for each piece, with set = round parity:
//   1. every rank copies its piece, less its own share, into its own slot; barrier
//   2. rank r owns share r (1/n of the piece): it folds share r of every slot (its own
//      from its tensor) in rank order 0..n-1 and writes the result to share r of its own
//      slot and of its tensor;
//                                                                         barrier
//   3. every rank copies the other shares from their owners' slots into its tensor.
// Each element is reduced once, by its owner, in a fixed order, so every rank ends with
// the same bits. Two sets make step 1 of the next piece safe without a third barrier: a
// slot is rewritten two pieces later, after a barrier that every reader of it has passed.
// A barrier is a per-rank generation word: arrive by storing it and waking its futex;
// wait by spinning briefly, then sleeping on each peer's word in 20 ms slices, checking
// between slices the deadline, the abort flag and whether the peer's process still lives.

namespace {

constexpr uint64_t kMagic = 0x316d68732d6c6464;  // "ddl-shm1"
constexpr int kMaxRanks = 64;
constexpr int kSpins = 4000;
constexpr Millis kSleepSlice{20};
constexpr size_t kPage = 4096;

// What a rank was asked to all-reduce; ranks compare before moving any data.
struct CallRecord {
  uint64_t tag;  // the group's collective sequence number
  int64_t numel;
  int32_t dtype;
  int32_t op;
};

struct alignas(64) RankState {
  std::atomic<uint32_t> arrived;  // barriers passed (generation)
  std::atomic<uint32_t> joined;   // 1 once pid and start_time are written
  std::atomic<uint32_t> left;     // 1 once this rank destroyed its group
  int32_t pid;
  uint64_t start_time;  // /proc/<pid>/stat field 22: tells a reused pid apart
  CallRecord calls[2];  // by call parity: one may be rewritten while peers read the other
};
static_assert(std::atomic<uint32_t>::is_always_lock_free);

}  // namespace

struct ShmHeader {
  uint64_t magic;
  uint64_t nonce;
  int32_t size;
  uint64_t slot_bytes;
  alignas(64) std::atomic<uint32_t> aborted;
  RankState ranks[kMaxRanks];
};

namespace {

size_t data_offset() { return (sizeof(ShmHeader) + kPage - 1) / kPage * kPage; }

// 4 MiB pieces for small groups, keeping the segment near 32 MiB for large ones (Docker's
// default /dev/shm is 64 MiB).
size_t slot_bytes_for(int n) {
  size_t s = (16u << 20) / static_cast<size_t>(n);
  s = std::clamp<size_t>(s, 256u << 10, 4u << 20);
  return s / kPage * kPage;
}

size_t segment_bytes(int n) { return data_offset() + 2 * static_cast<size_t>(n) * slot_bytes_for(n); }

struct ProcState {
  bool found = false;
  char state = '?';
  uint64_t start_time = 0;
};

ProcState read_proc(int pid) {
  ProcState p;
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(f, line)) return p;
  const auto close = line.rfind(')');  // the command name may hold spaces and parentheses
  if (close == std::string::npos) return p;
  std::istringstream in(line.substr(close + 1));
  std::string skip;
  in >> p.state;                            // field 3
  for (int i = 4; i < 22; ++i) in >> skip;  // fields 4..21
  in >> p.start_time;                       // field 22
  p.found = static_cast<bool>(in);
  return p;
}

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

void futex_wait(std::atomic<uint32_t>* word, uint32_t seen, Millis slice) {
  timespec ts{static_cast<time_t>(slice.count() / 1000), static_cast<long>(slice.count() % 1000) * 1000000};
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT, seen, &ts, nullptr, 0);
}

void futex_wake(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

std::string sys_error(const std::string& what) { return what + ": " + std::strerror(errno); }

// Maps `name` (creating it when `create`); returns "" or why not.
std::string map_segment(const std::string& name, size_t bytes, bool create, void** out) {
  int fd = shm_open(name.c_str(), create ? O_CREAT | O_EXCL | O_RDWR : O_RDWR, 0600);
  if (fd < 0) return sys_error("shm_open(" + name + ")");
  std::string err;
  // Reserving the pages now turns a full /dev/shm into an error here, not a SIGBUS later.
  if (create) {
    if (int e = posix_fallocate(fd, 0, static_cast<off_t>(bytes)); e != 0)
      err = "reserving " + std::to_string(bytes >> 20) + " MiB in /dev/shm: " + std::strerror(e);
  }
  if (err.empty()) {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED)
      err = sys_error("mmap(" + name + ")");
    else
      *out = p;
  }
  close(fd);
  if (!err.empty() && create) shm_unlink(name.c_str());
  return err;
}

// Publishes this rank's verdict and returns the first failing rank's, or "".
std::string agree(Store& store, const std::string& step, int rank, int size, const std::string& mine,
                  Millis timeout) {
  store.set("ddl-shm/" + step + "/" + std::to_string(rank), mine.empty() ? "ok" : "no " + mine);
  for (int q = 0; q < size; ++q) {
    std::string v = store.get("ddl-shm/" + step + "/" + std::to_string(q), timeout);
    if (v != "ok") return "rank " + std::to_string(q) + ": " + v.substr(v.find(' ') + 1);
  }
  return "";
}

}  // namespace

std::unique_ptr<ShmAllReduce> ShmAllReduce::connect(Store& store, int rank, int size, bool enabled,
                                                    Millis timeout, std::string* why) {
  const size_t bytes = segment_bytes(size);
  std::string err = !enabled ? "disabled (DDL_SHM=0)"
                    : size > kMaxRanks ? "more than " + std::to_string(kMaxRanks) + " ranks"
                                       : "";
  void* base = nullptr;
  struct Unmap {  // until the object owns the mapping (a store timeout throws)
    void*& base;
    size_t bytes;
    ~Unmap() {
      if (base) munmap(base, bytes);
    }
  } unmap{base, bytes};
  // The name goes once every rank has opened the segment or given up, or on any error:
  // mappings outlive it, and nothing is left in /dev/shm if a process dies.
  struct Unlink {
    std::string name;
    ~Unlink() {
      if (!name.empty()) shm_unlink(name.c_str());
    }
  } unlink_later;
  std::string name;
  uint64_t nonce = 0;
  if (rank == 0) {
    if (err.empty()) {
      nonce = std::random_device{}() * 0x100000001ull + std::random_device{}();
      std::ostringstream n;
      n << "/ddl-shm-" << getpid() << "-" << std::hex << nonce;
      name = n.str();
      err = map_segment(name, bytes, /*create=*/true, &base);
      if (err.empty()) unlink_later.name = name;
    }
    if (err.empty()) {
      auto* h = new (base) ShmHeader{};
      h->magic = kMagic;
      h->nonce = nonce;
      h->size = size;
      h->slot_bytes = slot_bytes_for(size);
    }
    std::ostringstream v;
    v << (err.empty() ? name : "-") << " " << nonce;
    store.set("ddl-shm/segment", v.str());
  }
  {
    std::istringstream v(store.get("ddl-shm/segment", timeout));
    v >> name >> nonce;
  }
  if (rank != 0 && err.empty()) {
    if (name == "-") err = "rank 0 could not create the segment";
    if (err.empty()) err = map_segment(name, bytes, /*create=*/false, &base);
    // A different host or /dev/shm could still hold a segment of that name: check ours.
    if (err.empty() && (static_cast<ShmHeader*>(base)->magic != kMagic ||
                        static_cast<ShmHeader*>(base)->nonce != nonce))
      err = "segment " + name + " is not rank 0's (another host or /dev/shm)";
  }
  if (err.empty()) {
    RankState& me = static_cast<ShmHeader*>(base)->ranks[rank];
    me.pid = getpid();
    me.start_time = read_proc(getpid()).start_time;
    me.joined.store(1, std::memory_order_release);
  }
  std::string first = agree(store, "mapped", rank, size, err, timeout);
  if (!unlink_later.name.empty()) shm_unlink(std::exchange(unlink_later.name, "").c_str());
  // Death detection reads /proc/<pid>: every peer's process must be visible from here.
  if (first.empty()) {
    auto* h = static_cast<ShmHeader*>(base);
    for (int q = 0; q < size && err.empty(); ++q) {
      const RankState& r = h->ranks[q];
      ProcState p = read_proc(r.pid);
      if (r.joined.load(std::memory_order_acquire) != 1 || !p.found || p.start_time != r.start_time)
        err = "cannot see rank " + std::to_string(q) + "'s process (pid namespaces differ?)";
    }
    first = agree(store, "visible", rank, size, err, timeout);
  }
  if (!first.empty()) {
    *why = first;
    return nullptr;
  }
  return std::unique_ptr<ShmAllReduce>(
      new ShmAllReduce(std::exchange(base, nullptr), bytes, rank, size, slot_bytes_for(size)));
}

ShmAllReduce::ShmAllReduce(void* base, size_t bytes, int rank, int size, size_t slot_bytes)
    : base_(base), bytes_(bytes), header_(static_cast<ShmHeader*>(base)),
      data_(static_cast<char*>(base) + data_offset()), rank_(rank), size_(size), slot_bytes_(slot_bytes) {}

ShmAllReduce::~ShmAllReduce() {
  // A peer waiting for this rank at a barrier must not wait out its timeout.
  auto& me = header_->ranks[rank_];
  me.left.store(1, std::memory_order_release);
  futex_wake(&me.arrived);
  munmap(base_, bytes_);
}

char* ShmAllReduce::slot(int set, int rank) const {
  return data_ + (static_cast<size_t>(set) * size_ + rank) * slot_bytes_;
}

void ShmAllReduce::abort() {
  uint32_t none = 0;
  header_->aborted.compare_exchange_strong(none, static_cast<uint32_t>(rank_ + 1));
  for (int q = 0; q < size_; ++q) futex_wake(&header_->ranks[q].arrived);
}

bool ShmAllReduce::peer_alive(int peer) const {
  const RankState& r = header_->ranks[peer];
  ProcState p = read_proc(r.pid);
  return p.found && p.start_time == r.start_time && p.state != 'Z' && p.state != 'X';
}

void ShmAllReduce::barrier(Clock::time_point deadline) {
  const uint32_t gen = ++gen_;
  auto& mine = header_->ranks[rank_].arrived;
  mine.store(gen, std::memory_order_release);
  futex_wake(&mine);
  for (int q = 0; q < size_; ++q)
    if (q != rank_) wait_for(q, gen, deadline);
}

void ShmAllReduce::wait_for(int peer, uint32_t gen, Clock::time_point deadline) {
  const RankState& state = header_->ranks[peer];
  auto& word = header_->ranks[peer].arrived;
  auto who = [&] { return "rank " + std::to_string(peer) + " (pid " + std::to_string(state.pid) + ")"; };
  for (int spin = 0;; ++spin) {
    const uint32_t seen = word.load(std::memory_order_acquire);
    if (static_cast<int32_t>(seen - gen) >= 0) return;
    if (spin < kSpins) {
      cpu_relax();
      continue;
    }
    if (uint32_t by = header_->aborted.load(std::memory_order_acquire))
      throw ShmError("shared-memory all-reduce: rank " + std::to_string(by - 1) + " aborted it");
    if (Clock::now() >= deadline) throw ShmError("shared-memory all-reduce: timed out waiting for " + who());
    if (state.left.load(std::memory_order_acquire))
      throw ShmError("shared-memory all-reduce: " + who() + " destroyed its process group");
    if (!peer_alive(peer)) throw ShmError("shared-memory all-reduce: " + who() + " exited");
    futex_wait(&word, seen, kSleepSlice);
  }
}

namespace {

// own[i] = shared[i] = in[0][i] f in[1][i] f ... f in[n-1][i], folded in rank order.
// Blocked so the partial result stays in L1; an input may alias `own`.
template <typename T, typename F>
void fold(const char* const* in, int n, int64_t count, T* shared, T* own, F f) {
  constexpr int64_t kBlock = 2048;
  alignas(64) T acc[kBlock];
  for (int64_t b = 0; b < count; b += kBlock) {
    const int64_t m = std::min(kBlock, count - b);
    const T* x = reinterpret_cast<const T*>(in[0]) + b;
    const T* y = reinterpret_cast<const T*>(in[1]) + b;
    for (int64_t i = 0; i < m; ++i) acc[i] = f(x[i], y[i]);
    for (int q = 2; q < n; ++q) {
      const T* z = reinterpret_cast<const T*>(in[q]) + b;
      for (int64_t i = 0; i < m; ++i) acc[i] = f(acc[i], z[i]);
    }
    std::memcpy(shared + b, acc, m * sizeof(T));
    std::memcpy(own + b, acc, m * sizeof(T));
  }
}

template <typename T>
void fold_op(ReduceOp op, const char* const* in, int n, int64_t count, char* shared, char* own) {
  T* s = reinterpret_cast<T*>(shared);
  T* o = reinterpret_cast<T*>(own);
  switch (op) {
    case ReduceOp::Max: return fold<T>(in, n, count, s, o, [](T a, T b) { return std::max(a, b); });
    case ReduceOp::Min: return fold<T>(in, n, count, s, o, [](T a, T b) { return std::min(a, b); });
    default: return fold<T>(in, n, count, s, o, [](T a, T b) { return T(a + b); });  // Avg divides later
  }
}

}  // namespace

Traffic ShmAllReduce::all_reduce(const Tensor& t, ReduceOp op, uint64_t tag, Millis timeout) {
  const auto deadline = Clock::now() + timeout;
  // An unsupported dtype must fail here, on every rank alike, not between two barriers.
  DDL_DISPATCH_NUMERIC(t.dtype(), "all_reduce", [&] { (void)sizeof(scalar_t); });
  try {
    check_same_call(t, op, tag, deadline);
    return move_pieces(t, op, deadline);
  } catch (const ShmError&) {
    throw;
  } catch (const std::exception& e) {  // the peers are mid-protocol: fail them too
    abort();
    throw ShmError(std::string("shared-memory all-reduce: ") + e.what());
  }
}

// Without this, ranks that disagree on the size would each run their own number of pieces
// and pair barriers of different calls: garbage, or a timeout much later.
void ShmAllReduce::check_same_call(const Tensor& t, ReduceOp op, uint64_t tag, Clock::time_point deadline) {
  const int parity = static_cast<int>(calls_++ & 1);
  header_->ranks[rank_].calls[parity] =
      CallRecord{tag, t.numel(), static_cast<int32_t>(t.dtype()), static_cast<int32_t>(op)};
  barrier(deadline);
  auto describe = [](const CallRecord& c) {
    return "#" + std::to_string(c.tag) + " all_reduce(" + dtype_name(static_cast<DType>(c.dtype)) + " x " +
           std::to_string(c.numel) + ", " + reduce_op_name(static_cast<ReduceOp>(c.op)) + ")";
  };
  const std::string mine = describe(header_->ranks[rank_].calls[parity]);
  std::string all;
  bool same = true;
  for (int q = 0; q < size_; ++q) {
    const std::string theirs = describe(header_->ranks[q].calls[parity]);
    same = same && theirs == mine;
    all += "; rank " + std::to_string(q) + ": " + theirs;
  }
  if (!same) throw ShmError("shared-memory all-reduce: ranks called different all-reduces" + all);
}

Traffic ShmAllReduce::move_pieces(const Tensor& t, ReduceOp op, Clock::time_point deadline) {
  const int64_t es = static_cast<int64_t>(t.element_size());
  const int64_t numel = t.numel();
  const int64_t per_piece = static_cast<int64_t>(slot_bytes_) / es;
  const int64_t align = std::max<int64_t>(1, 64 / es);  // shares start on cache lines
  char* data = static_cast<char*>(t.raw_data());
  std::vector<const char*> in(size_);
  Traffic traffic;
  for (int64_t off = 0; off < numel; off += per_piece, ++round_) {
    const int set = static_cast<int>(round_ & 1);
    const int64_t len = std::min(per_piece, numel - off);
    const int64_t share = ((len + size_ - 1) / size_ + align - 1) / align * align;
    auto begin = [&](int q) { return std::min<int64_t>(q * share, len); };
    auto end = [&](int q) { return std::min<int64_t>((q + 1) * share, len); };
    char* piece = data + off * es;

    // Peers read only the shares they own from our slot; ours we read from the tensor.
    const int64_t s = begin(rank_), e = end(rank_);
    std::memcpy(slot(set, rank_), piece, s * es);
    std::memcpy(slot(set, rank_) + e * es, piece + e * es, (len - e) * es);
    barrier(deadline);
    if (e > s) {
      for (int q = 0; q < size_; ++q) in[q] = q == rank_ ? piece + s * es : slot(set, q) + s * es;
      char* shared = slot(set, rank_) + s * es;
      DDL_DISPATCH_NUMERIC(t.dtype(), "all_reduce", [&] { fold_op<scalar_t>(op, in.data(), size_, e - s, shared, piece + s * es); });
    }
    barrier(deadline);
    for (int q = 0; q < size_; ++q)
      if (q != rank_ && end(q) > begin(q))
        std::memcpy(piece + begin(q) * es, slot(set, q) + begin(q) * es, (end(q) - begin(q)) * es);
    // Counted as a transport would: shares of ours that peers read, shares of theirs we read.
    const int64_t others = (len - (e - s)) * es, own = (e - s) * es * (size_ - 1);
    traffic.sent += own + others;
    traffic.received += own + others;
  }
  if (op == ReduceOp::Avg) {
    DDL_DISPATCH_FLOAT(t.dtype(), "all_reduce(avg)", [&] {
      auto* p = t.data<scalar_t>();
      for (int64_t i = 0; i < numel; ++i) p[i] = p[i] / scalar_t(size_);
    });
  }
  return traffic;
}

}  // namespace ddl::dist::detail
