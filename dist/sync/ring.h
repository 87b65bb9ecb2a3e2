// The hand-written ring all-reduce (see Note [Ring all-reduce] in ring.cpp), public so
// that tests and benchmarks can call it on any buffer. The `ring` strategy uses it on
// the flattened gradients.
#pragma once

#include <cstdint>

#include <ddl/dist/process_group.h>

namespace ddl::dist {

// Sub-chunks of this many bytes travel independently, so a rank forwards the first part
// of a chunk while the rest is still arriving (pipelining).
inline constexpr int64_t kRingSubChunkBytes = 1 << 20;

// flat ← sum over all ranks of flat, in place, using only send/recv between ring
// neighbours. Requires a contiguous 1-D floating tensor of the same numel on every
// rank (any numel, also smaller than the world size). Every rank ends with the same bits.
// sub_chunk_elems ≤ 0: kRingSubChunkBytes worth of elements.
void ring_all_reduce(ProcessGroup& group, const Tensor& flat, int64_t sub_chunk_elems = 0);

}  // namespace ddl::dist
