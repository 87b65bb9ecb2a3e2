// Optimizer state between its two forms: sharded (each rank's local optimizer holds the
// state of its pieces, named by piece) and whole (named and shaped as one process stepping
// every parameter would hold it: "state.<parameter index>.<field>"). The whole form is what
// checkpoints hold, so one can be resumed at any world size, or by a single process.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include <ddl/autograd/grad_mode.h>
#include <ddl/dist/zero/zero_shards.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/trace/trace.h>

namespace ddl::dist::detail {

namespace {

constexpr int64_t kFieldListBytes = 1024;

// "state.<index>.<field>" → (index, field); false for any other name.
bool parse_state_name(const std::string& name, size_t& index, std::string& field) {
  if (name.rfind("state.", 0) != 0) return false;
  const char* first = name.data() + 6;
  const auto [end, ec] = std::from_chars(first, name.data() + name.size(), index);
  if (ec != std::errc() || end == first || *end != '.') return false;
  field = std::string(end + 1, name.data() + name.size());
  return true;
}

// Every rank's state fields, so that all ranks gather the same ones (a rank whose pieces
// hold no state yet still takes part). Each field is sent as "name:s" (a scalar, such as
// Adam's step count) or "name:e" (one value per element), ';'-separated.
// These small exchanges are built on the host and sent from the parameters' device (nccl
// takes CUDA tensors only).
std::map<std::string, bool> agreed_fields(ProcessGroup& group, const std::map<std::string, bool>& mine, Device device) {
  std::string text;
  for (const auto& [f, scalar] : mine) text += f + (scalar ? ":s;" : ":e;");
  DDL_CHECK(static_cast<int64_t>(text.size()) < kFieldListBytes,
            "ZeroRedundancyOptimizer: the optimizer's state "
            "field names take ",
            text.size(), " bytes, more than ", kFieldListBytes);
  const Tensor in = zeros({kFieldListBytes}, DType::UInt8);
  std::copy(text.begin(), text.end(), in.data<uint8_t>());
  const Tensor sent = in.to(device),
               gathered = zeros({kFieldListBytes * group.size()}, TensorOptions(DType::UInt8, device));
  group.all_gather(gathered, sent);
  const Tensor all = gathered.to(Device::cpu());
  std::map<std::string, bool> fields;
  for (int r = 0; r < group.size(); ++r) {
    const char* row = reinterpret_cast<const char*>(all.data<uint8_t>()) + r * kFieldListBytes;
    std::string list(row, strnlen(row, kFieldListBytes));
    for (size_t start = 0; start < list.size();) {
      const size_t end = list.find(';', start);
      const std::string item = list.substr(start, end - start);
      fields[item.substr(0, item.size() - 2)] = item.back() == 's';
      start = end + 1;
    }
  }
  return fields;
}

}  // namespace

std::vector<std::pair<std::string, Tensor>> ZeroShards::whole_state(const optim::Optimizer& local, int to_rank) {
  DDL_TRACE_SPAN("zero consolidate state", "zero");
  NoGradGuard no_grad;
  DDL_CHECK(to_rank < group_->size(), "consolidate_state_dict: to_rank ", to_rank, " is not a rank of this ",
            group_->size(), "-rank group");
  // This rank's state by piece and field.
  std::vector<std::map<std::string, Tensor>> piece_state(pieces_.size());
  std::map<std::string, bool> mine;
  for (const auto& [name, t] : local.state_tensors()) {
    size_t i = 0;
    std::string field;
    DDL_ASSERT(parse_state_name(name, i, field) && i < pieces_.size(), "unexpected local state ", name);
    piece_state[i][field] = t;
    mine[field] = t.dim() == 0;
  }
  const std::map<std::string, bool> fields = agreed_fields(*group_, mine, options_.device());
  const bool receiver = to_rank < 0 || group_->rank() == to_rank;
  std::vector<std::pair<std::string, Tensor>> whole;
  const int world = group_->size();
  for (const auto& [field, scalar] : fields) {
    if (scalar) {
      // One value per parameter, from any rank owning a piece of it (they agree): the
      // maximum over ranks, with -inf where a rank owns no piece.
      Tensor v = full({static_cast<int64_t>(params_.size())}, -std::numeric_limits<double>::infinity(), DType::Float64);
      DType dtype = DType::Float64;
      for (size_t i = 0; i < pieces_.size(); ++i)
        if (auto it = piece_state[i].find(field); it != piece_state[i].end()) {
          v.data<double>()[pieces_[i].param] = it->second.item();
          dtype = it->second.dtype();
        }
      const Tensor sent = v.to(options_.device());
      group_->all_reduce(sent, ReduceOp::Max);
      v = sent.to(Device::cpu());
      if (!receiver) continue;
      for (size_t k = 0; k < params_.size(); ++k)
        if (std::isfinite(v.data<double>()[k]))
          whole.emplace_back("state." + std::to_string(k) + "." + field,
                             full({}, v.data<double>()[k], DType::Float64).to(dtype));
      continue;
    }
    for (size_t bi = 0; bi < buckets_.size(); ++bi) {
      const ZeroBucket& b = buckets_[bi];
      const Tensor chunk = zeros({b.chunk}, options_);
      for (size_t i = 0; i < pieces_.size(); ++i)
        if (pieces_[i].bucket == bi)
          if (auto it = piece_state[i].find(field); it != piece_state[i].end())
            chunk.narrow(0, pieces_[i].shard_offset - b.shard_offset, pieces_[i].length).copy_(it->second);
      const Tensor all = receiver ? empty({b.chunk * world}, options_) : Tensor();
      if (to_rank < 0)
        group_->all_gather(all, chunk);
      else
        group_->gather(all, chunk, to_rank);
      if (!receiver) continue;
      for (size_t k = 0; k < b.params.size(); ++k) {
        const Variable& p = params_[b.params[k]];
        whole.emplace_back("state." + std::to_string(b.params[k]) + "." + field,
                           all.narrow(0, b.offsets[k], p.numel()).view(p.shape()).clone());
      }
    }
  }
  // The order one process's state_tensors() has: by parameter index, then field name.
  std::stable_sort(whole.begin(), whole.end(), [](const auto& a, const auto& b) {
    size_t ia = 0, ib = 0;
    std::string fa, fb;
    parse_state_name(a.first, ia, fa);
    parse_state_name(b.first, ib, fb);
    return ia != ib ? ia < ib : fa < fb;
  });
  return whole;
}

void ZeroShards::load_whole_state(optim::Optimizer& local, const std::vector<std::pair<std::string, Tensor>>& whole) {
  NoGradGuard no_grad;
  std::map<size_t, std::map<std::string, Tensor>> by_param;
  for (const auto& [name, t] : whole) {
    size_t k = 0;
    std::string field;
    DDL_CHECK(parse_state_name(name, k, field) && k < params_.size(), "ZeroRedundancyOptimizer: load state: '", name,
              "' is not the state of one of the ", params_.size(), " parameters");
    DDL_CHECK(t.numel() == 1 || t.numel() == params_[k].numel(), "ZeroRedundancyOptimizer: load state: '", name,
              "' has shape ", t.shape(), " but parameter ", k, " is ", params_[k].shape());
    by_param[k][field] = t;
  }
  std::vector<std::pair<std::string, Tensor>> shard;
  for (size_t i = 0; i < pieces_.size(); ++i) {
    const ZeroPiece& piece = pieces_[i];
    auto it = by_param.find(piece.param);
    if (it == by_param.end()) continue;
    for (const auto& [field, t] : it->second) {
      const Tensor part =
          t.dim() == 0 ? t.clone() : t.contiguous().reshape({-1}).narrow(0, piece.param_offset, piece.length).clone();
      shard.emplace_back("state." + std::to_string(i) + "." + field, part);
    }
  }
  local.load_state(shard, local.state_metadata());
}

}  // namespace ddl::dist::detail
