// DistributedDataParallel: buckets, hooks, and the end-of-backward wait.
//
// Note [Buckets]
// Gradients are averaged in a few large all-reduces rather than one per
// parameter. At construction the parameters are assigned, in reverse
// registration order (roughly the order backward produces their gradients),
// to buckets: a small first one (first_bucket_mb) so communication starts
// early, then bucket_cap_mb each. The assignment is fixed, so every rank has
// the same buckets. During backward, the engine's post-accumulate hook of each
// parameter copies its gradient into its slot of the bucket's flat buffer,
// scaled by 1/world in the same pass (Note [Fused scale]); when a bucket's last
// slot is filled the bucket is ready. Ready
// buckets are launched strictly in bucket order (bucket k never before bucket
// k - 1), so all ranks issue the same all-reduces in the same sequence even if
// their gradients arrive in different orders. Launching a bucket calls the
// communication hook on it (dist/hooks/comm_hook.h): by default a sum
// all-reduce of the scaled buffer. The all-reduces run on the process group's worker thread while backward goes on.
// When backward ends, an end-of-backward callback launches what is left (or
// names the parameters that got no gradient), waits for every bucket in bucket
// order (running the steps a hook chained with HookFuture::then, so their
// collectives too come in one order on every rank) and copies the averaged
// values back into each parameter's .grad.
//
// Note [Fused scale]
// Without a registered hook, DDP writes grad · (1/divisor) into the bucket slot in
// one pass over the gradient (the MulScalar kernel Tensor::mul_ runs, with the
// gradient as input and the slot as output) and the default hook only all-reduces.
// Copying and then scaling the whole bucket, as hooks::allreduce_hook does, reads
// and writes the bucket twice for the same bits: x · s is one rounding either way.
// PyTorch's reducer does the same (reducer.cpp, mark_variable_ready_dense:
// at::mul_out(bucket_view, grad, 1/div_factor) when no comm hook is registered).
// A registered hook gets the gradients undivided, as PyTorch's hooks do. Half
// dtypes (computed through float32, Note [Half compute]), a gradient of another
// dtype or device, and integers take copy_ then mul_, the two passes.

// Note [Unused parameters]
// With find_unused_parameters, a parameter that got no gradient on this rank
// fills its slot with its current .grad (scaled), or zeros when it has none,
// as PyTorch's reducer does (mark_variable_ready_dense). The ranks then
// all-reduce one flag per parameter: was it used, in this backward or in a
// no_sync backward since the last synchronised one (its .grad then holds that
// accumulation). A parameter no rank used is globally unused and its .grad is
// left as it was, undefined after zero_grad(), so the optimizer skips it as it
// would in one process; writing zeros would let momentum and weight decay move
// it. One used on some ranks gets the average, with zeros from the others
// (after zero_grad; a .grad left from before counts, as in PyTorch).
// PyTorch: torch/csrc/distributed/c10d/reducer.cpp, "globally unused". PyTorch
// 1.13 does not count no_sync uses and leaves such a .grad un-averaged, different
// on each rank (tests/golden/ddp_unused.py); ddl averages it.
#include <chrono>

#include <ddl/autograd/engine.h>
#include <ddl/dist/ddp/ddp.h>
#include <ddl/dist/ddp/ddp_env.h>
#include <ddl/dist/sync/common.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/kernels/elementwise_kernel.h>
#include <ddl/trace/trace.h>

namespace ddl::dist {

namespace {
// The default hook once the gradients are scaled in their buckets: the sum all-reduce.
CommHook prescaled_allreduce_hook() {
  return [](GradBucket& b) { return HookFuture(b.buffer, b.group->all_reduce_async(b.buffer, ReduceOp::Sum)); };
}
}  // namespace

DistributedDataParallel::DistributedDataParallel(std::shared_ptr<nn::Module> module,
                                                 std::shared_ptr<ProcessGroup> group, DDPOptions opts)
    : nn::Module("DistributedDataParallel"),
      module_(std::move(module)),
      group_(std::move(group)),
      opts_(opts),
      hook_(prescaled_allreduce_hook()) {
  DDL_CHECK(module_ != nullptr && group_ != nullptr, "DistributedDataParallel: module and process group are required");
  for (auto [name, mb] :
       {std::pair{"bucket_cap_mb", opts_.bucket_cap_mb}, {"first_bucket_mb", opts_.first_bucket_mb}}) {
    const std::string problem = bucket_mb_problem(std::string("DistributedDataParallel: ") + name, mb);
    DDL_CHECK(problem.empty(), problem, ", got ", mb);
  }
  divisor_ = group_->size();
  register_module("module", module_);
  for (auto& [name, p] : module_->named_parameters())
    if (p.requires_grad()) {
      params_.push_back(p);
      names_.push_back(name);
    }
  DDL_CHECK(!params_.empty(), "DistributedDataParallel: the module has no parameters that require grad");

  // Identical replicas: rank 0's parameters and buffers everywhere.
  std::vector<Tensor> state;
  for (auto& [n, v] : module_->named_state()) state.push_back(v.data());
  broadcast_coalesced(state);

  build_buckets(opts);
  ready_.assign(params_.size(), false);
  used_since_sync_.assign(params_.size(), false);
  for (size_t i = 0; i < params_.size(); ++i)
    hook_ids_.push_back(params_[i].register_post_accumulate_grad_hook([this, i](Variable&) { on_grad_ready(i); }));
}

DistributedDataParallel::~DistributedDataParallel() {
  for (size_t i = 0; i < params_.size(); ++i) params_[i].remove_hook(hook_ids_[i]);
}

void DistributedDataParallel::build_buckets(const DDPOptions& opts) {
  bucket_of_.assign(params_.size(), 0);
  offset_of_.assign(params_.size(), 0);
  const auto cap_bytes = [&](size_t bucket) {
    return static_cast<int64_t>((bucket == 0 ? opts.first_bucket_mb : opts.bucket_cap_mb) * 1024 * 1024);
  };
  std::vector<std::vector<size_t>> groups(1);
  int64_t bytes = 0;
  DType dtype = params_.back().dtype();
  for (size_t k = params_.size(); k-- > 0;) {
    const Variable& p = params_[k];
    const int64_t b = p.numel() * static_cast<int64_t>(dtype_size(p.dtype()));
    // A bucket holds one dtype; start a new one when full or the dtype changes.
    if (!groups.back().empty() && (bytes + b > cap_bytes(groups.size() - 1) || p.dtype() != dtype)) {
      groups.emplace_back();
      bytes = 0;
    }
    dtype = p.dtype();
    groups.back().push_back(k);
    bytes += b;
  }
  for (auto& g : groups) {
    auto bucket = std::make_unique<Bucket>();
    int64_t numel = 0;
    for (size_t k : g) {
      bucket_of_[k] = buckets_.size();
      offset_of_[k] = numel;
      numel += params_[k].numel();
    }
    bucket->flat = zeros({numel}, TensorOptions(params_[g.front()].dtype(), params_[g.front()].device()));
    bucket->params = g;
    for (size_t k : g)
      bucket->views.push_back(bucket->flat.narrow(0, offset_of_[k], params_[k].numel()).view(params_[k].shape()));
    stats_.bucket_bytes.push_back(static_cast<int64_t>(bucket->flat.nbytes()));
    stats_.bucket_params.push_back(g.size());
    bucket_trace_names_.push_back(trace::intern("bucket " + std::to_string(buckets_.size())));
    buckets_.push_back(std::move(bucket));
  }
}

void DistributedDataParallel::register_comm_hook(CommHook hook) {
  DDL_CHECK(hook != nullptr, "DistributedDataParallel.register_comm_hook: the hook is empty");
  DDL_CHECK(!hook_registered_, "DistributedDataParallel.register_comm_hook: a hook is registered already (once only)");
  DDL_CHECK(stats_.synced_steps == 0 && !in_backward_,
            "DistributedDataParallel.register_comm_hook: register the hook before the first backward");
  hook_ = std::move(hook);
  hook_registered_ = true;
}

GradBucket DistributedDataParallel::grad_bucket(size_t k) const {
  const Bucket& b = *buckets_[k];
  GradBucket gb;
  gb.index = k;
  gb.is_last = k + 1 == buckets_.size();
  gb.buffer = b.flat;
  gb.gradients = b.views;
  for (size_t i : b.params) gb.parameters.push_back(params_[i]);
  gb.divisor = divisor_;
  gb.group = group_.get();
  return gb;
}

Variable DistributedDataParallel::forward(const Variable& x) {
  in_backward_ = false;  // a backward that failed half-way must not leave stale state
  stats_.last_broadcast_ms = 0;
  divisor_ = group_->size();
  if (join_enabled_)
    join_pre_forward();  // See Note [Join divisor] in ddp_join.cpp
  else if (opts_.broadcast_buffers && is_training() && group_->size() > 1)
    broadcast_buffers(0);
  return module_->forward(x);
}

void DistributedDataParallel::broadcast_buffers(int root) {
  std::vector<Tensor> buffers;
  for (auto& [n, v] : module_->named_buffers()) buffers.push_back(v.data());
  // Timed so that callers can count it as communication, not as forward compute.
  const auto start = std::chrono::steady_clock::now();
  DDL_TRACE_SPAN("broadcast buffers", "ddp");
  broadcast_coalesced(buffers, root);
  stats_.last_broadcast_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  stats_.total_broadcast_ms += stats_.last_broadcast_ms;
}

void DistributedDataParallel::on_grad_ready(size_t i) {
  used_since_sync_[i] = true;  // See Note [Unused parameters]
  if (!sync_) return;
  const auto start = std::chrono::steady_clock::now();
  if (!in_backward_) {
    // First gradient of this backward: reset the per-step state and arrange the final wait.
    in_backward_ = true;
    stats_.last_fill_ms = 0;
    next_launch_ = 0;
    std::fill(ready_.begin(), ready_.end(), false);
    for (auto& b : buckets_) b->pending = b->params.size(), b->future.reset();
    autograd::queue_callback([this] { finish_backward(); });
  }
  DDL_CHECK(!ready_[i], "DistributedDataParallel: parameter '", names_[i], "' got its gradient twice in one backward");
  ready_[i] = true;
  trace::instant("grad ready", "ddp", {{"param", static_cast<int64_t>(i)}, {"bucket", int64_t(bucket_of_[i])}});
  Bucket& b = *buckets_[bucket_of_[i]];
  fill_slot(b.flat.narrow(0, offset_of_[i], params_[i].numel()).view(params_[i].shape()), params_[i].grad());
  --b.pending;
  launch_ready_buckets();
  stats_.last_fill_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

void DistributedDataParallel::fill_slot(const Tensor& slot, const Tensor& grad) {
  // See Note [Fused scale].
  if (hook_registered_) {
    slot.copy_(grad);
    return;
  }
  if ((slot.dtype() == DType::Float32 || slot.dtype() == DType::Float64) && grad.dtype() == slot.dtype() &&
      grad.device() == slot.device() && grad.shape() == slot.shape()) {
    kernels::unary_kernel(slot.device())(UnaryOp::MulScalar, slot, grad, 1.0 / divisor_, 0);
    return;
  }
  slot.copy_(grad);
  slot.mul_(1.0 / divisor_);
}

void DistributedDataParallel::launch_ready_buckets() {
  while (next_launch_ < buckets_.size() && buckets_[next_launch_]->pending == 0) {
    const size_t k = next_launch_++;
    Bucket& b = *buckets_[k];
    const bool traced = trace::enabled();
    const int64_t bytes = static_cast<int64_t>(b.flat.nbytes());
    const uint64_t id = traced ? ++trace_launches_ : 0;
    if (traced) [[unlikely]] {
      // Launch to completion as an async span: it overlaps the rest of backward.
      trace::instant("bucket launch", "ddp", {{"bucket", static_cast<int64_t>(k)}, {"bytes", bytes}});
      trace::async_begin(bucket_trace_names_[k], "ddp", id, {{"bucket", static_cast<int64_t>(k)}, {"bytes", bytes}});
    }
    GradBucket view = grad_bucket(k);
    b.future = hook_(view);
    if (traced && b.future->work()) [[unlikely]]
      b.future->work()->on_completion([name = bucket_trace_names_[k], id, bytes](Work&) {
        trace::async_end(name, "ddp", id, {{"bytes", bytes}});
      });
  }
}

void DistributedDataParallel::finish_backward() {
  in_backward_ = false;
  overlapped_buckets_ = next_launch_;  // launched from gradient hooks, while backward ran
  // Parameters that got no gradient: an error naming them, or (find_unused_parameters) the
  // gradient they hold, else zeros. See Note [Unused parameters].
  std::string missing;
  for (size_t i = 0; i < params_.size(); ++i) {
    if (ready_[i]) continue;
    if (!opts_.find_unused_parameters) {
      missing += (missing.empty() ? "" : ", ") + names_[i];
      continue;
    }
    Bucket& b = *buckets_[bucket_of_[i]];
    const Tensor slot = b.flat.narrow(0, offset_of_[i], params_[i].numel()).view(params_[i].shape());
    if (params_[i].grad().defined())
      fill_slot(slot, params_[i].grad());
    else
      slot.zero_();
    --b.pending;
  }
  DDL_CHECK(missing.empty(), group_->log_prefix(),
            " DistributedDataParallel: these parameters got no gradient in this "
            "backward pass: ",
            missing, ". Use them in forward, or set find_unused_parameters = true");
  launch_ready_buckets();
  // After every bucket, so that all ranks issue the same collectives in the same order.
  Tensor used;
  std::shared_ptr<Work> used_work;
  if (opts_.find_unused_parameters) {
    std::vector<int32_t> flags(params_.size());
    for (size_t i = 0; i < params_.size(); ++i) flags[i] = used_since_sync_[i] ? 1 : 0;
    used = from_vector(flags).to(buckets_.front()->flat.device());
    used_work = group_->all_reduce_async(used, ReduceOp::Sum);
  }

  const auto start = std::chrono::steady_clock::now();
  {
    DDL_TRACE_SPAN("wait for buckets", "ddp");
    for (size_t k = 0; k < buckets_.size(); ++k) {
      Bucket& b = *buckets_[k];
      const Tensor averaged = b.future->wait();
      DDL_CHECK(averaged.defined() && averaged.numel() == b.flat.numel(), "DistributedDataParallel: the comm hook ",
                "returned ", averaged.defined() ? averaged.shape() : Shape{}, " for bucket ", k, " of ", b.flat.shape(),
                "; expected the averaged bucket, shaped as GradBucket::buffer");
      if (!averaged.shares_storage(b.flat) || averaged.offset() != b.flat.offset())
        b.flat.copy_(averaged.reshape({-1}));
    }
    if (used_work) used_work->wait();
  }
  stats_.last_wait_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  stats_.total_wait_ms += stats_.last_wait_ms;
  ++stats_.synced_steps;

  const std::vector<int32_t> users =
      used.defined() ? to_vector<int32_t>(used.to(Device::cpu())) : std::vector<int32_t>{};
  std::fill(used_since_sync_.begin(), used_since_sync_.end(), false);
  for (size_t i = 0; i < params_.size(); ++i) {
    if (!users.empty() && users[i] == 0) continue;  // globally unused: .grad as it was
    const Bucket& b = *buckets_[bucket_of_[i]];
    const Tensor slot = b.flat.narrow(0, offset_of_[i], params_[i].numel()).view(params_[i].shape());
    if (params_[i].grad().defined())
      params_[i].grad().copy_(slot);
    else
      params_[i].set_grad(slot.clone());
  }
}

void DistributedDataParallel::broadcast_coalesced(const std::vector<Tensor>& tensors, int root) {
  if (group_->size() == 1 || tensors.empty()) return;
  // One broadcast per dtype instead of one per tensor.
  detail::coalesced(tensors, [&](const Tensor& flat) { group_->broadcast(flat, root); });
}

}  // namespace ddl::dist
