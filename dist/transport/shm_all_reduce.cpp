// The shared-memory all-reduce (see shm_all_reduce.h): futex barriers that notice dead
// or departed peers, the same-call check, and the reduction itself. Setting up the
// segment is in shm_segment.cpp.
#include <sys/mman.h>

#include <algorithm>
#include <cstring>

#include <ddl/base/error.h>
#include <ddl/dist/reduce_dtypes.h>
#include <ddl/dist/transport/shm_all_reduce.h>
#include <ddl/dist/transport/shm_segment.h>
#include <ddl/tensor/core/dtype.h>

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
// between slices the deadline, the abort flag, the peer's "left" flag and whether its
// process still lives. Each call starts with one more barrier, after which the ranks
// compare what they were asked (CallRecord, double-buffered by call parity like the slots).

namespace {

constexpr int kSpins = 4000;
constexpr Millis kSleepSlice{20};

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace

ShmAllReduce::ShmAllReduce(void* base, size_t bytes, int rank, int size, size_t slot_bytes)
    : base_(base),
      bytes_(bytes),
      header_(static_cast<ShmHeader*>(base)),
      data_(static_cast<char*>(base) + shm_data_offset()),
      rank_(rank),
      size_(size),
      slot_bytes_(slot_bytes) {}

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
  ProcState p = read_proc_stat(r.pid);
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
    case ReduceOp::Max:
      return fold<T>(in, n, count, s, o, [](T a, T b) { return std::max(a, b); });
    case ReduceOp::Min:
      return fold<T>(in, n, count, s, o, [](T a, T b) { return std::min(a, b); });
    default:
      return fold<T>(in, n, count, s, o, [](T a, T b) { return T(a + b); });  // Avg divides later
  }
}

}  // namespace

Traffic ShmAllReduce::all_reduce(const Tensor& t, ReduceOp op, uint64_t tag, Millis timeout) {
  const auto deadline = Clock::now() + timeout;
  // An unsupported dtype must fail here, on every rank alike, not between two barriers.
  dispatch_reducible(t.dtype(), "all_reduce", [](auto) {});
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
  const CallRecord& mine = header_->ranks[rank_].calls[parity];
  auto same_as_mine = [&](const CallRecord& c) {
    return c.tag == mine.tag && c.numel == mine.numel && c.dtype == mine.dtype && c.op == mine.op;
  };
  bool same = true;
  for (int q = 0; q < size_; ++q) same = same && same_as_mine(header_->ranks[q].calls[parity]);
  if (same) return;  // the common case formats nothing
  std::string all;
  for (int q = 0; q < size_; ++q) {
    const CallRecord& c = header_->ranks[q].calls[parity];
    all += "; rank " + std::to_string(q) + ": #" + std::to_string(c.tag) + " all_reduce(" +
           dtype_name(static_cast<DType>(c.dtype)) + " x " + std::to_string(c.numel) + ", " +
           reduce_op_name(static_cast<ReduceOp>(c.op)) + ")";
  }
  throw ShmError("shared-memory all-reduce: ranks called different all-reduces" + all);
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
      dispatch_reducible(t.dtype(), "all_reduce", [&](auto tag) {
        fold_op<decltype(tag)>(op, in.data(), size_, e - s, shared, piece + s * es);
      });
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
