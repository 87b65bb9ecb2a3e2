// FullyShardedDataParallel: planning the units, sharding, and the per-step lifecycle
// of gathers and reduce-scatters. Whole state dicts are in fsdp_state.cpp.
#include <algorithm>
#include <chrono>
#include <functional>
#include <set>

#include <ddl/autograd/engine.h>
#include <ddl/autograd/grad_mode.h>
#include <ddl/dist/fsdp/fsdp.h>
#include <ddl/dist/fsdp/fsdp_unit.h>
#include <ddl/nn/forward_hooks.h>
#include <ddl/tensor/core/factory.h>

namespace ddl::dist {

using detail::FsdpUnit;
using State = FsdpUnit::State;

// Note [FSDP unit lifecycle]
// Every unit is Sharded between steps: its GatherBuffer holds no pages and its
// parameters read as [0]. In forward, the unit's pre-hook (nn/forward_hooks.h) waits for
// its all-gather (started here, or earlier as a prefetch), points the parameters at the
// buffer and starts the all-gather of the unit that came next in the last step; the
// post-hook frees the buffer and hooks the unit's output, whose gradient arrives just
// before the unit's own backward nodes run. That hook gathers the unit again, into the
// same addresses, so the tensors autograd saved in forward read the right values (see
// gather_buffer.h), and prefetches the unit that ran before it. When the last of a
// unit's parameter gradients is accumulated, they are copied into one flat buffer scaled
// by 1/N (as DDP does, Note [Buckets] in ddp.cpp) and reduce-scattered asynchronously;
// the unit is freed at once. At the end of backward every reduce-scatter is waited for
// and its slice added to the shard's .grad. The root unit (parameters in no submodule
// unit) is gathered from the start of forward to the end of backward. Every rank issues
// the same collectives in the same order as long as the ranks run the same graph.

namespace {
double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

FullyShardedDataParallel::FullyShardedDataParallel(std::shared_ptr<nn::Module> module,
                                                   std::shared_ptr<ProcessGroup> group, FSDPOptions opts)
    : nn::Module("FullyShardedDataParallel"), module_(std::move(module)), group_(std::move(group)), opts_(opts) {
  DDL_CHECK(module_ != nullptr && group_ != nullptr,
            "FullyShardedDataParallel: a module and a process group are required");
  DDL_CHECK(opts_.min_num_params >= 0, "FullyShardedDataParallel: min_num_params must be >= 0, got ",
            opts_.min_num_params);
  for (const auto& [name, p] : module_->named_parameters()) {
    DDL_CHECK(p.device().is_cpu(), "FullyShardedDataParallel: parameter '", name, "' is on ", p.device(),
              "; only CPU tensors (gloo) are supported");
    DDL_CHECK(p.requires_grad(), "FullyShardedDataParallel: parameter '", name,
              "' does not require grad; frozen parameters cannot share a flat shard with trained ones");
  }
  broadcast_from_rank0();
  plan_units(opts_.min_num_params);
  build_shards();
  install_hooks();
  set_training_flag(module_->is_training());
}

FullyShardedDataParallel::~FullyShardedDataParallel() {
  for (int id : forward_hook_ids_) nn::remove_forward_hook(id);
  for (auto& u : units_)
    for (size_t i = 0; i < u->params.size() && i < u->grad_hook_ids.size(); ++i)
      u->params[i].remove_hook(u->grad_hook_ids[i]);
}

void FullyShardedDataParallel::broadcast_from_rank0() {
  NoGradGuard no_grad;
  for (const auto& [name, v] : module_->named_state()) group_->broadcast(v.data(), 0);
}

void FullyShardedDataParallel::plan_units(int64_t min_num_params) {
  const auto all = module_->named_parameters();
  std::vector<bool> claimed(all.size(), false);
  std::set<const nn::Module*> hooked;  // modules a container runs through run_forward_hooked
  for (const auto& m : module_->modules())
    for (const auto& c : nn::hooked_children(*m)) hooked.insert(c.get());

  std::vector<std::unique_ptr<FsdpUnit>> subs;
  auto make_unit = [&](const std::string& name, std::shared_ptr<nn::Module> m, const std::vector<size_t>& mine) {
    auto u = std::make_unique<FsdpUnit>();
    u->name = name;
    u->module = std::move(m);
    for (size_t i : mine) {
      claimed[i] = true;
      u->names.push_back(all[i].first);
      u->params.push_back(all[i].second);
    }
    return u;
  };
  // Deepest first, as size_based_auto_wrap_policy: a child's leftovers count for its parent.
  std::function<void(const std::shared_ptr<nn::Module>&, const std::string&)> visit =
      [&](const std::shared_ptr<nn::Module>& m, const std::string& path) {
        for (const auto& [name, c] : m->named_children()) {
          const std::string cpath = path.empty() ? name : path + "." + name;
          visit(c, cpath);
          if (!hooked.count(c.get())) continue;
          std::vector<size_t> mine;
          int64_t count = 0;
          for (size_t i = 0; i < all.size(); ++i)
            if (!claimed[i] && all[i].first.rfind(cpath + ".", 0) == 0) {
              mine.push_back(i);
              count += all[i].second.numel();
            }
          if (!mine.empty() && count >= min_num_params) subs.push_back(make_unit(cpath, c, mine));
        }
      };
  visit(module_, "");
  std::vector<size_t> rest;
  for (size_t i = 0; i < all.size(); ++i)
    if (!claimed[i]) rest.push_back(i);
  units_.push_back(make_unit("", nullptr, rest));  // the root unit is unit 0
  for (auto& u : subs) units_.push_back(std::move(u));
}

void FullyShardedDataParallel::build_shards() {
  NoGradGuard no_grad;
  const int world = group_->size(), rank = group_->rank();
  for (size_t k = 0; k < units_.size(); ++k) {
    FsdpUnit& u = *units_[k];
    u.world = world;
    FSDPUnitInfo info{u.name, u.names, 0, 0};
    for (size_t i = 0; i < u.params.size(); ++i) {
      const Variable& p = u.params[i];
      DDL_CHECK(p.dtype() == u.params[0].dtype(), "FullyShardedDataParallel: unit '", u.name, "' mixes dtypes (",
                u.names[0], " is ", u.params[0].dtype(), ", ", u.names[i], " is ", p.dtype(), ")");
      u.offsets.push_back(u.numel);
      u.shape_of.push_back(p.shape());
      u.numel_of.push_back(p.numel());
      u.numel += p.numel();
    }
    if (!u.params.empty()) {
      u.dtype = u.params[0].dtype();
      u.shard_numel = (u.numel + world - 1) / world;
      const Tensor flat = zeros({u.padded()}, TensorOptions().dtype(u.dtype));
      for (size_t i = 0; i < u.params.size(); ++i) u.slot(flat, i).copy_(u.params[i].data());
      u.shard = register_parameter("flat_param_" + std::to_string(k),
                                   flat.narrow(0, rank * u.shard_numel, u.shard_numel).clone());
      u.buffer = std::make_unique<detail::GatherBuffer>(u.padded(), u.dtype);
      for (auto& p : u.params) p.set_data(empty({0}, TensorOptions().dtype(u.dtype)));
    }
    info.numel = u.numel;
    info.shard_numel = u.shard_numel;
    infos_.push_back(std::move(info));
  }
}

void FullyShardedDataParallel::install_hooks() {
  for (size_t k = 0; k < units_.size(); ++k) {
    FsdpUnit& u = *units_[k];
    if (k > 0)
      forward_hook_ids_.push_back(nn::add_forward_hook(
          u.module, {.pre = [this, k](nn::Module&) { pre_forward(k); },
                     .post = [this, k](nn::Module&, Variable out) { return post_forward(k, std::move(out)); }}));
    for (auto& p : u.params)
      u.grad_hook_ids.push_back(p.register_post_accumulate_grad_hook([this, k](Variable&) { on_grad_ready(k); }));
  }
}

void FullyShardedDataParallel::train(bool on) {
  nn::Module::train(on);
  module_->train(on);
}

int64_t FullyShardedDataParallel::gathered_resident_bytes() const {
  int64_t total = 0;
  for (const auto& u : units_)
    if (u->buffer) total += u->buffer->resident_bytes();
  return total;
}

// ---- gathering and freeing ----

void FullyShardedDataParallel::start_gather(size_t k) {
  FsdpUnit& u = *units_[k];
  if (u.state != State::Sharded || !u.buffer) return;
  const Tensor& out = u.buffer->writable();
  if (group_->size() == 1)
    out.copy_(u.shard.data());
  else
    u.gather = group_->all_gather_async(out, u.shard.data());
  u.state = State::Gathering;
  ++stats_.all_gathers;
  gathered_bytes_ += u.buffer->nbytes();
  stats_.peak_gathered_bytes = std::max(stats_.peak_gathered_bytes, gathered_bytes_);
}

void FullyShardedDataParallel::finish_gather(size_t k, double& wait_ms) {
  FsdpUnit& u = *units_[k];
  if (!u.buffer) return;
  start_gather(k);
  if (u.state == State::Gathering) {
    const auto t0 = std::chrono::steady_clock::now();
    if (u.gather) u.gather->wait();
    u.gather = nullptr;
    wait_ms += ms_since(t0);
    u.state = State::Gathered;
  }
  for (size_t i = 0; i < u.params.size(); ++i) u.params[i].set_data(u.slot(u.buffer->tensor(), i));
}

void FullyShardedDataParallel::release(size_t k) {
  FsdpUnit& u = *units_[k];
  if (!u.buffer || u.state == State::Sharded) return;
  if (u.gather) u.gather->wait();  // a prefetch nobody used: the buffer must be idle before freeing
  u.gather = nullptr;
  u.buffer->release();
  for (auto& p : u.params) p.set_data(empty({0}, TensorOptions().dtype(u.dtype)));
  u.state = State::Sharded;
  gathered_bytes_ -= u.buffer->nbytes();
}

// ---- forward ----

Variable FullyShardedDataParallel::forward(const Variable& x) {
  DDL_CHECK(!in_backward_, "FullyShardedDataParallel: forward called while a backward is still in progress");
  order_.clear();
  stats_.last_forward_wait_ms = 0;
  for (auto& u : units_) {
    u->pending = u->params.size();
    u->reduced = false;
  }
  finish_gather(0, stats_.last_forward_wait_ms);
  if (opts_.forward_prefetch && !last_order_.empty() && units_[last_order_[0]]->state == State::Sharded) {
    start_gather(last_order_[0]);
    ++stats_.prefetches;
  }
  in_forward_ = true;
  Variable out;
  try {
    out = module_->forward(x);
  } catch (...) {
    in_forward_ = false;
    throw;
  }
  in_forward_ = false;
  for (size_t k = 1; k < units_.size(); ++k) release(k);  // prefetched, then not run this step
  last_order_ = order_;
  if (!is_grad_enabled() || !out.requires_grad()) {
    release(0);
    return out;
  }
  out.register_hook([this](const Tensor&) { begin_backward(); });
  return out;
}

void FullyShardedDataParallel::pre_forward(size_t k) {
  if (!in_forward_) return;  // the wrapped module called alone (evaluation after summon_full_params)
  order_.push_back(k);
  finish_gather(k, stats_.last_forward_wait_ms);
  const size_t next = order_.size();
  if (opts_.forward_prefetch && next < last_order_.size() && last_order_[next] != k &&
      units_[last_order_[next]]->state == State::Sharded) {
    start_gather(last_order_[next]);
    ++stats_.prefetches;
  }
}

Variable FullyShardedDataParallel::post_forward(size_t k, Variable out) {
  if (!in_forward_) return out;
  release(k);
  if (is_grad_enabled() && out.defined() && out.requires_grad())
    out.register_hook([this, k](const Tensor&) { pre_backward(k); });
  return out;
}

// ---- backward ----

void FullyShardedDataParallel::begin_backward() {
  if (in_backward_) return;
  in_backward_ = true;
  stats_.last_backward_wait_ms = 0;
  autograd::queue_callback([this] { finish_backward(); });
}

void FullyShardedDataParallel::pre_backward(size_t k) {
  begin_backward();
  if (units_[k]->reduced) return;
  finish_gather(k, stats_.last_backward_wait_ms);
  if (!opts_.backward_prefetch) return;
  // The unit that ran just before this one in forward runs just after it in backward.
  const auto it = std::find(order_.rbegin(), order_.rend(), k);
  for (auto j = it; j != order_.rend(); ++j) {
    if (*j == k) continue;
    FsdpUnit& prev = *units_[*j];
    if (!prev.reduced && prev.state == State::Sharded) {
      start_gather(*j);
      ++stats_.prefetches;
    }
    break;
  }
}

void FullyShardedDataParallel::on_grad_ready(size_t k) {
  begin_backward();
  FsdpUnit& u = *units_[k];
  DDL_CHECK(u.state == State::Gathered, "FullyShardedDataParallel: unit '", u.name,
            "' ran its backward without its parameters gathered: its output must be the result of its forward,"
            " and its parameters used only inside it");
  DDL_CHECK(u.pending > 0, "FullyShardedDataParallel: unit '", u.name, "' got more gradients than it has parameters");
  if (--u.pending == 0) reduce_scatter(k);
}

void FullyShardedDataParallel::reduce_scatter(size_t k) {
  NoGradGuard no_grad;
  FsdpUnit& u = *units_[k];
  u.reduced = true;
  if (!u.buffer) return;
  // A parameter without a gradient (unused this step) contributes zeros.
  u.rs_input = zeros({u.padded()}, TensorOptions().dtype(u.dtype));
  for (size_t i = 0; i < u.params.size(); ++i) {
    Variable& p = u.params[i];
    if (!p.grad().defined()) continue;
    u.slot(u.rs_input, i).copy_(p.grad());
    p.zero_grad(true);
  }
  u.rs_input.mul_(1.0 / group_->size());
  u.rs_output = empty({u.shard_numel}, TensorOptions().dtype(u.dtype));
  if (group_->size() == 1)
    u.rs_output.copy_(u.rs_input);
  else
    u.rs_work = group_->reduce_scatter_async(u.rs_output, u.rs_input, ReduceOp::Sum);
  ++stats_.reduce_scatters;
  if (k > 0) release(k);
}

void FullyShardedDataParallel::finish_backward() {
  NoGradGuard no_grad;
  // Units whose parameters got no gradient at all, in unit order on every rank.
  for (size_t k = 0; k < units_.size(); ++k)
    if (!units_[k]->reduced) reduce_scatter(k);
  const auto t0 = std::chrono::steady_clock::now();
  for (auto& u : units_) {
    if (!u->buffer) continue;
    if (u->rs_work) u->rs_work->wait();
    if (u->shard.grad().defined())
      u->shard.grad().add_(u->rs_output);
    else
      u->shard.set_grad(u->rs_output);
    u->rs_work = nullptr;
    u->rs_input = Tensor();
    u->rs_output = Tensor();
  }
  stats_.last_backward_wait_ms += ms_since(t0);
  for (size_t k = 0; k < units_.size(); ++k) release(k);
  in_backward_ = false;
}

}  // namespace ddl::dist
