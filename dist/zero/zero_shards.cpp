// ZeroShards: the partition (Note [ZeRO partition]), the gradient reduce-scatter (after
// backward for stage 1, from gradient hooks during backward for stage 2) and the
// parameter all-gather. Moving optimizer state between forms is in zero_state.cpp.
#include <algorithm>

#include <ddl/autograd/grad_mode.h>
#include <ddl/dist/zero/zero_shards.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/trace/trace.h>

namespace ddl::dist::detail {

namespace {
// Reduce-scatters in flight at once: each holds a bucket-sized buffer, so this bounds the
// gradient memory beyond the shard at one bucket (one reduce-scatter overlaps backward).
constexpr size_t kMaxInFlight = 1;
}  // namespace

ZeroShards::ZeroShards(std::vector<std::vector<Variable>> groups, std::shared_ptr<ProcessGroup> group, int stage,
                       int64_t bucket_bytes)
    : group_(std::move(group)), stage_(stage), num_groups_(groups.size()) {
  DDL_CHECK(group_ != nullptr, "ZeroRedundancyOptimizer: a process group is required");
  DDL_CHECK(stage == 1 || stage == 2, "ZeroRedundancyOptimizer: stage must be 1 or 2, got ", stage,
            " (stage 3 shards the parameters too: use FSDP)");
  DDL_CHECK(bucket_bytes > 0, "ZeroRedundancyOptimizer: bucket_bytes must be positive, got ", bucket_bytes);
  for (size_t g = 0; g < groups.size(); ++g)
    for (Variable& p : groups[g]) {
      DDL_CHECK(p.defined() && p.is_leaf(), "ZeroRedundancyOptimizer: parameters must be defined leaves");
      params_.push_back(p);
      group_of_.push_back(static_cast<int>(g));
    }
  DDL_CHECK(!params_.empty(), "ZeroRedundancyOptimizer: no parameters to shard");
  const Tensor& first = params_.front().data();
  for (const Variable& p : params_) {
    DDL_CHECK(p.dtype() == first.dtype() && p.device() == first.device(),
              "ZeroRedundancyOptimizer: every parameter must share one dtype and device (one flat buffer), got ",
              p.dtype(), " on ", p.device().str(), " beside ", first.dtype(), " on ", first.device().str());
    DDL_CHECK(is_floating(p.dtype()), "ZeroRedundancyOptimizer: parameters must be floating, got ", p.dtype());
    DDL_CHECK(p.data().is_contiguous(), "ZeroRedundancyOptimizer: parameter of shape ", p.shape(),
              " is not contiguous: its pieces must be views of it");
  }
  // The buckets (Note [ZeRO partition]).
  const int world = group_->size(), rank = group_->rank();
  const int64_t cap = std::max<int64_t>(1, bucket_bytes / static_cast<int64_t>(first.element_size()));
  bucket_of_.assign(params_.size(), 0);
  for (size_t j = params_.size(); j-- > 0;) {
    const int64_t n = params_[j].numel();
    const bool fresh = buckets_.empty() || buckets_.back().group != group_of_[j] || buckets_.back().numel + n > cap;
    if (fresh && (buckets_.empty() || buckets_.back().numel > 0)) buckets_.push_back({.group = group_of_[j]});
    ZeroBucket& b = buckets_.back();
    b.group = group_of_[j];
    b.params.push_back(j);
    b.offsets.push_back(b.numel);
    b.numel += n;
    bucket_of_[j] = buckets_.size() - 1;
  }
  int64_t shard_numel = 0;
  for (ZeroBucket& b : buckets_) {
    b.chunk = (b.numel + world - 1) / world;
    b.shard_offset = shard_numel;
    shard_numel += b.chunk;
  }
  options_ = first.options();
  if (stage_ == 2) shard_grad_ = zeros({shard_numel}, options_);
  // This rank's pieces: its chunk of each bucket cut at parameter boundaries.
  for (size_t bi = 0; bi < buckets_.size(); ++bi) {
    const ZeroBucket& b = buckets_[bi];
    const int64_t lo = rank * b.chunk, hi = std::min(b.numel, lo + b.chunk);
    for (size_t k = 0; k < b.params.size(); ++k) {
      const int64_t start = std::max(lo, b.offsets[k]);
      const int64_t end = std::min(hi, b.offsets[k] + params_[b.params[k]].numel());
      if (start >= end) continue;
      ZeroPiece piece{.param = b.params[k],
                      .bucket = bi,
                      .param_offset = start - b.offsets[k],
                      .length = end - start,
                      .shard_offset = b.shard_offset + start - lo};
      piece.var = Variable(params_[piece.param].data().reshape({-1}).narrow(0, piece.param_offset, piece.length));
      if (stage_ == 2) piece.var.set_grad(shard_grad_.narrow(0, piece.shard_offset, piece.length));
      pieces_.push_back(std::move(piece));
    }
  }
  // The local optimizer numbers its parameters group by group.
  std::stable_sort(pieces_.begin(), pieces_.end(),
                   [&](const ZeroPiece& a, const ZeroPiece& b) { return group_of_[a.param] < group_of_[b.param]; });
  ready_.assign(params_.size(), false);
  pending_.assign(buckets_.size(), 0);
  for (size_t bi = 0; bi < buckets_.size(); ++bi) pending_[bi] = static_cast<int64_t>(buckets_[bi].params.size());
  if (stage_ == 2)
    for (size_t i = 0; i < params_.size(); ++i)
      hook_ids_.push_back(params_[i].register_post_accumulate_grad_hook([this, i](Variable&) { on_grad_ready(i); }));
}

ZeroShards::~ZeroShards() {
  for (size_t i = 0; i < hook_ids_.size(); ++i) params_[i].remove_hook(hook_ids_[i]);
  for (InFlight& f : in_flight_) {
    try {
      f.work->wait();
    } catch (...) {  // a destructor must not throw; the group reports its failure elsewhere
    }
  }
}

std::vector<std::vector<Variable>> ZeroShards::local_groups() const {
  std::vector<std::vector<Variable>> out(num_groups_);
  for (const ZeroPiece& p : pieces_) out[group_of_[p.param]].push_back(p.var);
  return out;
}

void ZeroShards::note_grad_bytes() {
  int64_t bytes = shard_grad_.defined() ? static_cast<int64_t>(shard_grad_.nbytes()) : 0;
  for (const Variable& p : params_)
    if (p.grad().defined()) bytes += static_cast<int64_t>(p.grad().nbytes());
  for (const InFlight& f : in_flight_) bytes += static_cast<int64_t>(f.flat.nbytes() + f.out.nbytes());
  peak_grads_ = std::max(peak_grads_, bytes);
}

void ZeroShards::on_grad_ready(size_t i) {
  DDL_CHECK(!ready_[i], "ZeroRedundancyOptimizer (stage 2): parameter ", i, " of shape ", params_[i].shape(),
            " got its gradient twice before step(): stage 2 keeps only the reduced shard, so gradients cannot "
            "accumulate over several backward passes (use stage 1)");
  ready_[i] = true;
  note_grad_bytes();
  if (--pending_[bucket_of_[i]] > 0) return;
  // Launch strictly in bucket order, so that every rank issues the same collectives.
  while (next_launch_ < buckets_.size() && pending_[next_launch_] == 0) launch_bucket(next_launch_++);
}

// Copies the bucket's gradients, scaled by 1/world as DDP scales them (so that the sums
// match DDP's bit for bit where the order of addition does), into one flat buffer and
// starts its reduce-scatter into this rank's chunk. A parameter without a gradient
// contributes zeros. Stage 2 then drops the parameters' own gradients.
void ZeroShards::launch_bucket(size_t bi) {
  DDL_TRACE_SPAN("zero reduce-scatter", "zero");
  NoGradGuard no_grad;
  const ZeroBucket& b = buckets_[bi];
  const int world = group_->size();
  while (in_flight_.size() >= kMaxInFlight) finish_oldest();
  Tensor flat = zeros({b.chunk * world}, options_);
  for (size_t k = 0; k < b.params.size(); ++k) {
    Variable& p = params_[b.params[k]];
    if (!p.grad().defined()) continue;
    const Tensor slot = flat.narrow(0, b.offsets[k], p.numel());
    slot.copy_(p.grad().reshape({-1}));
    slot.mul_(1.0 / world);
  }
  if (stage_ == 2)
    for (size_t j : b.params) params_[j].zero_grad(/*set_to_none=*/true);
  const Tensor out = stage_ == 2 ? shard_grad_.narrow(0, b.shard_offset, b.chunk) : empty({b.chunk}, options_);
  in_flight_.push_back(
      {group_->reduce_scatter_async(out, flat, ReduceOp::Sum), flat, stage_ == 2 ? Tensor() : out, bi});
  note_grad_bytes();
}

void ZeroShards::finish_oldest() {
  InFlight f = std::move(in_flight_.front());
  in_flight_.erase(in_flight_.begin());
  f.work->wait();
  if (stage_ == 2) return;
  // Stage 1: the averaged chunk goes into this rank's pieces of the parameters' gradients,
  // which the local optimizer reads (the rest of each gradient stays this rank's own).
  NoGradGuard no_grad;
  const ZeroBucket& b = buckets_[f.bucket];
  for (ZeroPiece& piece : pieces_) {
    if (piece.bucket != f.bucket) continue;
    Variable& p = params_[piece.param];
    if (!p.grad().defined())
      p.set_grad(zeros_like(p.data()));
    else if (!p.grad().is_contiguous())
      p.set_grad(p.grad().contiguous());
    const Tensor view = p.grad().reshape({-1}).narrow(0, piece.param_offset, piece.length);
    view.copy_(f.out.narrow(0, piece.shard_offset - b.shard_offset, piece.length));
    piece.var.set_grad(view);
  }
}

void ZeroShards::reduce_gradients() {
  if (reduced_) return;
  DDL_TRACE_SPAN("zero reduce gradients", "zero");
  while (next_launch_ < buckets_.size()) launch_bucket(next_launch_++);
  while (!in_flight_.empty()) finish_oldest();
  // Ready for the next backward.
  next_launch_ = 0;
  std::fill(ready_.begin(), ready_.end(), false);
  for (size_t bi = 0; bi < buckets_.size(); ++bi) pending_[bi] = static_cast<int64_t>(buckets_[bi].params.size());
  reduced_ = true;
}

void ZeroShards::gather_parameters() {
  reduced_ = false;
  // Stage 1's pieces' gradients are views of the parameters' own: let those go with them.
  if (stage_ == 1)
    for (ZeroPiece& piece : pieces_) piece.var.zero_grad(/*set_to_none=*/true);
  DDL_TRACE_SPAN("zero all-gather parameters", "zero");
  NoGradGuard no_grad;
  const int world = group_->size();
  for (size_t bi = 0; bi < buckets_.size(); ++bi) {
    const ZeroBucket& b = buckets_[bi];
    const Tensor mine = zeros({b.chunk}, options_);
    for (const ZeroPiece& p : pieces_)
      if (p.bucket == bi) mine.narrow(0, p.shard_offset - b.shard_offset, p.length).copy_(p.var.data());
    const Tensor all = empty({b.chunk * world}, options_);
    group_->all_gather(all, mine);
    for (size_t k = 0; k < b.params.size(); ++k) {
      const Variable& p = params_[b.params[k]];
      p.data().copy_(all.narrow(0, b.offsets[k], p.numel()).view(p.shape()));
    }
  }
}

ZeroMemory ZeroShards::memory(const optim::Optimizer* local) const {
  ZeroMemory m;
  m.grads = shard_grad_.defined() ? static_cast<int64_t>(shard_grad_.nbytes()) : 0;
  for (const Variable& p : params_) {
    m.params += static_cast<int64_t>(p.data().nbytes());
    if (p.grad().defined()) m.grads += static_cast<int64_t>(p.grad().nbytes());
  }
  m.peak_grads = std::max(peak_grads_, m.grads);
  if (local)
    for (const auto& [name, t] : local->state_tensors()) m.optimizer_state += static_cast<int64_t>(t.nbytes());
  return m;
}

}  // namespace ddl::dist::detail
