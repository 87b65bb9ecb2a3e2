// FSDP's optimizer state whole: the per-shard state of an optimizer over the flat shards,
// gathered and cut into the wrapped module's parameters (as one process holds it, and as a
// snapshot stores it, so it resumes at any world size), and cut back into shards. Per-element
// state lies in a shard exactly as the parameters do (flat, padded, rank r's slice), so the
// same offsets serve both. See docs/fsdp.md, "Checkpoints".
#include <charconv>
#include <map>

#include <ddl/dist/fsdp/fsdp.h>
#include <ddl/dist/fsdp/fsdp_unit.h>
#include <ddl/tensor/core/factory.h>

namespace ddl::dist {

namespace {

// "state.<index>.<field>" -> {index, field}; a ddl::Error for any other name.
std::pair<size_t, std::string> split_state_name(const std::string& name, const char* op) {
  size_t index = 0;
  const size_t dot = name.find('.', 6);
  const char* first = name.data() + 6;
  const auto [end, ec] = std::from_chars(first, name.data() + (dot == std::string::npos ? name.size() : dot), index);
  DDL_CHECK(name.rfind("state.", 0) == 0 && dot != std::string::npos && ec == std::errc() && end == name.data() + dot,
            op, ": '", name, "' is not an optimizer state name (state.<index>.<field>)");
  return {index, name.substr(dot + 1)};
}

bool is_scalar(const Tensor& t) { return t.dim() == 0; }  // Optimizer's step counters

}  // namespace

std::vector<std::pair<std::string, Tensor>> FullyShardedDataParallel::full_optim_state(
    const std::vector<std::pair<std::string, Tensor>>& sharded) {
  const char* op = "FullyShardedDataParallel::full_optim_state";
  DDL_CHECK(!in_backward_, op, ": called during backward");
  std::map<size_t, std::map<std::string, Tensor>> by_shard;
  for (const auto& [name, t] : sharded) {
    auto [j, field] = split_state_name(name, op);
    by_shard[j][field] = t;
  }
  std::map<std::string, size_t> index_of;  // parameter name -> its place in module()->parameters()
  for (const auto& [name, p] : module_->named_parameters()) index_of.emplace(name, index_of.size());
  std::vector<std::pair<std::string, Tensor>> out;
  size_t j = 0;  // the shard's index among parameters()
  for (const auto& unit : units_) {
    const detail::FsdpUnit& u = *unit;
    if (!u.buffer) continue;
    // Every rank holds the same fields for its slice of a unit (the same steps ran), so the
    // all-gathers below line up across ranks.
    for (const auto& [field, t] : by_shard[j]) {
      if (is_scalar(t)) {
        for (const auto& name : u.names)
          out.emplace_back("state." + std::to_string(index_of.at(name)) + "." + field, t.clone());
        continue;
      }
      DDL_CHECK(t.numel() == u.shard_numel, op, ": state '", field, "' of shard ", j, " has ", t.numel(),
                " elements, the shard ", u.shard_numel);
      const Tensor full = empty({u.padded()}, TensorOptions().dtype(t.dtype()));
      if (group_->size() == 1)
        full.copy_(t.reshape({u.shard_numel}));
      else
        group_->all_gather(full, t.contiguous().reshape({u.shard_numel}));
      for (size_t i = 0; i < u.names.size(); ++i)
        out.emplace_back("state." + std::to_string(index_of.at(u.names[i])) + "." + field, u.slot(full, i).clone());
    }
    ++j;
  }
  return out;
}

std::vector<std::pair<std::string, Tensor>> FullyShardedDataParallel::shard_optim_state(
    const std::vector<std::pair<std::string, Tensor>>& whole) const {
  const char* op = "FullyShardedDataParallel::shard_optim_state";
  std::map<size_t, std::map<std::string, Tensor>> by_param;
  for (const auto& [name, t] : whole) {
    auto [i, field] = split_state_name(name, op);
    by_param[i][field] = t;
  }
  std::map<std::string, size_t> index_of;
  for (const auto& [name, p] : module_->named_parameters()) index_of.emplace(name, index_of.size());
  const int rank = group_->rank();
  std::vector<std::pair<std::string, Tensor>> out;
  size_t j = 0;
  for (const auto& unit : units_) {
    const detail::FsdpUnit& u = *unit;
    if (!u.buffer) continue;
    std::map<std::string, Tensor> fields;  // the fields any of the unit's parameters holds
    for (const auto& name : u.names)
      for (const auto& [field, t] : by_param[index_of.at(name)]) fields.emplace(field, t);
    for (const auto& [field, sample] : fields) {
      Tensor shard;
      if (is_scalar(sample)) {
        shard = sample.clone();
      } else {
        const Tensor flat = zeros({u.padded()}, TensorOptions().dtype(sample.dtype()));
        for (size_t i = 0; i < u.names.size(); ++i) {
          auto it = by_param[index_of.at(u.names[i])].find(field);
          if (it == by_param[index_of.at(u.names[i])].end()) continue;  // no state yet: zeros
          DDL_CHECK(it->second.numel() == u.numel_of[i], op, ": state '", field, "' of '", u.names[i], "' has ",
                    it->second.numel(), " elements, the parameter ", u.numel_of[i]);
          u.slot(flat, i).copy_(it->second.reshape(u.shape_of[i]).to(sample.dtype()));
        }
        shard = flat.narrow(0, rank * u.shard_numel, u.shard_numel).clone();
      }
      out.emplace_back("state." + std::to_string(j) + "." + field, shard);
    }
    ++j;
  }
  return out;
}

}  // namespace ddl::dist
