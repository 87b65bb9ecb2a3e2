// Replays of the collective schedules for the byte counters (see traffic.h). The segment
// arithmetic mirrors gloo/allreduce.cc and gloo/reduce.cc of the 2022 snapshot.
#include <sys/types.h>

#include <algorithm>

#include <ddl/dist/traffic.h>

namespace ddl::dist::detail {
namespace {

constexpr size_t kMaxSegmentBytes = 1 << 20;  // Gloo's AllreduceOptions::kMaxSegmentSize

size_t round_up(size_t v, size_t m) { return (v + m - 1) / m * m; }

struct Segments {
  size_t bytes, count, per_rank;
};

Segments ring_segments(size_t total, size_t elem, int n) {
  const size_t max_seg = elem * (kMaxSegmentBytes / elem);
  const size_t seg = round_up(std::min((total + (n * 2 - 1)) / (n * 2), max_seg), elem);
  const size_t count = round_up(std::max((total + seg - 1) / seg, size_t(n) * 2), size_t(n));
  return {seg, count, count / n};
}

ssize_t clamp_len(const Segments& s, size_t total, size_t offset) {
  return std::min<ssize_t>(ssize_t(s.bytes), ssize_t(total) - ssize_t(offset));
}

// Gloo issues a send and a receive on iterations i < count - per_rank of each
// ring phase (its loops run 2 more iterations only to wait for the last ones).
size_t ring_sends(const Segments& s) { return s.count - s.per_rank; }

// The reduce-scatter phase shared by all-reduce and reduce.
void reduce_scatter_phase(const Segments& s, size_t total, int n, int rank, Traffic& t) {
  const size_t span = s.count * s.bytes;
  for (size_t i = 0; i < ring_sends(s); ++i) {
    size_t send_off = (((rank + 1) * s.per_rank + i) * s.bytes) % span;
    size_t recv_off = (((rank + 2) * s.per_rank + i) * s.bytes) % span;
    t.sent += std::max<ssize_t>(0, clamp_len(s, total, send_off));
    t.received += std::max<ssize_t>(0, clamp_len(s, total, recv_off));
  }
}

}  // namespace

Traffic ring_allreduce_traffic(size_t bytes, size_t elem, int n, int rank) {
  Traffic t;
  if (n == 1 || bytes == 0) return t;
  Segments s = ring_segments(bytes, elem, n);
  reduce_scatter_phase(s, bytes, n, rank, t);
  const size_t span = s.count * s.bytes;
  for (size_t i = 0; i < ring_sends(s); ++i) {
    size_t send_off = ((rank * s.per_rank + i) * s.bytes) % span;
    size_t recv_off = (((rank + 1) * s.per_rank + i) * s.bytes) % span;
    t.sent += std::max<ssize_t>(0, clamp_len(s, bytes, send_off));
    t.received += std::max<ssize_t>(0, clamp_len(s, bytes, recv_off));
  }
  return t;
}

Traffic ring_reduce_traffic(size_t bytes, size_t elem, int n, int rank, int root) {
  Traffic t;
  if (n == 1 || bytes == 0) return t;
  Segments s = ring_segments(bytes, elem, n);
  reduce_scatter_phase(s, bytes, n, rank, t);
  const size_t chunk = s.per_rank * s.bytes;
  auto chunk_len = [&](int r) {
    return size_t(std::max<ssize_t>(0, std::min<ssize_t>(chunk, ssize_t(bytes) - ssize_t(r * chunk))));
  };
  if (rank == root) {
    for (int r = 0; r < n; ++r)
      if (r != rank) t.received += chunk_len(r);
  } else {
    t.sent += chunk_len(rank);
  }
  return t;
}

Traffic tree_broadcast_traffic(size_t bytes, int n, int rank, int root) {
  Traffic t;
  const size_t vrank = (rank + n - root) % n;
  size_t dim = 0;
  while ((size_t(1) << dim) < size_t(n)) ++dim;
  size_t mask = (size_t(1) << dim) - 1;
  for (size_t i = 0; i < dim; ++i) {
    mask ^= size_t(1) << i;
    if ((vrank & mask) != 0) continue;
    size_t vpeer = vrank ^ (size_t(1) << i);
    if (vpeer >= size_t(n)) continue;
    if ((vrank & (size_t(1) << i)) == 0)
      t.sent += bytes;
    else
      t.received += bytes;
  }
  return t;
}

Traffic ring_allgather_traffic(size_t in_bytes, int n) {
  return {int64_t(in_bytes) * (n - 1), int64_t(in_bytes) * (n - 1)};
}

Traffic gather_traffic(size_t chunk, int n, int rank, int root) {
  if (rank == root) return {0, int64_t(chunk) * (n - 1)};
  return {int64_t(chunk), 0};
}

Traffic scatter_traffic(size_t chunk, int n, int rank, int root) {
  if (rank == root) return {int64_t(chunk) * (n - 1), 0};
  return {0, int64_t(chunk)};
}

Traffic pairwise_traffic(size_t chunk, int n) { return {int64_t(chunk) * (n - 1), int64_t(chunk) * (n - 1)}; }

}  // namespace ddl::dist::detail
