// What each collective algorithm puts on the wire, per rank, in payload bytes. These
// replay the send/recv schedules of Gloo's algorithms (and of our ring reduce-scatter)
// without moving data, so the byte counters report what the transport really carried,
// not an idealised formula. See Note [Byte counters] in docs/dist.md.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ddl::dist::detail {

struct Traffic {
  int64_t sent = 0;
  int64_t received = 0;
};

// Gloo's segmented ring all-reduce: reduce-scatter then all-gather, ≈ 2(n-1)/n · bytes each way.
Traffic ring_allreduce_traffic(size_t bytes, size_t elem, int n, int rank);
// Gloo's ring reduce: the reduce-scatter half, then every chunk goes to the root.
Traffic ring_reduce_traffic(size_t bytes, size_t elem, int n, int rank, int root);
// Gloo's binomial-tree broadcast: each non-root receives once; senders send once per child.
Traffic tree_broadcast_traffic(size_t bytes, int n, int rank, int root);
// Ring all-gather: (n-1) · in_bytes each way.
Traffic ring_allgather_traffic(size_t in_bytes, int n);
// Gather/scatter: direct sends between the root and each rank (chunk = one rank's part).
Traffic gather_traffic(size_t chunk, int n, int rank, int root);
Traffic scatter_traffic(size_t chunk, int n, int rank, int root);
// All-to-all and our ring reduce-scatter: (n-1) chunks each way.
Traffic pairwise_traffic(size_t chunk, int n);

}  // namespace ddl::dist::detail
