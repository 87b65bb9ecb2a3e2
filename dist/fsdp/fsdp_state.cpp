// FSDP's whole (unsharded) state: gathered into one state dict under the wrapped
// module's own names, saved from rank 0, and cut back into slices at any world size
// (PyTorch FSDP's FULL_STATE_DICT). Also summon_full_params.
#include <map>
#include <set>

#include <ddl/autograd/grad_mode.h>
#include <ddl/dist/fsdp/fsdp.h>
#include <ddl/dist/fsdp/fsdp_unit.h>
#include <ddl/nn/safetensors.h>
#include <ddl/tensor/core/factory.h>

namespace ddl::dist {

using detail::FsdpUnit;

Tensor FullyShardedDataParallel::gather_whole(size_t k) {
  const FsdpUnit& u = *units_[k];
  const Tensor full = empty({u.padded()}, TensorOptions().dtype(u.dtype));
  if (group_->size() == 1)
    full.copy_(u.shard.data());
  else
    group_->all_gather(full, u.shard.data());
  return full;
}

std::vector<std::pair<std::string, Tensor>> FullyShardedDataParallel::full_state_dict() {
  DDL_CHECK(!in_backward_, "FullyShardedDataParallel::full_state_dict: called during backward");
  NoGradGuard no_grad;
  std::map<std::string, Tensor> params;
  for (size_t k = 0; k < units_.size(); ++k) {
    const FsdpUnit& u = *units_[k];
    if (!u.buffer) continue;
    const Tensor full = gather_whole(k);
    for (size_t i = 0; i < u.params.size(); ++i) params[u.names[i]] = u.slot(full, i).clone();
  }
  std::vector<std::pair<std::string, Tensor>> out;
  for (const auto& [name, v] : module_->named_parameters()) out.emplace_back(name, params.at(name));
  for (const auto& [name, b] : module_->named_buffers()) out.emplace_back(name, b.data().clone());
  return out;
}

void FullyShardedDataParallel::save_full_state(const std::string& path) {
  const auto state = full_state_dict();
  if (group_->rank() == 0) nn::save_safetensors(path, state);
  group_->barrier();  // the file is whole before any rank goes on (and perhaps reads it)
}

void FullyShardedDataParallel::load_full_state_dict(const std::vector<std::pair<std::string, Tensor>>& state) {
  DDL_CHECK(!in_backward_, "FullyShardedDataParallel::load_full_state_dict: called during backward");
  NoGradGuard no_grad;
  std::map<std::string, Tensor> by_name;
  for (const auto& [name, t] : state) by_name[name] = t;
  auto find = [&](const std::string& name, const Shape& shape) {
    const auto it = by_name.find(name);
    DDL_CHECK(it != by_name.end(), "FullyShardedDataParallel::load_full_state_dict: '", name,
              "' is missing from the state dict");
    DDL_CHECK(it->second.shape() == shape, "FullyShardedDataParallel::load_full_state_dict: '", name, "' has shape ",
              it->second.shape(), ", the module's is ", shape);
    return it->second;
  };
  // Check everything before writing anything.
  for (const auto& u : units_)
    for (size_t i = 0; i < u->params.size(); ++i) find(u->names[i], u->shape_of[i]);
  for (const auto& [name, b] : module_->named_buffers()) find(name, b.shape());

  const int rank = group_->rank();
  for (size_t k = 0; k < units_.size(); ++k) {
    FsdpUnit& u = *units_[k];
    if (!u.buffer) continue;
    DDL_CHECK(u.state == FsdpUnit::State::Sharded,
              "FullyShardedDataParallel::load_full_state_dict: called inside a step");
    const Tensor flat = zeros({u.padded()}, TensorOptions().dtype(u.dtype));
    for (size_t i = 0; i < u.params.size(); ++i) u.slot(flat, i).copy_(find(u.names[i], u.shape_of[i]));
    u.shard.data().copy_(flat.narrow(0, rank * u.shard_numel, u.shard_numel));
    for (auto& p : u.params) p.set_data(empty({0}, TensorOptions().dtype(u.dtype)));  // drop summoned copies
  }
  for (const auto& [name, b] : module_->named_buffers()) b.data().copy_(find(name, b.shape()));
}

void FullyShardedDataParallel::load_full_state(const std::string& path) {
  load_full_state_dict(nn::load_safetensors(path).tensors);
}

void FullyShardedDataParallel::summon_full_params() {
  DDL_CHECK(!in_backward_, "FullyShardedDataParallel::summon_full_params: called during backward");
  NoGradGuard no_grad;
  for (size_t k = 0; k < units_.size(); ++k) {
    FsdpUnit& u = *units_[k];
    if (!u.buffer) continue;
    const Tensor full = gather_whole(k);
    for (size_t i = 0; i < u.params.size(); ++i) u.params[i].set_data(u.slot(full, i));
  }
}

}  // namespace ddl::dist
