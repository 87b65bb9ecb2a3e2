// ring: ring all-reduce of the flattened gradients, written by hand on send/recv
// (Patarasuk and Yuan, JPDC 2009), then divided by the world size. Slower than Gloo's own ring
// (no overlap with backward, one extra copy in and out of the flat buffer) but every
// byte it moves is visible here. See Note [Ring all-reduce].
//
// Note [Ring all-reduce]
// The ranks form a ring: rank r receives only from its left neighbour r-1 and sends only
// to its right neighbour r+1 (mod N). The buffer of B bytes is cut into N chunks.
//
// Lap 1, reduce-scatter (N-1 steps): in the first step rank r sends its chunk r to the
// right; in every later step it sends on the chunk it has just added to. Whatever
// arrives from the left is added to the rank's own copy, so a chunk picks up one more
// rank's contribution at every hop, and after N-1 hops rank r holds the complete sum
// of chunk r+1. Lap 2, all-gather (N-1 steps): the finished chunks travel round
// once more and overwrite the partial copies. N = 3, ranks hold a, b, c, S = a+b+c:
//
//            chunk:  0       1       2
//   start   rank 0:  a0      a1      a2          ring: 0 -> 1 -> 2 -> 0
//           rank 1:  b0      b1      b2
//           rank 2:  c0      c1      c2
//   step 1  rank 0:  a0      a1      a2+c2       (rank r sent chunk r to r+1,
//           rank 1:  a0+b0   b1      b2           which added it to its copy)
//           rank 2:  c0      b1+c1   c2
//   step 2  rank 0:  a0      S1      a2+c2       (rank r sent the chunk it
//           rank 1:  a0+b0   b1      S2           finished adding to in step 1)
//           rank 2:  S0      b1+c1   c2
//   steps 3-4 (all-gather): rank 0 sends S1 on, rank 1 S2, rank 2 S0; each finished
//           chunk makes N-1 = 2 hops and overwrites the partial sums on its way
//           every rank:  S0      S1      S2
//
// Traffic: every step each rank sends one chunk (B/N bytes) and receives one, so over
// the 2(N-1) steps each rank sends and receives 2(N-1)/N·B bytes: less than 2·B however
// many ranks there are. That is bandwidth-optimal: a rank must receive the other ranks'
// contributions to the part of the sum it computes and the finished values of the part
// it does not, and Patarasuk & Yuan (JPDC 2009) prove no
// algorithm moves less than 2(N-1)/N·B per rank. A hub (gather-scatter, param-server)
// moves (N-1)·B through rank 0 instead. The price is latency: 2(N-1) hops in sequence,
// which is why small tensors are better bucketed (ddp) than ring-reduced one by one.
//
// Pipelining: each chunk travels as sub-chunks of kRingSubChunkBytes. A rank forwards
// sub-chunk j (adds it, then sends it on as the next step's data) as soon as it arrives,
// while sub-chunk j+1 is still on the wire, so the steps overlap instead of each one
// waiting for a whole chunk.
//
// No deadlock: a blocking send followed by a recv (the naive first version) can hang,
// since with a rendezvous transport every rank sits in its send waiting for its right
// neighbour, which sits in its own send. Here every send and receive is asynchronous, and
// a rank only ever waits for data its left neighbour can send without waiting on anyone.
//
// Note [Ring receives first]
// Gloo sends a message only once the receiver has announced the matching receive, and that
// announcement leaves the receiver the way its own outgoing data does (with two ranks on
// the same TCP connection, with more through the same host link and its queue). A rank that
// posts a step's sends before its receives lets megabytes of its data go first, its
// announcement queues behind them, and its neighbour's data for that step cannot start
// until they have drained: a real link then carries one direction at a time and the ring
// takes twice as long (measured over a 100 Mbit/s link; bench/RESULTS.md). Here each
// rank keeps the receives of the next kRingStepsAhead steps posted before it forwards any
// data, so every announcement is on the wire before the data it unblocks is needed.
// Receiving early into a chunk is safe: the finished chunk that lap 2 brings can only exist
// after this rank's own contribution to it has reached its right neighbour, so nothing of
// this rank still reads that memory when the data lands (causality, not a wait).
#include <algorithm>
#include <climits>

#include <ddl/dist/sync/builtins.h>
#include <ddl/dist/sync/ring.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/trace/trace.h>

namespace ddl::dist {

namespace {
constexpr int kRingTag = 1000;  // p2p tags kRingTag.. belong to ring_all_reduce
// Steps whose receives stay posted ahead of the data (see Note [Ring receives first]).
constexpr int kRingStepsAhead = 2;

int mod(int a, int n) { return ((a % n) + n) % n; }
}  // namespace

void ring_all_reduce(ProcessGroup& group, const Tensor& flat, int64_t sub_chunk_elems) {
  DDL_CHECK(flat.defined() && flat.dim() == 1 && flat.is_contiguous() && is_floating(flat.dtype()),
            "ring_all_reduce: expected a contiguous 1-D floating tensor, got ", describe(flat));
  const int world = group.size(), rank = group.rank();
  const int64_t n = flat.numel();
  if (world == 1 || n == 0) return;
  if (sub_chunk_elems <= 0) sub_chunk_elems = std::max<int64_t>(1, kRingSubChunkBytes / int64_t(flat.element_size()));
  const int right = mod(rank + 1, world), left = mod(rank - 1, world);

  // Chunk c is [c·n/N, (c+1)·n/N): sizes differ by at most one; some are empty when n < N.
  auto chunk = [&](int c) {
    c = mod(c, world);
    const int64_t begin = c * n / world, end = (c + 1) * n / world;
    return flat.narrow(0, begin, end - begin);
  };
  // A chunk's sub-chunks; the same split on every rank, since it depends only on the chunk.
  auto pieces = [&](const Tensor& t) { return detail::pieces_of(t, sub_chunk_elems); };
  const int64_t max_pieces = ((n + world - 1) / world + sub_chunk_elems - 1) / sub_chunk_elems;
  const int steps = 2 * (world - 1);
  DDL_CHECK(kRingTag + int64_t(steps) * max_pieces < INT_MAX, "ring_all_reduce: ", describe(flat), " in sub-chunks of ",
            sub_chunk_elems, " elements needs too many messages; use larger sub-chunks");
  auto tag = [&](int step, size_t piece) { return kRingTag + static_cast<int>(step * max_pieces + int64_t(piece)); };

  // sends[k] / recvs[k]: the transfers that carry step k's data; in[k]: where it lands.
  std::vector<std::vector<std::shared_ptr<Work>>> sends(steps), recvs(steps);
  std::vector<std::vector<Tensor>> in(steps);
  // Receives posted ahead of the data: over Gloo (CPU tensors) see Note [Ring receives
  // first]. NCCL runs a rank's receives from the left and sends to the right on one stream
  // (Note [NCCL point-to-point lanes]), where a receive queued early would hold up the send
  // before it and, from four ranks on, close a cycle: there each step posts its own.
  const int ahead = flat.device().is_cpu() ? kRingStepsAhead : 0;
  // Lap 1 receives into scratch slots (then adds into place); a slot is reused only by a
  // step posted after the step that read it.
  const int slots = std::min(world - 1, ahead + 1);
  const int64_t chunk_max = (n + world - 1) / world;
  const Tensor scratch = empty({slots, chunk_max}, TensorOptions(flat.dtype(), flat.device()));
  // The chunk that arrives from the left at step k: r-k-1 in lap 1, then r, r-1, ... in lap 2.
  auto arriving = [&](int k) { return chunk(k < world - 1 ? rank - k - 1 : rank - (k - (world - 1))); };
  const auto post_recvs = [&](int k) {
    if (k >= steps) return;
    const Tensor dst = arriving(k);
    in[k] = pieces(k < world - 1 ? scratch.select(0, k % slots).narrow(0, 0, dst.numel()) : dst);
    for (size_t j = 0; j < in[k].size(); ++j) recvs[k].push_back(group.recv_async(in[k][j], left, tag(k, j)));
  };

  for (int k = 0; k < ahead; ++k) post_recvs(k);
  const auto first = pieces(chunk(rank));
  for (size_t j = 0; j < first.size(); ++j) sends[0].push_back(group.send_async(first[j], right, tag(0, j)));
  for (int k = 0; k < steps; ++k) {
    post_recvs(k + ahead);
    const bool reducing = k < world - 1;
    trace::Span span(reducing ? "ring reduce-scatter step" : "ring all-gather step", "sync",
                     {{"step", k},
                      {"bytes", trace::enabled() ? static_cast<int64_t>(arriving(k).nbytes()) : 0},
                      {"from_rank", left}});
    const auto dst_pieces = pieces(arriving(k));
    for (size_t j = 0; j < recvs[k].size(); ++j) {
      recvs[k][j]->wait();
      if (reducing) dst_pieces[j].add_(in[k][j]);
      // What just arrived is exactly what the right neighbour needs in the next step.
      if (k + 1 < steps) sends[k + 1].push_back(group.send_async(dst_pieces[j], right, tag(k + 1, j)));
    }
  }
  DDL_TRACE_SPAN("ring wait for sends", "sync");
  for (auto& step_sends : sends)
    for (auto& w : step_sends) w->wait();
}

namespace detail {
namespace {

class RingSync final : public SyncStrategy {
 public:
  RingSync(ModelPtr model, GroupPtr group) : model_(std::move(model)), group_(std::move(group)) {
    broadcast_state(*model_, *group_);
    params_ = trainable_parameters(*model_);
  }
  std::string name() const override { return "ring"; }
  nn::Module& model() override { return *model_; }

  // All gradients in one flat buffer (one per dtype), one ring all-reduce, divide by N.
  // last_comm_ms includes the additions the ring does on the way: they are part of it.
  void after_backward() override {
    comm_.after_backward_ms = 0;
    DDL_TRACE_SPAN("ring sync gradients", "sync");
    coalesced(gradients_of(params_), [&](const Tensor& flat) {
      trace::Span span("ring all_reduce", "sync", {{"bytes", static_cast<int64_t>(flat.nbytes())}});
      comm_.after_backward_ms += timed_ms([&] { ring_all_reduce(*group_, flat); });
      flat.div_(group_->size());
    });
  }

 private:
  ModelPtr model_;
  GroupPtr group_;
  std::vector<Variable> params_;
};

}  // namespace

std::unique_ptr<SyncStrategy> make_ring_sync(ModelPtr model, GroupPtr group) {
  return std::make_unique<RingSync>(std::move(model), std::move(group));
}

}  // namespace detail
}  // namespace ddl::dist
